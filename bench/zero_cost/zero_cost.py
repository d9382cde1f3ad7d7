#!/usr/bin/env python3
"""Checks that each named_<x> / hand_<x> pair of named_vs_hand.cpp costs the same at -O2.

  asm mode (default): the same assembly after normalisation (local labels renumbered,
    call targets anonymised, directives dropped);
  --callgrind: the same number of instructions executed on valid ranks (valgrind
    --tool=callgrind over the file's driver, 1000 calls per function), which ignores
    cold error paths and cosmetic differences such as the operand order of a compare.

usage: zero_cost.py CXX SOURCE [compiler flags...] [--callgrind] [--json OUT] [--known-gaps a,b]
Exit status 1 if any pair differs, unless the pair is listed in --known-gaps: those must
still differ (so a fixed gap is noticed and the list shrinks).
"""
import json
import re
import os
import subprocess
import sys
import tempfile


def functions(asm):
    """{demangled name: [instruction lines]} for every function in the assembly."""
    out, name, body = {}, None, []
    for line in asm.splitlines():
        m = re.match(r"^([A-Za-z_].*\)(?: const)?):\s*(#.*)?$", line)
        if m and name is None:
            name, body = m.group(1), []
            continue
        if name is None:
            continue
        s = line.strip()
        if s.startswith(".size"):
            out[name], name = body, None
            continue
        if not s or s.startswith("#") or (s.startswith(".") and not re.match(r"^\.L\w+:", s)):
            continue
        if re.match(r"^\.LF[BE]\d+:", s):
            continue
        body.append(s)
    return out


def normalise(body):
    labels, out = {}, []
    for s in body:
        s = re.sub(r"\.L\w+", lambda m: labels.setdefault(m.group(0), f".L{len(labels)}"), s)
        s = re.sub(r"^(call\w*|jmp\w*)\s+(?!\.L).*", r"\1 <function>", s)  # named calls, tail calls
        s = re.sub(r"\s*#.*$", "", s)  # clang's trailing comments
        s = re.sub(r"^.*(\[clone \.\w+\]):$", r"<function> \1:", s)  # g++'s split-off cold part
        s = re.sub(r"\s+", " ", s)
        out.append(s)
    return out


def callgrind_costs(cxx, source, flags):
    """{pair: {"named": Ir, "hand": Ir}}: instructions executed in each function."""
    with tempfile.TemporaryDirectory() as tmp:
        exe, out = os.path.join(tmp, "zero_cost"), os.path.join(tmp, "callgrind.out")
        subprocess.run([cxx, "-std=c++20", "-O2", "-DZERO_COST_DRIVER", *flags, source, "-o", exe], check=True)
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", exe],
                       check=True, capture_output=True)
        text = subprocess.run(["callgrind_annotate", "--threshold=100", out],
                              check=True, capture_output=True, text=True).stdout
    costs = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([\d,]+)\s.*?:(named|hand)_(\w+)\(", line)
        if m:
            costs.setdefault(m.group(3), {})[m.group(2)] = int(m.group(1).replace(",", ""))
    return costs


def main():
    args = sys.argv[1:]
    json_out, gaps = None, set()
    if "--json" in args:
        i = args.index("--json"); json_out = args[i + 1]; del args[i:i + 2]
    use_callgrind = "--callgrind" in args
    if use_callgrind:
        args.remove("--callgrind")
    if "--known-gaps" in args:
        i = args.index("--known-gaps"); gaps = set(filter(None, args[i + 1].split(","))); del args[i:i + 2]
    cxx, source, flags = args[0], args[1], args[2:]
    fns = {}
    if use_callgrind:
        fns = callgrind_costs(cxx, source, flags)
    else:
        asm = subprocess.run([cxx, "-std=c++20", "-O2", "-S", "-o", "-", *flags, source],
                             check=True, capture_output=True, text=True).stdout
        asm = subprocess.run(["c++filt"], input=asm, check=True, capture_output=True, text=True).stdout
        for name, body in functions(asm).items():
            m = re.match(r"^(named|hand)_(\w+)\(", name)
            if m:
                fns.setdefault(m.group(2), {})[m.group(1)] = normalise(body)
    if not fns:
        sys.exit("zero_cost: no named_/hand_ functions found")
    mode = "no rank checks" if "-DDEVMESH_NO_RANK_CHECKS" in flags else "rank checks"
    metric = "instructions executed (callgrind)" if use_callgrind else "assembly instructions"
    size = (lambda v: v) if use_callgrind else len
    bad, rows = [], []
    for pair, sides in sorted(fns.items()):
        if set(sides) != {"named", "hand"}:
            sys.exit(f"zero_cost: {pair} lacks a named_ or hand_ side")
        same = sides["named"] == sides["hand"]
        n, h = size(sides["named"]), size(sides["hand"])
        rows.append({"pair": pair, "mode": mode, "compiler": os.path.basename(cxx), "metric": metric,
                     "same": same, "named": n, "hand": h, "known_gap": pair in gaps})
        status = "same" if same else "DIFFERENT"
        print(f"{pair:28} {status:10} {metric}: named {n}, hand {h}")
        if same == (pair in gaps):
            bad.append(pair)
            if same:
                print(f"{pair} is listed as a known gap but is now the same: remove it from the list")
            elif not use_callgrind:
                print(f"--- {pair}: named\n  " + "\n  ".join(sides["named"]))
                print(f"--- {pair}: hand\n  " + "\n  ".join(sides["hand"]))
    if json_out:
        with open(json_out, "w") as f:
            json.dump(rows, f, indent=1)
    if bad:
        sys.exit(f"zero_cost ({cxx}, {mode}, {metric}): unexpected result for {', '.join(bad)}")
    print(f"zero_cost ({cxx}, {mode}, {metric}): all pairs as expected")


main()
