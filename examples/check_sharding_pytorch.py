#!/usr/bin/env python3
"""example.10_sharding.pytorch: examples/10_sharding answers as real PyTorch 2.15 DTensor does, on every
committed case (tests/sharding/data/pytorch_2.15_sharding.json, recorded by
scripts/pytorch-reference/run; no torch is needed here).

For each case the example runs on a simulated world of the case's size (--world, no MPI):
    10_sharding --world 8 --json --values --mesh dp=2,tp=4 --shape 13,6 --placements "S(0),R"
and every rank's coordinate, local shape, global offset and held elements ("local_values":
the global linear indices of the local tensor, in its order; PyTorch's are the values of
distribute_tensor(arange(numel)), divided among the ranks of Partial("sum") dims, which this
undoes) must equal PyTorch's. Where PyTorch raises, the example must fail with a devmesh
message (exit code 1, "devmesh:" on stderr) -- except where devmesh documents that it accepts
what PyTorch refuses (ACCEPTED_BY_DEVMESH, with the reason).

Usage: check_pytorch.py --exe EXAMPLE --data JSON [--jobs N]
"""
import argparse
import concurrent.futures
import json
import subprocess
import sys

# Cases PyTorch refuses and devmesh accepts on purpose: none today.
ACCEPTED_BY_DEVMESH = {}

def partial_sum_scale(case):
    """distribute_tensor with Partial("sum") stores value / k on each of the k ranks that hold
    partial sums (so that they add up): the factor to undo that, to compare indices."""
    k = 1
    for p, n in zip(case["placements"], case["mesh"]["shape"]):
        if p == "P(sum)":
            k *= n
    return k


def command(exe, case):
    mesh = ",".join(f"{n}={s}" for n, s in zip(case["mesh"]["names"], case["mesh"]["shape"]))
    world = 1
    for s in case["mesh"]["shape"]:
        world *= s
    return [exe, "--world", str(world), "--json", "--values", "--mesh", mesh,
            "--shape", ",".join(str(x) for x in case["tensor_shape"]),
            "--placements", ",".join(case["placements"])]


def check(exe, case):
    """Problems with one case, as text (empty: it agrees)."""
    cmd = command(exe, case)
    res = subprocess.run(cmd, text=True, capture_output=True, timeout=60)
    where = f"{case['id']}: {' '.join(cmd[1:])}"
    if "error" in case and case["id"] not in ACCEPTED_BY_DEVMESH:
        if res.returncode == 0:
            return [f"{where}: PyTorch raises ({case['error'][:120]}), devmesh answered"]
        if "devmesh:" not in res.stderr:
            return [f"{where}: failed without a devmesh message: {res.stderr.strip()[:200]}"]
        return []
    if res.returncode != 0:
        return [f"{where}: exit code {res.returncode}: {res.stderr.strip()[:300]}"]
    got = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    problems = []
    if len(got) != len(case["ranks"]):
        return [f"{where}: {len(got)} ranks answered, PyTorch has {len(case['ranks'])}"]
    scale = partial_sum_scale(case)
    for mine, theirs in zip(got, case["ranks"]):
        theirs = dict(theirs)
        if "local_values" in theirs:
            theirs["local_values"] = [round(v * scale) for v in theirs["local_values"]]
        for key in ("rank", "coordinate", "local_shape", "global_offset", "local_values"):
            if key in theirs and mine.get(key) != theirs[key]:
                problems.append(f"{where}: rank {theirs['rank']}: {key} {mine.get(key)}, PyTorch {theirs[key]}")
    return problems


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--exe", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--jobs", type=int, default=2)
    a = p.parse_args()
    with open(a.data) as f:
        data = json.load(f)
    cases = data["cases"]
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        results = list(pool.map(lambda c: check(a.exe, c), cases))
    problems = [x for r in results for x in r]
    for x in problems[:40]:
        print(x)
    refused = sum("error" in c for c in cases)
    print(f"example.10_sharding.pytorch: {len(cases)} cases of PyTorch {data['torch_version']} ({refused} it refuses): "
          f"{len(cases) - sum(1 for r in results if r)} agree, {sum(1 for r in results if r)} differ")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
