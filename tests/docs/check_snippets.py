#!/usr/bin/env python3
"""docs.snippets: every C++ block of README.md and docs/*.md compiles as a reader types it.

A C++ block is written ```cpp (other spellings, ```c++ ```cxx ```cc ```cu, are refused, so no
block can slip past this check) and is one of:

- **whole** (```cpp): compiled exactly as written, as its own translation unit: nothing is
  added before it (only a #line directive, for messages) and no other block is pasted in. It is
  built in a CMake project that links devmesh::devmesh and, when the block uses a backend,
  devmesh::mpi and/or devmesh::nccl, as the docs tell users to; warnings are errors (FLAGS:
  -Wall -Wextra -Werror, unused variables aside). A block with `int main(` is a *program*: also linked, then run (below); the
  others are parsed only (-fsyntax-only, templates instantiated: what a compile would report).
- **fragment** (```cpp fragment): a piece that cannot stand alone. It is compiled after
  PRELUDE (the umbrella header, standard headers, `namespace dm`, the literals), so it cannot
  go stale either. Fragments must stay few and honest: the check fails if more than
  MAX_FRAGMENT_SHARE of the C++ blocks are fragments, if a fragment has a `main` or starts with
  an #include, or if it compiles as written (then it is whole: drop the tag).
- **compile-error** (```cpp compile-error): a deliberate misuse. It must fail to compile as
  written, and its errors must be devmesh's diagnostics, the rule of the compile-fail tests
  (tests/compile_fail/run_case.sh, docs/errors.md): the first error's message is devmesh's
  text ("devmesh: ..." right after `error:` or a failed static_assert's own words), and so is
  every error after it. An unrelated error that names a devmesh type (`devmesh::mesh<...>`)
  is not one.

Programs are run after linking: without a backend directly; with MPI under
`mpiexec -n 8` (every program in the docs is an 8-rank mesh), plus `--oversubscribe` and, as
root, `--allow-run-as-root` with OpenMPI; NCCL programs are built but not run (they need
GPUs). A ```text block marked `<!-- output -->` right after a program is its expected output:
the same lines, in any order for MPI programs (ranks print concurrently), exactly otherwise.

Usage: check_snippets.py --docs ROOT --work DIR --cmake CMAKE --generator GEN --cxx CXX
       [--source DEVMESH_SOURCE | --prefix INSTALLED_DEVMESH] [--mpiexec MPIEXEC]
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mdblocks import blocks, doc_files, same_lines  # noqa: E402

MAX_FRAGMENT_SHARE = 0.2  # at most one C++ block in five may be a fragment
MPI_RANKS = 8
RUN_TIMEOUT = 120
CPP_SPELLINGS = {"c++", "cxx", "cc", "cu", "cuda", "hpp", "h", "c", "cplusplus"}
TAGS = {"fragment", "compile-error"}
# Unused variables are allowed: blocks bind results to show their types.
FLAGS = "-Wall -Wextra -Werror -Wno-unused-variable -Wno-unused-but-set-variable"
# An error line ("file:12:3: error: ...", "file(12): error: ...", "error #123-D: ..."), and
# devmesh's diagnostic: the error's message is devmesh's text, as g++ (`static assertion
# failed: devmesh: ...`), clang (`static_assert failed due to requirement '...' "devmesh: ..."`)
# and nvcc (`static assertion failed with "devmesh: ..."`) print a failed static_assert's, or
# an error of its own (`error: devmesh: ...`). The same rule as tests/compile_fail/run_case.sh.
ERROR_LINE = re.compile(r": (fatal )?error( #[0-9A-Za-z-]+)?:")
DEVMESH_DIAGNOSTIC = re.compile(ERROR_LINE.pattern + r" (static assertion failed(: | with \")|"
                                r"static_assert failed( due to requirement .*)? \")?devmesh: ")


def compile_error_problem(log):
    """Why a compile-error block's compiler output breaks the rule, or None."""
    errors = [line for line in log.splitlines() if ERROR_LINE.search(line)]
    if not errors:
        return "the compiler printed no error line"
    if not DEVMESH_DIAGNOSTIC.search(errors[0]):
        return f"its first error is not a devmesh: diagnostic: {errors[0]}"
    other = next((line for line in errors if not DEVMESH_DIAGNOSTIC.search(line)), None)
    if other is not None:
        return f"an error that is not a devmesh: diagnostic follows it: {other}"
    return None

# The compiler launcher that only parses (-fsyntax-only) and leaves an empty object behind.
SYNTAX_ONLY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "syntax_only.sh")

PRELUDE = """#include <devmesh/devmesh.hpp>
#include <algorithm>
#include <array>
#include <cstdio>
#include <iostream>
#include <optional>
#include <ranges>
#include <span>
#include <vector>
namespace dm = devmesh;
using namespace dm::literals;
"""


def backends(code):
    uses = []
    if re.search(r"\bdm::mpi\b|\bdevmesh::mpi\b|init_device_mesh|from_comms|\bMPI_|device_mesh<", code):
        uses.append("mpi")
    if re.search(r"\bdm::nccl\b|\bdevmesh::nccl\b|cudaStream_t|\bcuda[A-Z]\w*\(", code):
        uses.append("nccl")
    return uses


def is_program(code):
    return re.search(r"\bint\s+main\s*\(", code) is not None


def target_name(block, suffix=""):
    return re.sub(r"[^A-Za-z0-9]", "_", block.rel) + f"_L{block.line}" + suffix


class Checker:
    def __init__(self, args):
        self.a = args
        self.failures = []
        self.project = os.path.join(args.work, "project")
        self.build = os.path.join(args.work, "build")
        self.out = os.path.join(self.build, "out")

    def fail(self, where, msg):
        self.failures.append(where)
        print(f"FAILED: {where}: {msg}")

    # ---- classification --------------------------------------------------------------------
    def collect(self):
        items = []  # (block, kind)
        for path in doc_files(self.a.docs):
            page = blocks(path, self.a.docs)
            for i, b in enumerate(page):
                if b.lang in CPP_SPELLINGS or b.lang.lower() in CPP_SPELLINGS:
                    self.fail(b.where, f"a C++ block is written ```{b.lang}: write ```cpp "
                                       "(```cpp fragment / ```cpp compile-error for the exceptions)")
                    continue
                if b.lang == "text" and b.marker == "output":
                    prev = page[i - 1] if i > 0 else None
                    if prev is None or prev.lang != "cpp" or prev.tags or not is_program(prev.code):
                        self.fail(b.where, "an <!-- output --> block must come right after a program's block")
                    continue
                if b.lang != "cpp":
                    continue
                unknown = [t for t in b.tags if t not in TAGS]
                if unknown or len(b.tags) > 1:
                    self.fail(b.where, f"unknown info string 'cpp {' '.join(b.tags)}' "
                                       "(cpp, cpp fragment or cpp compile-error)")
                    continue
                output = None
                if i + 1 < len(page) and page[i + 1].lang == "text" and page[i + 1].marker == "output":
                    output = page[i + 1].code
                items.append((b, b.tags[0] if b.tags else "whole", output))
        return items

    # ---- the CMake project -----------------------------------------------------------------
    def write_if_changed(self, path, text):
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            with open(path, "w") as f:
                f.write(text)

    def generate(self, items):
        src = os.path.join(self.project, "src")
        os.makedirs(src, exist_ok=True)
        lines = [
            "cmake_minimum_required(VERSION 3.25)",
            "project(devmesh_doc_snippets LANGUAGES CXX)",
            # An installed devmesh (--prefix: docs.quickstart.install's, as the docs' find_package
            # users have it) spares this project a build of the compiled runtime of its own.
            "find_package(devmesh 0.1 REQUIRED)" if self.a.prefix else
            f'add_subdirectory("{self.a.source}" devmesh)',
            'file(WRITE "${CMAKE_BINARY_DIR}/backends.txt" "")',
            'foreach(b mpi nccl)',
            '  if(TARGET devmesh::${b})',
            '    file(APPEND "${CMAKE_BINARY_DIR}/backends.txt" "${b}\\n")',
            '  endif()',
            'endforeach()',
            'set(CMAKE_RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/out")',
            'set(CMAKE_ARCHIVE_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/out")',
            "function(snippet name kind src)  # kind: exe, lib, or try (built on its own, may fail)",
            '  if(kind STREQUAL "exe")',
            "    add_executable(${name} ${src})",
            "  else()",
            '    if(kind STREQUAL "lib")',
            "      add_library(${name} STATIC ${src})",
            "    else()",
            "      add_library(${name} STATIC EXCLUDE_FROM_ALL ${src})",
            "    endif()",
            # A block that is no program is only compiled: parsing it (templates instantiated)
            # finds what compiling it would, at about half the cost (the header checks' launcher).
            f'    set_target_properties(${{name}} PROPERTIES CXX_COMPILER_LAUNCHER "{SYNTAX_ONLY}")',
            "  endif()",
            "  target_link_libraries(${name} PRIVATE devmesh::devmesh ${ARGN})",
            f"  target_compile_options(${{name}} PRIVATE {FLAGS})",
            "endfunction()",
        ]
        self.targets = []  # (block, kind, name, role, uses, output)
        for b, kind, output in items:
            uses = backends(b.code)
            verbatim = f'#line {b.first_code_line} "{b.rel}"\n' + b.code
            plan = []
            if kind == "whole":
                plan.append(("exe" if is_program(b.code) else "lib", "", verbatim, "whole"))
            elif kind == "fragment":
                plan.append(("lib", "_fragment", PRELUDE + verbatim, "fragment"))
                plan.append(("try", "_as_written", verbatim, "fragment-as-written"))
            else:
                plan.append(("try", "", verbatim, "compile-error"))
            for tkind, suffix, text, role in plan:
                name = target_name(b, suffix)
                self.write_if_changed(os.path.join(src, name + ".cpp"), text)
                links = " ".join(f"devmesh::{u}" for u in uses)
                cond = " AND ".join(f"TARGET devmesh::{u}" for u in uses) or "TRUE"
                lines += [f"if({cond})", f"  snippet({name} {tkind} src/{name}.cpp {links})", "endif()"]
                self.targets.append((b, tkind, name, role, uses, output))
        self.write_if_changed(os.path.join(self.project, "CMakeLists.txt"), "\n".join(lines) + "\n")

    def run(self, cmd, **kw):
        return subprocess.run(cmd, capture_output=True, text=True, **kw)

    def configure_and_build(self):
        res = self.run([self.a.cmake, "-S", self.project, "-B", self.build, "-G", self.a.generator,
                        f"-DCMAKE_CXX_COMPILER={self.a.cxx}", "--no-warn-unused-cli"]
                       + ([f"-Ddevmesh_DIR={self.a.prefix}/lib/cmake/devmesh"] if self.a.prefix else []))
        if res.returncode != 0:
            print(res.stdout[-4000:], res.stderr[-4000:])
            self.fail("docs.snippets", "configuring the snippets' CMake project failed")
            return False
        self.available = set(open(os.path.join(self.build, "backends.txt")).read().split())
        if os.path.isdir(self.out):
            for f in os.listdir(self.out):
                os.remove(os.path.join(self.out, f))
        keep_going = {"Unix Makefiles": ["--", "-k"], "Ninja": ["--", "-k", "0"]}.get(self.a.generator, [])
        self.run([self.a.cmake, "--build", self.build, "-j", "2"] + keep_going)
        return True

    def built(self, name, tkind):
        return os.path.exists(os.path.join(self.out, name if tkind == "exe" else f"lib{name}.a"))

    def build_alone(self, name):
        res = self.run([self.a.cmake, "--build", self.build, "--target", name])
        return res.returncode, res.stdout + res.stderr

    # ---- running programs --------------------------------------------------------------------
    def launcher(self):
        if not self.a.mpiexec:
            return None
        cmd = [self.a.mpiexec, "-n", str(MPI_RANKS)]
        version = self.run([self.a.mpiexec, "--version"]).stdout
        if "Open MPI" in version or "OpenRTE" in version:
            cmd.append("--oversubscribe")
            if os.geteuid() == 0:
                cmd.append("--allow-run-as-root")
        return cmd

    def run_program(self, b, name, uses, output):
        exe = os.path.join(self.out, name)
        if "nccl" in uses:
            print(f"ok: {b.where} (built; not run: an NCCL program needs GPUs)")
            return
        cmd = [exe]
        if "mpi" in uses:
            launcher = self.launcher()
            if launcher is None:
                print(f"ok: {b.where} (built; not run: no mpiexec)")
                return
            cmd = launcher + [exe]
        try:
            res = self.run(cmd, timeout=RUN_TIMEOUT, cwd=self.a.work)
        except subprocess.TimeoutExpired:
            self.fail(b.where, f"'{' '.join(cmd)}' did not finish within {RUN_TIMEOUT} s")
            return
        if res.returncode != 0:
            self.fail(b.where, f"'{' '.join(cmd)}' exited with {res.returncode}:\n"
                               f"{res.stdout[-2000:]}{res.stderr[-2000:]}")
            return
        if output is not None:
            same = same_lines(res.stdout, output) if "mpi" in uses else res.stdout == output
            if not same:
                self.fail(b.where, f"the program's output differs from the <!-- output --> block "
                                   f"after it.\n--- printed:\n{res.stdout}--- the docs say:\n{output}")
                return
        ran = " ".join(os.path.basename(c) if c == exe else c for c in cmd)
        print(f"ok: {b.where} (ran: {ran}{', output as documented' if output is not None else ''})")

    # ---- the check -----------------------------------------------------------------------------
    def check(self):
        items = self.collect()
        cpp = len(items)
        fragments = [b for b, kind, _ in items if kind == "fragment"]
        for b in fragments:
            if is_program(b.code) or b.code.lstrip().startswith("#include"):
                self.fail(b.where, "marked fragment, but it is a whole program (it has main or "
                                   "starts with #include): drop the tag and make it compile as written")
        if cpp and len(fragments) > MAX_FRAGMENT_SHARE * cpp:
            self.fail("docs", f"{len(fragments)} of {cpp} C++ blocks are fragments; at most "
                              f"{int(MAX_FRAGMENT_SHARE * 100)}% may be: make blocks whole")
        if cpp == 0:
            self.fail("docs", "no C++ block found")
            return self.report(cpp, fragments)
        self.generate(items)
        if not self.configure_and_build():
            return self.report(cpp, fragments)
        programs = 0
        for b, tkind, name, role, uses, output in self.targets:
            missing = [u for u in uses if u not in self.available]
            if missing:
                print(f"skipped: {b.where} (this build has no devmesh::{', devmesh::'.join(missing)})")
                continue
            if role in ("whole", "fragment"):
                if self.built(name, tkind):
                    if tkind == "exe":
                        programs += 1
                        self.run_program(b, name, uses, output)
                    else:
                        print(f"ok: {b.where}" + (" (fragment, after the prelude)" if role == "fragment" else ""))
                else:
                    rc, log = self.build_alone(name)
                    what = "does not compile as written" if role == "whole" else "does not compile even after the prelude"
                    self.fail(b.where, f"{what}{' or link' if tkind == 'exe' else ''} "
                                       f"(linked: {' '.join(['devmesh::devmesh'] + ['devmesh::' + u for u in uses])}):\n{log[-4000:]}")
            elif role == "fragment-as-written":
                rc, log = self.build_alone(name)
                if rc == 0:
                    self.fail(b.where, "marked fragment, but it compiles as written: it is whole, drop the tag")
            else:  # compile-error
                rc, log = self.build_alone(name)
                problem = compile_error_problem(log)
                if rc == 0:
                    self.fail(b.where, "marked compile-error, but it compiles")
                elif problem:
                    self.fail(b.where, f"marked compile-error, but {problem}\n{log[-3000:]}")
                else:
                    print(f"ok: {b.where} (fails to compile with devmesh's diagnostics only, as intended)")
        return self.report(cpp, fragments, programs)

    def report(self, cpp, fragments, programs=0):
        print(f"{cpp} C++ blocks ({len(fragments)} fragments, {programs} programs built); "
              f"{len(self.failures)} failure(s)")
        return 1 if self.failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", required=True, help="the tree holding README.md and docs/")
    p.add_argument("--source", help="devmesh's source tree (default: --docs)")
    p.add_argument("--prefix", help="an installed devmesh to find_package (default: --source, added "
                   "with add_subdirectory)")
    p.add_argument("--work", required=True)
    p.add_argument("--cmake", default="cmake")
    p.add_argument("--generator", default="Unix Makefiles")
    p.add_argument("--cxx", default="c++")
    p.add_argument("--mpiexec", default="")
    a = p.parse_args()
    a.docs = os.path.abspath(a.docs)
    a.source = os.path.abspath(a.source or a.docs)
    a.work = os.path.abspath(a.work)
    os.makedirs(a.work, exist_ok=True)
    return Checker(a).check()


if __name__ == "__main__":
    sys.exit(main())
