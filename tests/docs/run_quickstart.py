#!/usr/bin/env python3
"""docs.quickstart.<flow>: the shell and CMake blocks of docs/quickstart.md, run as written.

quickstart.md marks its blocks with an HTML comment right before the fence,
`<!-- docs.quickstart: ROLE -->`. Every ```sh block must carry one: either a role this test
runs, or `not run (why)`. The roles:

  train.cpp          the first program: myproject/train.cpp
  CMakeLists.txt     myproject/CMakeLists.txt (the find_package version)
  fetchcontent       the lines that replace its find_package line for FetchContent
  add_subdirectory   the same for add_subdirectory
  install            sh, run in the directory holding devmesh/ and myproject/
  tarball            sh, idem (the archive FetchContent fetches, by a file:// URL)
  build              sh, idem: configure, build and run on 8 ranks under mpirun
  examples           sh, run in the clone

A flow lays out a fresh directory as the page says (devmesh/ is a copy of this source tree's
CMakeLists.txt, cmake/, include/ and examples/, which is what those commands read; HOME is a
fresh directory, so "$HOME/.local" is empty, or --home's) and runs the blocks with bash -e:

  install           install (into --home's .local: the fixture devmesh_installed, which the
                    find_package flow, the package tests and the docs' snippets build against),
                    then checks that the package's files are there
  find_package      build, with --home where the install flow installed
  fetchcontent      tarball, then build (nothing installed)
  add_subdirectory  devmesh/ copied to myproject/third_party/devmesh, then build
  examples          examples

README.md may repeat blocks under the same markers; each copy must equal the page's block.

The build block's mpirun must print the lines of the page's <!-- output --> block (in any
order). As root, the run exports OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1,
which the page gives as the alternative to --allow-run-as-root; as a normal user, nothing.

Usage: run_quickstart.py FLOW --docs ROOT --work DIR [--home DIR] [--cxx CXX] [--cmake CMAKE]
"""
import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mdblocks import blocks  # noqa: E402

RUN_ROLES = {"install", "tarball", "build", "examples"}
FILE_ROLES = {"train.cpp", "CMakeLists.txt", "fetchcontent", "add_subdirectory"}
FLOWS = {
    "install": (None, ["install"]),
    "find_package": ("CMakeLists.txt", ["build"]),
    "fetchcontent": ("fetchcontent", ["tarball", "build"]),
    "add_subdirectory": ("add_subdirectory", ["build"]),
    "examples": (None, ["examples"]),
}
FIND_PACKAGE_LINE = "find_package(devmesh 0.1 REQUIRED)"
# What an install must hold (under the prefix), whatever else it does.
INSTALLED = ["include/devmesh/devmesh.hpp", "include/devmesh/core/mesh.hpp", "include/devmesh/src.hpp",
             "lib/libdevmesh-runtime.a", "lib/cmake/devmesh/devmesh-config.cmake",
             "lib/cmake/devmesh/devmesh-config-version.cmake", "lib/cmake/devmesh/devmesh-targets.cmake",
             "lib/cmake/devmesh/devmesh_mpi.cmake", "lib/cmake/devmesh/devmesh_nccl.cmake"]
TIMEOUT = 1200


def die(msg):
    print(f"docs.quickstart: {msg}")
    sys.exit(1)


def page_roles(path, root):
    roles, output = {}, None
    page = blocks(path, root)
    for i, b in enumerate(page):
        role = None
        if b.marker and b.marker.startswith("docs.quickstart:"):
            role = b.marker.split(":", 1)[1].strip()
        if b.lang == "sh":
            if role is None:
                die(f"{b.where}: a shell block without <!-- docs.quickstart: ROLE --> "
                    "(a role this test runs, or 'not run (why)')")
            if role.startswith("not run"):
                continue
            if role not in RUN_ROLES:
                die(f"{b.where}: unknown role '{role}' for a shell block")
        elif role is not None and role not in FILE_ROLES:
            die(f"{b.where}: unknown role '{role}'")
        if role is not None:
            if role in roles:
                die(f"{b.where}: role '{role}' given twice")
            roles[role] = b
        if b.marker == "output" and i > 0 and page[i - 1] is roles.get("train.cpp"):
            output = b.code
    missing = (RUN_ROLES | FILE_ROLES) - roles.keys()
    if missing:
        die(f"quickstart.md lacks the block(s) {', '.join(sorted(missing))}")
    if output is None:
        die("quickstart.md lacks the <!-- output --> block right after the first program")
    return roles, output


def check_copies(path, root, roles):
    """The README repeats some of the page's blocks under the same markers: each such copy must
    be the page's block verbatim, so that this test, which runs the page's, covers it too."""
    for b in blocks(path, root):
        if not (b.marker and b.marker.startswith("docs.quickstart:")):
            continue
        role = b.marker.split(":", 1)[1].strip()
        if role.startswith("not run"):
            continue
        if role not in roles:
            die(f"{b.where}: role '{role}' is not a block of docs/quickstart.md")
        if b.code != roles[role].code:
            die(f"{b.where}: differs from {roles[role].where}, the block it repeats (role '{role}')")


def copy_clone(src, dst):
    os.makedirs(dst)
    shutil.copy(os.path.join(src, "CMakeLists.txt"), dst)
    for d in ("cmake", "include", "examples"):
        shutil.copytree(os.path.join(src, d), os.path.join(dst, d))


def run_block(block, cwd, env):
    print(f"---- {block.where}, in {cwd}:\n{block.code}----", flush=True)
    res = subprocess.run(["bash", "-e", "-x", "-c", block.code], cwd=cwd, env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)
    print(res.stdout, flush=True)
    if res.returncode != 0:
        die(f"{block.where} failed (exit code {res.returncode}) as written")
    return res.stdout


def main():
    p = argparse.ArgumentParser()
    p.add_argument("flow", choices=sorted(FLOWS))
    p.add_argument("--docs", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--home")
    p.add_argument("--cxx")
    p.add_argument("--cmake")
    a = p.parse_args()
    root = os.path.abspath(a.docs)
    roles, output = page_roles(os.path.join(root, "docs", "quickstart.md"), root)
    check_copies(os.path.join(root, "README.md"), root, roles)
    cmakelists_role, steps = FLOWS[a.flow]

    work = os.path.abspath(os.path.join(a.work, a.flow))
    shutil.rmtree(work, ignore_errors=True)
    home = os.path.abspath(a.home) if a.home else os.path.join(work, "home")
    if a.flow == "install":
        shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home, exist_ok=True)
    copy_clone(root, os.path.join(work, "devmesh"))
    project = os.path.join(work, "myproject")
    os.makedirs(project)
    with open(os.path.join(project, "train.cpp"), "w") as f:
        f.write(roles["train.cpp"].code)
    if cmakelists_role:
        text = roles["CMakeLists.txt"].code
        if text.count(FIND_PACKAGE_LINE) != 1:
            die(f"{roles['CMakeLists.txt'].where} has no line '{FIND_PACKAGE_LINE}' to replace")
        if cmakelists_role != "CMakeLists.txt":
            text = text.replace(FIND_PACKAGE_LINE, roles[cmakelists_role].code.rstrip("\n"))
        with open(os.path.join(project, "CMakeLists.txt"), "w") as f:
            f.write(text)
        print(f"---- myproject/CMakeLists.txt:\n{text}----")
    if a.flow == "add_subdirectory":
        copy_clone(root, os.path.join(project, "third_party", "devmesh"))

    env = {k: v for k, v in os.environ.items()
           if k not in ("CMAKE_PREFIX_PATH", "devmesh_DIR", "CMAKE_GENERATOR", "MAKEFLAGS")}
    env["HOME"] = home
    if a.cxx:
        env["CXX"] = a.cxx
    if a.cmake:
        env["PATH"] = os.path.dirname(os.path.abspath(a.cmake)) + os.pathsep + env.get("PATH", "")
    if os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"

    for step in steps:
        out = run_block(roles[step], os.path.join(work, "devmesh") if step == "examples" else work, env)
        if step == "build":
            expected = output.strip().splitlines()
            got = [line for line in out.splitlines() if line in expected]
            if sorted(got) != sorted(expected):
                die(f"mpirun did not print the lines of the <!-- output --> block after "
                    f"{roles['train.cpp'].where} (in any order); it printed:\n" + "\n".join(got))
            print("docs.quickstart: the program printed what the page says")
    if a.flow == "install":
        lacking = [f for f in INSTALLED if not os.path.exists(os.path.join(home, ".local", f))]
        if lacking:
            die(f"the install lacks {', '.join(lacking)} under {os.path.join(home, '.local')}")
    print(f"docs.quickstart: {a.flow}: every block ran as written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
