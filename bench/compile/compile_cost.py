#!/usr/bin/env python3
"""bench/compile: wall time and peak memory of g++ and nvcc on the TUs of gen_tus.py.

Each (compiler, TU) is compiled --reps times under /usr/bin/time -v, interleaved (one
round over all TUs, then the next) so that load from other processes spreads evenly;
the median is reported. Output: a JSON list of rows, and a table on stdout.

usage: compile_cost.py --include DIR --work DIR [--reps N] [--json OUT] [--smoke]
  --smoke: g++ -fsyntax-only, once, on the two heavy TUs: checks the generated code still
           compiles against the current API (the light TUs cannot break).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def mpi_flags():
    try:
        out = subprocess.run(["mpicxx", "--showme:compile"], check=True, capture_output=True, text=True).stdout
        return out.split()
    except (OSError, subprocess.CalledProcessError):
        sys.exit("compile_cost: mpicxx not found (needs libopenmpi-dev)")


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--include", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    if not os.path.exists("/usr/bin/time"):
        sys.exit("compile_cost: /usr/bin/time missing (scripts/install-deps installs `time`)")
    with_mpi = os.path.exists(os.path.join(a.include, "devmesh", "mpi.hpp"))
    subprocess.run([sys.executable, os.path.join(HERE, "gen_tus.py"), a.work] + (["--mpi"] if with_mpi else []),
                   check=True)
    tus = ["baseline", "include"] + (["include_mpi"] if with_mpi else []) + ["meshes10", "slices63"]
    # The C API of MPI only: OpenMPI's deprecated C++ bindings would add to every TU alike.
    common = ["-std=c++20", "-O2", "-DOMPI_SKIP_MPICXX=1", f"-I{a.include}", *mpi_flags()]
    obj = os.path.join(a.work, "out.o")
    compilers = {"g++": lambda tu: ["g++", *common, "-c", os.path.join(a.work, tu + ".cpp"), "-o", obj]}
    if a.smoke:
        compilers = {"g++": lambda tu: ["g++", *common, "-fsyntax-only", os.path.join(a.work, tu + ".cpp")]}
        a.reps = 1
        tus = ["baseline", "meshes10", "slices63"]
    elif shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc"):
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        compilers["nvcc"] = lambda tu: [nvcc, *common, "--expt-relaxed-constexpr", "-c",
                                        os.path.join(a.work, tu + ".cu"), "-o", obj]
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


main()
