#!/usr/bin/env python3
"""bench/compile: the compile time of real programs (issue 23 item 7), where compile_cost.py
measures generated TUs.

  program_cost.py [--before REV] [--after REV] [--reps N] [--compilers g++,nvcc]
                  [--md OUT] [--json OUT] [--work DIR] [--smoke]

Programs, each compiled to an object file at -O2 (CPU time: user + sys, compiler child
processes included; the median of --reps interleaved repetitions):
  quickstart   docs/quickstart.md's train.cpp (the block marked `docs.quickstart: train.cpp`),
               with the MPI backend (-DDEVMESH_WITH_MPI), as the quickstart builds it; nvcc
               compiles the same file as a .cu;
  hand-written bench/compile/programs/train_mpi.cpp: the same program with MPI_Comm_split; and
               the same with the standard headers devmesh's own headers include (from g++ -H):
               the standard library's share of the quickstart's cost;
  example      examples/03_hsdp.cu: g++ as C++ with the MPI backend, nvcc with MPI and NCCL
               (as the project's build compiles it: the NCCL path and its CUDA kernel too).
  library      the compiled mode's <devmesh/src.hpp> in one TU (runtime + MPI; + NCCL), what
               devmesh::mpi / devmesh::nccl build once per build;
  link         the quickstart's object linked with MPI (and the library's object, compiled mode).
The devmesh programs are compiled at two commits, each with that commit's own headers, program
and examples (`git archive`): --before (default ff1d3ed, the last main before the runtime was
compiled once, issue 39) and --after (default: the working tree), each in every mode it has:
header-only (the default) and compiled (-DDEVMESH_SEPARATE_COMPILATION) where
include/devmesh/src.hpp exists. When the quickstart's text differs between them, the older
text is also compiled against every tree (the headers' share).

--smoke: g++ -fsyntax-only, once, on every program of --after's tree in both modes and on the
hand-written ones (do they still compile?); --before's tree is only extracted. Exits 77 (skipped)
where --before is not a commit here (a tarball, a shallow clone).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from compile_cost import find_nvcc, loadavg, measure, mpi_flags, version  # noqa: E402

BEFORE = "ff1d3ed"  # issue 39's baseline: the last main before the runtime was compiled once
MARKER = "<!-- docs.quickstart: train.cpp -->"


def git(*args, binary=False):
    return subprocess.run(["git", "-C", ROOT, *args], check=True, capture_output=True, text=not binary).stdout


def tree(rev, work):
    """REV's include/, examples/ and quickstart program under work/<sha>/ (the working tree's
    when rev is None); returns (dir, label)."""
    if rev is None:
        head = git("rev-parse", "--short=7", "HEAD").strip()
        changed = git("status", "--porcelain", "--", "include", "examples", "docs/quickstart.md").strip()
        dest, label = os.path.join(work, "worktree"), head + (" + changes" if changed else "")
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        for d in ("include", "examples"):
            shutil.copytree(os.path.join(ROOT, d), os.path.join(dest, d))
        os.makedirs(os.path.join(dest, "docs"))
        shutil.copy(os.path.join(ROOT, "docs", "quickstart.md"), os.path.join(dest, "docs"))
    else:
        sha = git("rev-parse", "--verify", f"{rev}^{{commit}}").strip()
        dest, label = os.path.join(work, sha[:12]), sha[:7]
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        archive = git("archive", sha, "include", "examples", "docs/quickstart.md", binary=True)
        subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)
    with open(os.path.join(dest, "docs", "quickstart.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(re.escape(MARKER) + r"\n```cpp\n(.*?)^```", text, re.S | re.M)
    if not m:
        sys.exit(f"program_cost: no train.cpp block ({MARKER}) in {label}'s docs/quickstart.md")
    for ext in ("cpp", "cu"):
        with open(os.path.join(dest, f"train.{ext}"), "w") as f:
            f.write(m.group(1))
    return dest, label


def commands(trees, same_text, smoke, out_dir):
    """(program, compiler, tree label) -> (command line, object file). A tree is (dir, label,
    defines): the compiled mode's tree defines DEVMESH_SEPARATE_COMPILATION."""
    mpi = ["-DOMPI_SKIP_MPICXX=1", *mpi_flags()]
    nvcc = None if smoke else find_nvcc()
    cuda_inc = ["-I/usr/local/cuda/include"] if nvcc else []
    objects = iter(range(10**6))

    def opt():
        if smoke:
            return ["-fsyntax-only"], None
        obj = os.path.join(out_dir, f"o{next(objects)}.o")
        return ["-O2", "-c", "-o", obj], obj

    cmds = {}

    def add(key, argv):
        flags, obj = opt()
        cmds[key] = ([*argv[:-1], *flags, argv[-1]], obj)

    hand = os.path.join(HERE, "programs", "train_mpi.cpp")
    add(("hand-written", "g++", "-"), ["g++", "-std=c++20", *mpi, hand])
    # The hand-written program with the standard headers the last tree's devmesh headers include:
    # the part of the quickstart's cost that is the standard library's, not devmesh's.
    last, _, last_defines = trees[-1]
    std = std_headers_of(["g++", "-std=c++20", f"-I{last}/include", "-DDEVMESH_WITH_MPI", *last_defines, *mpi,
                          f"{last}/train.cpp"])
    hand_std = os.path.join(out_dir, "train_mpi_std.cpp")
    with open(hand_std, "w") as f:
        f.write("".join(f"#include <{h}>\n" for h in std) + open(hand).read())
    add(("hand-written + devmesh's std headers", "g++", "-"), ["g++", "-std=c++20", *mpi, hand_std])
    if nvcc:
        shutil.copy(hand, os.path.join(out_dir, "train_mpi.cu"))
        add(("hand-written", "nvcc", "-"), [nvcc, "-std=c++20", *mpi, os.path.join(out_dir, "train_mpi.cu")])
        shutil.copy(hand_std, os.path.join(out_dir, "train_mpi_std.cu"))
        add(("hand-written + devmesh's std headers", "nvcc", "-"),
            [nvcc, "-std=c++20", *mpi, os.path.join(out_dir, "train_mpi_std.cu")])
    first = trees[0][0]
    for d, label, defines in trees:
        inc = [f"-I{d}/include", "-DDEVMESH_WITH_MPI", *defines]
        add(("quickstart", "g++", label), ["g++", "-std=c++20", *inc, *mpi, f"{d}/train.cpp"])
        if not same_text:  # the older text against both trees: the headers' share alone
            add(("quickstart, older text", "g++", label), ["g++", "-std=c++20", *inc, *mpi, f"{first}/train.cpp"])
        add(("example", "g++", label), ["g++", "-std=c++20", *inc, *mpi, "-x", "c++", f"{d}/examples/03_hsdp.cu"])
        if nvcc:
            cu = [nvcc, "-std=c++20", "--expt-relaxed-constexpr", *inc, *mpi]
            add(("quickstart", "nvcc", label), [*cu, f"{d}/train.cu"])
            if not same_text:
                add(("quickstart, older text", "nvcc", label), [*cu, f"{first}/train.cu"])
            add(("example", "nvcc", label), [*cu, "-DDEVMESH_WITH_NCCL", *cuda_inc, f"{d}/examples/03_hsdp.cu"])
        if defines:  # the compiled mode's library: <devmesh/src.hpp> in one TU, per backend set
            lib = os.path.join(out_dir, "devmesh_lib.cpp")
            with open(lib, "w") as f:
                f.write("#include <devmesh/src.hpp>\n")
            add(("library (runtime + MPI)", "g++", label), ["g++", "-std=c++20", *inc, *mpi, lib])
            if nvcc:
                add(("library (runtime + MPI + NCCL)", "g++", label),
                    ["g++", "-std=c++20", *inc, "-DDEVMESH_WITH_NCCL", *cuda_inc, *mpi, lib])
    return cmds


def std_headers_of(cmd):
    """The standard headers that devmesh's headers include themselves (g++ -H's include tree:
    a standard header whose includer is a file under include/devmesh/), in include order."""
    res = subprocess.run([*cmd, "-fsyntax-only", "-H"], capture_output=True, text=True)
    stack, out = [], []
    for line in res.stderr.splitlines():
        m = re.match(r"^(\.+) (\S+)$", line)
        if not m:
            continue
        depth, path = len(m.group(1)), m.group(2)
        del stack[depth - 1:]
        parent = stack[-1] if stack else ""
        stack.append(path)
        name = os.path.relpath(path, os.path.dirname(path))
        if "/include/devmesh/" in parent and re.search(r"/c\+\+/\d+/[a-z_]+$", path) and name not in out:
            out.append(name)
    return out


def text_bytes(obj):
    """The object's code: `size`'s text column (what the program's link carries)."""
    out = subprocess.run(["size", obj], capture_output=True, text=True).stdout.splitlines()
    return int(out[1].split()[0]) if len(out) > 1 else 0


def link_cmds(cmds, trees):
    """The quickstart linked (g++, MPI): hand-written, and each tree's, with the library's
    object in the compiled mode."""
    link = subprocess.run(["mpicxx", "--showme:link"], capture_output=True, text=True).stdout.split()
    out = {("link", "g++", "-"): ["g++", cmds[("hand-written", "g++", "-")][1], *link, "-o", "/dev/null"]}
    for _, label, defines in trees:
        objs = [cmds[("quickstart", "g++", label)][1]]
        if defines:
            objs.append(cmds[("library (runtime + MPI)", "g++", label)][1])
        out[("link", "g++", label)] = ["g++", *objs, *link, "-o", "/dev/null"]
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", default=BEFORE)
    p.add_argument("--after", default=None, help="a commit (default: the working tree)")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--compilers", default="g++,nvcc")
    p.add_argument("--work", default=None)
    p.add_argument("--md")
    p.add_argument("--json")
    p.add_argument("--smoke", action="store_true")
    a = p.parse_args()
    if subprocess.run(["git", "-C", ROOT, "rev-parse", "--verify", f"{a.before}^{{commit}}"],
                      capture_output=True).returncode != 0:
        print(f"program_cost: SKIPPED: {a.before} is not a commit of {ROOT} (not a git clone, or a shallow one)")
        sys.exit(77)
    work = a.work or tempfile.mkdtemp(prefix="devmesh-program-cost-")
    os.makedirs(work, exist_ok=True)
    (bdir, before), (adir, after) = tree(a.before, work), tree(a.after, work)
    trees = [(bdir, before, [])]
    if not os.path.exists(f"{bdir}/include/devmesh/src.hpp"):
        pass  # before the runtime was compiled once: header-only is its one mode
    else:
        trees = [(bdir, before + " header-only", []), (bdir, before + " compiled", ["-DDEVMESH_SEPARATE_COMPILATION"])]
    trees.append((adir, after + " header-only", []))
    if os.path.exists(f"{adir}/include/devmesh/src.hpp"):
        trees.append((adir, after + " compiled", ["-DDEVMESH_SEPARATE_COMPILATION"]))
    same_text = open(f"{bdir}/train.cpp").read() == open(f"{adir}/train.cpp").read()
    if a.smoke:  # --before's tree is extracted (git archive) but not compiled: the smoke is the programs of now
        trees, same_text = [t for t in trees if t[0] == adir], True
    wanted = set(a.compilers.split(","))
    cmds = {k: v for k, v in commands(trees, same_text, a.smoke, work).items() if k[1] in wanted}
    links = {} if a.smoke or "g++" not in wanted else link_cmds(cmds, trees)
    load = [loadavg()]
    samples = {k: [] for k in [*cmds, *links]}
    for _ in range(1 if a.smoke else a.reps):
        for k, (cmd, _) in cmds.items():
            samples[k].append(measure(cmd))
            print(f"{k[0]:12} {k[1]:5} {k[2]:24} {samples[k][-1][1]:6.2f} s CPU", file=sys.stderr)
        for k, cmd in links.items():
            samples[k].append(measure(cmd))
    load.append(loadavg())
    if a.smoke:
        print("program_cost: every program compiles (g++ -fsyntax-only)")
        return
    cpu = {k: statistics.median(s[1] for s in v) for k, v in samples.items()}
    size = {k: text_bytes(obj) for k, (_, obj) in cmds.items()}
    text = table(cpu, size, trees, wanted, a.reps, load, same_text)
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump([{"program": k[0], "compiler": k[1], "tree": k[2], "cpu_s": v,
                        "text_bytes": size.get(k), "reps": a.reps} for k, v in cpu.items()], f, indent=1)


def table(cpu, size, trees, wanted, reps, load, same_text):
    """One row per program and compiler: each tree's CPU time (and object text), and the
    ratios against the first tree (the baseline) and the hand-written program."""
    base = trees[0][1]
    labels = [t[1] for t in trees]
    header = ["| program | compiler | " + " | ".join(f"`{lb}`" for lb in labels)
              + " | " + " | ".join(f"`{lb}` / `{base}`" for lb in labels[1:]) + " | hand-written | last / hand-written |",
              "|---|---|" + "---|" * (2 * len(labels) - 1) + "---|---|"]
    md = []
    progs = ("hand-written + devmesh's std headers", "quickstart", "quickstart, older text", "example",
             "library (runtime + MPI)",
             "library (runtime + MPI + NCCL)", "link")
    for prog in progs:
        for c in sorted(wanted):
            if prog.startswith("hand-written"):  # no tree: its time, and against the hand-written program
                v, hand = cpu.get((prog, c, "-")), cpu.get(("hand-written", c, "-"))
                if v is not None and hand:
                    md.append(f"| {prog} | {c} | " + " | ".join("–" for _ in labels) + " | "
                              + " | ".join("–" for _ in labels[1:]) + f" | {hand:.2f} s | {v / hand:.1f}× ({v:.2f} s) |")
                continue
            row = [cpu.get((prog, c, lb)) for lb in labels]
            if all(v is None for v in row):
                continue
            cells = [f"{v:.2f} s" + (f" ({size[(prog, c, lb)] / 1024:.0f} KB)" if (prog, c, lb) in size else "")
                     if v is not None else "–" for v, lb in zip(row, labels)]
            b = row[0]
            ratios = [f"{v / b:.2f}×" if v is not None and b else "–" for v in row[1:]]
            hand = cpu.get(("hand-written" if prog != "link" else "link", c, "-"))
            last = next((v for v in reversed(row) if v is not None), None)
            tail = f"{hand:.2f} s | {last / hand:.1f}× |" if hand and prog.startswith(("quickstart", "link")) else "– | – |"
            md.append(f"| {prog} | {c} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " | " + tail)
    notes = [f"CPU time (user + sys) to an object file at `-O2` (the link: to an executable), median of {reps} "
             f"interleaved repetitions, with each object's text in KB; load {load[0]} at start, {load[1]} at end; "
             f"{version('g++')}; {version(find_nvcc() or 'nvcc')}. \"compiled\" defines "
             "`DEVMESH_SEPARATE_COMPILATION` (what `devmesh::mpi` passes on); its library rows are "
             "`<devmesh/src.hpp>` in one TU, built once per program's build, and its link includes that object."]
    if not same_text:
        notes.append("The quickstart program changed with the docs between the two commits; \"older text\" "
                     "is the first tree's program compiled against every header tree: the headers' share alone.")
    return "\n".join(header + md) + "\n\n" + " ".join(notes) + "\n"


if __name__ == "__main__":
    main()
