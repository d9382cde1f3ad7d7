#!/usr/bin/env python3
"""Compile cost of the IntTuple comparison's TUs (gen.py): see README.md.

  measure.py [--reps N] [--work DIR] [--compilers g++,clang++,nvcc] [--sides ...] [--json OUT] [--no-check]

First (unless --no-check) every heavy TU is built with g++ and clang++, linked with
check_main.cpp and run: all sides must print the same numbers. Then, per repetition and
compiler, every TU (the bare one included) is compiled once, the order reversed on every other
repetition, so load from other processes spreads over all TUs alike. Reported per TU: the
minimum over the repetitions of the compile's CPU time (user + sys of the compiler and its
children), minus that of the bare TU; and the object file's size (bytes, and `size`'s text).
Prints a markdown table and the load average (/proc/loadavg, `uptime`) before and after.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
NVCC = "/usr/local/cuda/bin/nvcc"
SIDES = ("struct", "hana", "hana_lean", "devmesh")
KINDS = ("include", "meshes10", "slices63s", "slices63d")
FLAGS = ["-std=c++20", "-O2", f"-I{HERE}", f"-I{os.path.join(ROOT, 'include')}"]


def command(compiler, src_base, obj):
    if compiler == "g++":
        return ["g++-12", *FLAGS, "-c", src_base + ".cpp", "-o", obj]
    if compiler == "clang++":
        return ["clang++-14", *FLAGS, "-c", src_base + ".cpp", "-o", obj]
    # devmesh's CMake target adds --expt-relaxed-constexpr to CUDA sources; every side gets it.
    return [NVCC, *FLAGS, "--expt-relaxed-constexpr", "-x", "cu", "-c", src_base + ".cu", "-o", obj]


def timed(cmd):
    """CPU seconds (user + sys, children included) and wall seconds of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    res = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        sys.exit(f"measure: failed: {' '.join(cmd)}\n{res.stderr[-3000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def text_size(obj):
    out = subprocess.run(["size", obj], capture_output=True, text=True).stdout.split("\n")[1].split()
    return int(out[0])


def check(work):
    """Every side's heavy TUs print the same numbers (g++ and clang++)."""
    for compiler, cxx in (("g++", "g++-12"), ("clang++", "clang++-14")):
        main_o = os.path.join(work, f"check_main_{compiler}.o")
        subprocess.run([cxx, "-std=c++20", "-O2", "-c", os.path.join(work, "check_main.cpp"), "-o", main_o], check=True)
        for kind in KINDS[1:]:
            outs = {}
            for side in SIDES:
                obj = os.path.join(work, f"chk_{kind}_{side}.o")
                exe = obj[:-2]
                subprocess.run(command(compiler, os.path.join(work, f"{kind}_{side}"), obj), check=True)
                subprocess.run([cxx, obj, main_o, "-o", exe], check=True)
                outs[side] = subprocess.run([exe], check=True, capture_output=True, text=True).stdout.strip()
            same = len(set(outs.values())) == 1
            print(f"check {compiler} {kind}: {'same' if same else 'DIFFERENT'}: {outs[SIDES[0]]}", flush=True)
            if not same:
                sys.exit(f"measure: the sides disagree: {outs}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--work", default="/tmp/inttuple_bench")
    ap.add_argument("--compilers", default="g++,clang++,nvcc")
    ap.add_argument("--json")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--sides", default=",".join(SIDES), help="a subset of " + ",".join(SIDES) + " (struct is always kept)")
    args = ap.parse_args()
    subprocess.run([sys.executable, os.path.join(HERE, "gen.py"), args.work], check=True)
    if not args.no_check:
        check(args.work)
    compilers = args.compilers.split(",")
    sides = [s for s in SIDES if s == "struct" or s in args.sides.split(",")]
    tus = ["bare"] + [f"{k}_{s}" for k in KINDS for s in sides]
    load_start = open("/proc/loadavg").read().split()[:3]
    uptime_start = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    cpu = {c: {t: [] for t in tus} for c in compilers}
    wall = {c: {t: [] for t in tus} for c in compilers}
    sizes = {c: {} for c in compilers}
    for rep in range(args.reps):
        for c in compilers:
            order = tus if rep % 2 == 0 else tus[::-1]
            for t in order:
                obj = os.path.join(args.work, f"out_{c}_{t}.o")
                u, w = timed(command(c, os.path.join(args.work, t), obj))
                cpu[c][t].append(u)
                wall[c][t].append(w)
                sizes[c][t] = (os.path.getsize(obj), text_size(obj))
            print(f"rep {rep + 1}/{args.reps} {c} done; load {open('/proc/loadavg').read().split()[:3]}", flush=True)
    load_end = open("/proc/loadavg").read().split()[:3]
    uptime_end = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()

    extra = {c: {t: min(cpu[c][t]) - min(cpu[c]["bare"]) for t in tus} for c in compilers}
    print(f"\nuptime at start: {uptime_start}\nuptime at end:   {uptime_end}\n")
    print(f"bare TU (min CPU s): " + ", ".join(f"{c} {min(cpu[c]['bare']):.2f}" for c in compilers) + "\n")
    head = "| TU | side | " + " | ".join(f"{c} extra CPU s" for c in compilers) + " | " + \
           " | ".join(f"{c} .o bytes (text)" for c in compilers) + " |"
    print(head)
    print("|" + " --- |" * (2 + 2 * len(compilers)))
    for k in KINDS:
        for s in sides:
            t = f"{k}_{s}"
            ratio = lambda c: "" if s == "struct" or k == "include" else f" ({extra[c][t] / max(extra[c][f'{k}_struct'], 0.01):.1f}×)"
            print(f"| {k} | {s} | " + " | ".join(f"{extra[c][t]:.2f}{ratio(c)}" for c in compilers) + " | " +
                  " | ".join(f"{sizes[c][t][0]} ({sizes[c][t][1]})" for c in compilers) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"reps": args.reps, "load_start": load_start, "load_end": load_end, "uptime_start": uptime_start,
                       "uptime_end": uptime_end, "cpu": cpu, "wall": wall, "sizes": sizes, "extra_min": extra}, f, indent=1)


if __name__ == "__main__":
    main()
