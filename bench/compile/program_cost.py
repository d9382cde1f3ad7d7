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
  hand-written bench/compile/programs/train_mpi.cpp: the same program with MPI_Comm_split;
  example      examples/03_hsdp.cu: g++ as C++ with the MPI backend, nvcc with MPI and NCCL
               (as the project's build compiles it: the NCCL path and its CUDA kernel too).
The devmesh programs are compiled at two commits, each with that commit's own headers, program
and examples (`git archive`): --before (default 3331d72, the parent of the runtime-in-rooms
commit 5527e0f, issue 21) and --after (default: the working tree). When the quickstart's text
differs between them, the older text is also compiled against both trees (the headers' share).

--smoke: g++ -fsyntax-only, once, on every program (do they still compile?). Exits 77 (skipped)
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

BEFORE = "3331d72"
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


def commands(trees, same_text, smoke):
    """(program, compiler, tree label) -> command line."""
    mpi = ["-DOMPI_SKIP_MPICXX=1", *mpi_flags()]
    opt = ["-fsyntax-only"] if smoke else ["-O2", "-c", "-o", os.path.join(trees[0][0], "..", "out.o")]
    nvcc = None if smoke else find_nvcc()
    cuda_inc = ["-I/usr/local/cuda/include"] if nvcc else []
    cmds = {("hand-written", "g++", "-"): ["g++", "-std=c++20", *mpi, *opt, os.path.join(HERE, "programs", "train_mpi.cpp")]}
    if nvcc:
        shutil.copy(os.path.join(HERE, "programs", "train_mpi.cpp"), os.path.join(trees[0][0], "..", "train_mpi.cu"))
        cmds[("hand-written", "nvcc", "-")] = [nvcc, "-std=c++20", *mpi, *opt,
                                               os.path.join(trees[0][0], "..", "train_mpi.cu")]
    for d, label in trees:
        inc = [f"-I{d}/include", "-DDEVMESH_WITH_MPI"]
        cmds[("quickstart", "g++", label)] = ["g++", "-std=c++20", *inc, *mpi, *opt, f"{d}/train.cpp"]
        if not same_text:  # the older text against both trees: the headers' share alone
            cmds[("quickstart, older text", "g++", label)] = ["g++", "-std=c++20", *inc, *mpi, *opt,
                                                              f"{trees[0][0]}/train.cpp"]
        cmds[("example", "g++", label)] = ["g++", "-std=c++20", *inc, *mpi, *opt, "-x", "c++", f"{d}/examples/03_hsdp.cu"]
        if nvcc:
            cu = [nvcc, "-std=c++20", "--expt-relaxed-constexpr", *inc, *mpi, *opt]
            cmds[("quickstart", "nvcc", label)] = [*cu, f"{d}/train.cu"]
            if not same_text:
                cmds[("quickstart, older text", "nvcc", label)] = [*cu, f"{trees[0][0]}/train.cu"]
            cmds[("example", "nvcc", label)] = [*cu, "-DDEVMESH_WITH_NCCL", *cuda_inc, f"{d}/examples/03_hsdp.cu"]
    return cmds


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
    trees = [tree(a.before, work), tree(a.after, work)]
    same_text = open(f"{trees[0][0]}/train.cpp").read() == open(f"{trees[1][0]}/train.cpp").read()
    wanted = set(a.compilers.split(","))
    cmds = {k: v for k, v in commands(trees, same_text, a.smoke).items() if k[1] in wanted}
    load = [loadavg()]
    samples = {k: [] for k in cmds}
    for _ in range(1 if a.smoke else a.reps):
        for k, cmd in cmds.items():
            samples[k].append(measure(cmd))
            print(f"{k[0]:12} {k[1]:5} {k[2]:12} {samples[k][-1][1]:6.2f} s CPU", file=sys.stderr)
    load.append(loadavg())
    if a.smoke:
        print("program_cost: every program compiles (g++ -fsyntax-only)")
        return
    cpu = {k: statistics.median(s[1] for s in v) for k, v in samples.items()}
    (_, before), (_, after) = trees
    rows, md = [], []
    for prog in ("quickstart", "quickstart, older text", "example"):
        for c in sorted(wanted):
            if (prog, c, after) not in cpu or (prog, c, before) not in cpu:
                continue
            b, n = cpu[(prog, c, before)], cpu[(prog, c, after)]
            hand = cpu.get(("hand-written", c, "-")) if prog.startswith("quickstart") else None
            rows.append({"program": prog, "compiler": c, "before_s": b, "after_s": n, "hand_written_s": hand,
                         "before": before, "after": after, "reps": a.reps})
            md.append(f"| {prog} | {c} | {b:.2f} s | {n:.2f} s | {n / b:.2f}× | "
                      + (f"{hand:.2f} s | {n / hand:.1f}× |" if hand else "– | – |"))
    header = [f"| program | compiler | before the rooms (`{before}`) | now (`{after}`) | now / before | "
              "hand-written MPI | now / hand-written |", "|---|---|---|---|---|---|---|"]
    notes = [f"CPU time to an object file at `-O2`, median of {a.reps} interleaved repetitions; load "
             f"{load[0]} at start, {load[1]} at end; {version('g++')}; {version(find_nvcc() or 'nvcc')}."]
    if not same_text:
        notes.append(f"The quickstart program changed with the docs between the two commits (`{after}`'s "
                     f"prints the mesh with `dm::rank_nested`, as PyTorch's `print(mesh.mesh)`); \"older text\" "
                     f"is `{before}`'s program compiled against both header trees: the headers' share alone.")
    text = "\n".join(header + md) + "\n\n" + " ".join(notes) + "\n"
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
