#!/usr/bin/env python3
"""bench/compile: compile cost (CPU time, wall time, peak memory) of the TUs of gen_tus.py.

Two modes, one tool:

One header tree (what bench/run uses; bench/report.py reads its JSON):
  compile_cost.py --include DIR --work DIR [--reps N] [--json OUT] [--smoke]
  Each (compiler, TU) is compiled --reps times under /usr/bin/time -v, interleaved (one round
  over all TUs, then the next) so that load from other processes spreads evenly; the median is
  reported. g++ and nvcc.

Side by side (issue 10: "re-run side by side with fb4ed9d's headers in the same run"):
  compile_cost.py --baseline REV [--new REV | --new-include DIR] [--reps N] [--work DIR]
                  [--compilers g++,nvcc,clang++] [--tus include,include_mpi,meshes10,slices63]
                  [--json OUT] [--md OUT] [--smoke]
  The same generated TUs are compiled against two header trees: REV's include/ (extracted with
  `git archive REV include`) and the new tree (--new REV likewise; default: the working tree's
  include/). Per repetition and compiler: the bare TU once, then every TU against both trees
  back to back, the order alternating (A B, then B A) so that load drift hits both alike.
  "Extra" = median CPU time (user + sys, compiler children included) of the TU minus the median
  of the bare TU under the same compiler. Prints a markdown table (TU, compiler, baseline extra,
  new extra, ratio), the machine load (/proc/loadavg) at start and end, and issue 10's verdicts.
  --smoke: g++ -fsyntax-only, once, on the heavy TUs against both trees (does the generated code
  still compile against both APIs?).
  --instructions: instead of CPU time, count the instructions each compile executes (valgrind
  cachegrind, compiler children included), once per TU and tree: a count does not change with
  the load of a shared machine, where CPU time can drift by the size of the effect measured.
  About 30 times slower than a compile (nvcc: several minutes per TU).
"""
import argparse
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LABELS = {"include": "+ `devmesh.hpp`", "include_mpi": "+ `devmesh.hpp` with the MPI backend",
          "meshes10": "+ 10 meshes, sliced/flattened/unflattened", "slices63": "+ 6-dim mesh, all 63 slices"}
HEAVY = ("meshes10", "slices63")


def mpi_flags():
    try:
        out = subprocess.run(["mpicxx", "--showme:compile"], check=True, capture_output=True, text=True).stdout
        return out.split()
    except (OSError, subprocess.CalledProcessError):
        sys.exit("compile_cost: mpicxx not found (needs libopenmpi-dev)")


def find_nvcc():
    return shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)


def measure(cmd):
    """(wall s, CPU s = user + sys, peak RSS MiB) of one compile, from GNU time's -v report
    (CPU and RSS include the compiler's child processes: cc1plus, cicc, ptxas...)."""
    res = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"compile_cost: failed: {' '.join(cmd)}\n{res.stderr[-3000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", res.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", res.stderr)
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", res.stderr).group(1))
    system = float(re.search(r"System time \(seconds\): ([\d.]+)", res.stderr).group(1))
    h, m, s = wall.groups()
    return (int(h or 0) * 3600 + int(m) * 60 + float(s), user + system, int(rss.group(1)) / 1024)


def count_instructions(cmd, work):
    """Instructions executed by one compile and its child processes (cachegrind's Ir)."""
    if not shutil.which("valgrind"):
        sys.exit("compile_cost: --instructions needs valgrind (apt-get install valgrind)")
    out = os.path.join(work, "cachegrind")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    res = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--trace-children=yes",
                          f"--cachegrind-out-file={out}/cg.%p", *cmd], capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"compile_cost: failed under valgrind: {' '.join(cmd)}\n{res.stderr[-3000:]}")
    total = 0
    for name in os.listdir(out):
        with open(os.path.join(out, name)) as f:
            total += sum(int(line.split()[1]) for line in f if line.startswith("summary:"))
    return total


def instructions_side_by_side(cmds, compilers, tus, labels, work):
    """The side-by-side table by instruction counts (one compile per TU and tree: counts are
    deterministic up to a fraction of a percent)."""
    md = [f"Side by side by instructions executed (valgrind cachegrind, compiler children included), baseline "
          f"`{labels[0]}` vs new `{labels[1]}`; extra = the TU's count minus the bare TU's.", "",
          "| TU | compiler | baseline extra | new extra | ratio (new / baseline) |", "|---|---|---|---|---|"]
    for c in compilers:
        bare = count_instructions(cmds["A"][c]("baseline"), work)
        for tu in tus:
            ea, eb = (count_instructions(cmds[k][c](tu), work) - bare for k in "AB")
            md.append(f"| {LABELS[tu]} | {c} | {ea / 1e9:+.2f} G | {eb / 1e9:+.2f} G | {eb / ea:.2f}× |")
            print(md[-1], file=sys.stderr)
    return "\n".join(md) + "\n"


def compiler_cmds(include, work, syntax_only=False):
    """compiler name -> (TU name -> command line), for the compilers found on this machine."""
    # The C API of MPI only: OpenMPI's deprecated C++ bindings would add to every TU alike.
    common = ["-std=c++20", "-O2", "-DOMPI_SKIP_MPICXX=1", f"-I{include}", *mpi_flags()]
    obj = os.path.join(work, "out.o")
    src = lambda tu, ext: os.path.join(work, f"{tu}.{ext}")
    if syntax_only:
        return {"g++": lambda tu: ["g++", *common, "-fsyntax-only", src(tu, "cpp")]}
    cmds = {"g++": lambda tu: ["g++", *common, "-c", src(tu, "cpp"), "-o", obj]}
    nvcc = find_nvcc()
    if nvcc:
        cmds["nvcc"] = lambda tu: [nvcc, *common, "--expt-relaxed-constexpr", "-c", src(tu, "cu"), "-o", obj]
    if shutil.which("clang++"):
        cmds["clang++"] = lambda tu: ["clang++", *common, "-c", src(tu, "cpp"), "-o", obj]
    return cmds


# ---------------------------------------------------------------- one header tree (bench/run)

def single(a):
    with_mpi = os.path.exists(os.path.join(a.include, "devmesh", "mpi.hpp"))
    subprocess.run([sys.executable, os.path.join(HERE, "gen_tus.py"), a.work] + (["--mpi"] if with_mpi else []),
                   check=True)
    tus = ["baseline", "include"] + (["include_mpi"] if with_mpi else []) + ["meshes10", "slices63"]
    if a.smoke:
        compilers, a.reps, tus = compiler_cmds(a.include, a.work, syntax_only=True), 1, ["baseline", *HEAVY]
    else:
        compilers = {c: f for c, f in compiler_cmds(a.include, a.work).items() if c in ("g++", "nvcc")}
    samples = {(c, tu): [] for c in compilers for tu in tus}
    for _ in range(a.reps):
        for c, cmd in compilers.items():
            for tu in tus:
                samples[(c, tu)].append(measure(cmd(tu)))
    rows = []
    for c in compilers:
        med = lambda tu, i: statistics.median(x[i] for x in samples[(c, tu)])
        base, base_cpu, base_rss = med("baseline", 0), med("baseline", 1), med("baseline", 2)
        for tu in tus:
            wall, cpu, rss = med(tu, 0), med(tu, 1), med(tu, 2)
            rows.append({"compiler": c, "tu": tu, "wall_s": wall, "cpu_s": cpu, "peak_rss_mib": rss,
                         "over_baseline_s": wall - base, "ratio_to_baseline": wall / base,
                         "cpu_over_baseline_s": cpu - base_cpu, "cpu_ratio_to_baseline": cpu / base_cpu,
                         "rss_ratio_to_baseline": rss / base_rss, "reps": a.reps,
                         "command": " ".join(compilers[c](tu))})
    print(f"{'compiler':8} {'TU':12} {'wall s':>8} {'+ s':>7} {'x base':>7} {'cpu s':>7} {'peak MiB':>9}")
    for r in rows:
        print(f"{r['compiler']:8} {r['tu']:12} {r['wall_s']:8.2f} {r['over_baseline_s']:7.2f} "
              f"{r['ratio_to_baseline']:7.2f} {r['cpu_s']:7.2f} {r['peak_rss_mib']:9.0f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


# ---------------------------------------------------------------- side by side (issue 10)

def git(*args):
    return subprocess.run(["git", "-C", ROOT, *args], check=True, capture_output=True, text=True).stdout.strip()


def extract(rev, trees):
    """REV's include/ under trees/<sha>/ (git archive); returns (include dir, label)."""
    sha = git("rev-parse", "--verify", f"{rev}^{{commit}}")
    dest = os.path.join(trees, sha[:12])
    if not os.path.isdir(os.path.join(dest, "include", "devmesh")):
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        archive = subprocess.run(["git", "-C", ROOT, "archive", sha, "include"], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", dest], input=archive.stdout, check=True)
    return os.path.join(dest, "include"), sha[:7]


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def version(cmd):
    try:
        return subprocess.run([cmd, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1 if "nvcc" in cmd else 0]
    except (OSError, IndexError):
        return "?"


def side_by_side(a):
    work = os.path.abspath(a.work or os.path.join(ROOT, "build", "compile_side_by_side"))
    tu_dir, trees = os.path.join(work, "tus"), os.path.join(work, "trees")
    os.makedirs(trees, exist_ok=True)
    inc_a, label_a = extract(a.baseline, trees)
    if a.new:
        inc_b, label_b = extract(a.new, trees)
    else:
        inc_b = os.path.abspath(a.new_include or os.path.join(ROOT, "include"))
        label_b = inc_b if a.new_include else f"working tree ({git('rev-parse', '--short=7', 'HEAD')}" + \
            (" + uncommitted changes)" if git("status", "--porcelain", "--", "include") else ")")
    tus = a.tus.split(",")
    unknown = [t for t in tus if t not in LABELS]
    if unknown:
        sys.exit(f"compile_cost: unknown TU(s) {unknown}; known: {','.join(LABELS)}")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_tus.py"), tu_dir, "--mpi"], check=True)
    trees_ = {"A": inc_a, "B": inc_b}
    if a.smoke:
        cmds = {k: compiler_cmds(inc, tu_dir, syntax_only=True)["g++"] for k, inc in trees_.items()}
        for tu in ("baseline", *HEAVY):
            for k in "AB":
                measure(cmds[k](tu))
        print(f"compile_cost: smoke ok: {', '.join(t for t in HEAVY)} compile against {label_a} and {label_b}")
        return
    cmds = {k: compiler_cmds(inc, tu_dir) for k, inc in trees_.items()}
    compilers = [c for c in a.compilers.split(",") if c in cmds["A"]]
    missing = [c for c in a.compilers.split(",") if c not in cmds["A"]]
    if missing:
        print(f"compile_cost: not found, skipped: {', '.join(missing)}", file=sys.stderr)
    if a.instructions:
        text = instructions_side_by_side(cmds, compilers, tus, (label_a, label_b), work)
        print(text)
        if a.md:
            with open(a.md, "w") as f:
                f.write(text)
        return
    start, load0, t0 = datetime.datetime.now(datetime.timezone.utc), loadavg(), time.monotonic()
    bare = {c: [] for c in compilers}
    samples = {(c, tu, k): [] for c in compilers for tu in tus for k in "AB"}
    for rep in range(a.reps):
        for c in compilers:
            bare[c].append(measure(cmds["A"][c]("baseline")))
            for i, tu in enumerate(tus):
                for k in ("AB" if (rep + i) % 2 == 0 else "BA"):
                    samples[(c, tu, k)].append(measure(cmds[k][c](tu)))
        print(f"compile_cost: repetition {rep + 1}/{a.reps} done ({time.monotonic() - t0:.0f} s, load {loadavg()})",
              file=sys.stderr)
    end, load1, took = datetime.datetime.now(datetime.timezone.utc), loadavg(), time.monotonic() - t0
    rows = []
    for c in compilers:
        bare_cpu = statistics.median(x[1] for x in bare[c])
        for tu in tus:
            cpu = {k: [x[1] for x in samples[(c, tu, k)]] for k in "AB"}
            ea, eb = statistics.median(cpu["A"]) - bare_cpu, statistics.median(cpu["B"]) - bare_cpu
            rows.append({"compiler": c, "tu": tu, "bare_cpu_s": bare_cpu, "baseline_extra_s": ea, "new_extra_s": eb,
                         "ratio": eb / ea if ea > 0 else float("nan"), "baseline_cpu_s": cpu["A"], "new_cpu_s": cpu["B"],
                         "baseline_wall_s": [x[0] for x in samples[(c, tu, "A")]],
                         "new_wall_s": [x[0] for x in samples[(c, tu, "B")]],
                         "baseline_rss_mib": statistics.median(x[2] for x in samples[(c, tu, "A")]),
                         "new_rss_mib": statistics.median(x[2] for x in samples[(c, tu, "B")]),
                         "reps": a.reps, "command": " ".join(cmds["B"][c](tu))})
    by = {(r["compiler"], r["tu"]): r for r in rows}
    md = [f"Side by side, one run: baseline `{label_a}` vs new `{label_b}`; {a.reps} repetitions, interleaved; "
          f"{start:%Y-%m-%d %H:%M}–{end:%H:%M} UTC ({took / 60:.1f} min); load average (1, 5, 15 min) "
          f"{load0} → {load1}.", "",
          "Extra = median CPU time (user + sys, compiler children included) of the TU minus that of the bare TU "
          "(`<mpi.h>` + `<array>` + `<span>`) under the same compiler; spread = max − min of the TU's CPU time "
          "over the repetitions (baseline / new).", "",
          "| TU | compiler | baseline extra | new extra | ratio (new / baseline) | spread |", "|---|---|---|---|---|---|"]
    for r in rows:
        sa, sb = (max(r[k]) - min(r[k]) for k in ("baseline_cpu_s", "new_cpu_s"))
        md.append(f"| {LABELS[r['tu']]} | {r['compiler']} | {r['baseline_extra_s']:+.2f} s | {r['new_extra_s']:+.2f} s "
                  f"| {r['ratio']:.2f}× | {sa:.2f} / {sb:.2f} s |")
    md += ["", "Bare TU (CPU): " + ", ".join(f"{c} {statistics.median(x[1] for x in bare[c]):.2f} s" for c in compilers)
           + ".", "", "Targets (issue 10):", ""]
    verdict = lambda ok: "**met**" if ok else "**MISSED**"
    for c in ("g++", "nvcc"):
        for tu in HEAVY:
            if (c, tu) in by:
                r = by[(c, tu)]
                md.append(f"- {c}, {LABELS[tu]}: extra CPU ≤ 0.5× {label_a}'s: {verdict(r['ratio'] <= 0.5)} "
                          f"({r['ratio']:.2f}×)")
    if ("g++", "include") in by:
        e = by[("g++", "include")]["new_extra_s"]
        md.append(f"- g++, including `devmesh.hpp`: ≤ +0.3 s CPU: {verdict(e <= 0.3)} ({e:+.2f} s)")
    text = "\n".join(md) + "\n"
    print(text)
    print(f"compile_cost: {took:.0f} s for {a.reps} repetitions", file=sys.stderr)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"baseline": label_a, "new": label_b, "start_utc": start.isoformat(), "end_utc": end.isoformat(),
                       "loadavg_start": load0, "loadavg_end": load1, "seconds": took,
                       "compilers": {c: version(cmds["A"][c]("baseline")[0]) for c in compilers}, "rows": rows},
                      f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--include", help="one header tree: measure it alone (bench/run)")
    ap.add_argument("--baseline", help="side by side: the baseline commit (its include/, via git archive)")
    ap.add_argument("--new", help="side by side: the new commit (default: the working tree's include/)")
    ap.add_argument("--new-include", help="side by side: the new header tree as a directory")
    ap.add_argument("--work", help="scratch directory (side by side default: build/compile_side_by_side)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--compilers", default="g++,nvcc,clang++", help="side by side: which compilers (if found)")
    ap.add_argument("--tus", default="include,include_mpi,meshes10,slices63", help="side by side: which TUs")
    ap.add_argument("--json")
    ap.add_argument("--md", help="side by side: also write the markdown here")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--instructions", action="store_true", help="side by side: count instructions (valgrind), not CPU time")
    a = ap.parse_args()
    if not os.path.exists("/usr/bin/time"):
        sys.exit("compile_cost: /usr/bin/time missing (scripts/install-deps installs `time`)")
    if bool(a.include) == bool(a.baseline):
        ap.error("give either --include DIR (one tree) or --baseline REV (side by side)")
    if a.include:
        if not a.work:
            ap.error("--include needs --work")
        single(a)
    else:
        if a.new and a.new_include:
            ap.error("--new and --new-include exclude each other")
        side_by_side(a)


if __name__ == "__main__":
    main()
