"""bench/pytorch/plan_time.py: PyTorch 2.15's redistribute planner, timed per call on the pairs
of bench/redistribute_pairs.txt (issue 20, item 7; devmesh's side: bench/plan_redistribute).

One process, a fake process group of the mesh's size (PyTorch's FakeStore: planning needs a
DeviceMesh, not communication). For each pair, DTensorSpecs with the tensor's shape (float64),
then per call:
  uncached  _gen_transform_infos_non_cached(src, dst): the planning itself, what PyTorch runs
            the first time it meets a pair of specs;
  cached    _gen_transform_infos(src, dst): PyTorch's @cache hit, what a training loop pays
            every call after the first (hashing two specs).
Each: `--reps` rounds of `--iters` calls, the median of the rounds' means. Writes JSON.

Usage (bench/pytorch/run sets up the venv):
  python plan_time.py --pairs bench/redistribute_pairs.txt --out bench/data/pytorch_plan_time.json
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import time

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import Partial, Replicate, Shard
from torch.distributed.tensor._dtensor_spec import DTensorSpec, TensorMeta
from torch.distributed.tensor import _redistribute as redistribute_module
from torch.testing._internal.distributed.fake_pg import FakeStore


def read_pairs(path):
    pairs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            mesh, shape, src, dst = (x.strip() for x in line.split("|"))
            names = [kv.split("=")[0] for kv in mesh.split(",")]
            sizes = [int(kv.split("=")[1]) for kv in mesh.split(",")]
            pairs.append({"mesh": mesh, "names": names, "sizes": sizes,
                          "shape": [int(n) for n in shape.split(",")], "from": src, "to": dst})
    return pairs


def placement(text):
    if text == "R":
        return Replicate()
    if text.startswith("S("):
        return Shard(int(text[2:-1]))
    if text.startswith("P("):
        return Partial(text[2:-1])
    raise ValueError("unknown placement " + text)


def placements(text):
    return tuple(placement(p) for p in text.split(","))


def per_call_us(fn, iters, reps):
    means = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            fn()
        means.append((time.perf_counter_ns() - t0) / iters / 1000.0)
    return statistics.median(means)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    pairs = read_pairs(args.pairs)
    world = max(int(torch.tensor(p["sizes"]).prod()) for p in pairs)
    dist.init_process_group("fake", rank=0, world_size=world, store=FakeStore())
    rows = []
    meshes = {}
    for p in pairs:
        key = p["mesh"]
        if key not in meshes:
            n = int(torch.tensor(p["sizes"]).prod())
            meshes[key] = DeviceMesh("cpu", torch.arange(n).reshape(p["sizes"]), mesh_dim_names=tuple(p["names"]))
        mesh = meshes[key]
        shape = torch.Size(p["shape"])
        meta = TensorMeta(shape, torch.empty(shape, device="meta").stride(), torch.float64)
        src = DTensorSpec(mesh, placements(p["from"]), tensor_meta=meta)
        dst = DTensorSpec(mesh, placements(p["to"]), tensor_meta=meta)
        infos = redistribute_module._gen_transform_infos_non_cached(src, dst)
        redistribute_module._gen_transform_infos(src, dst)  # warm the cache
        uncached = per_call_us(lambda: redistribute_module._gen_transform_infos_non_cached(src, dst), args.iters, args.reps)
        cached = per_call_us(lambda: redistribute_module._gen_transform_infos(src, dst), args.iters * 20, args.reps)
        rows.append({"pair": f"{p['mesh']}:{p['from']}->{p['to']}", "steps": len(infos),
                     "uncached_us": uncached, "cached_us": cached})
        print(f"{rows[-1]['pair']:50s} {len(infos)} step(s)  uncached {uncached:9.2f} us  cached {cached:7.3f} us")
    dist.destroy_process_group()
    out = {"torch_version": torch.__version__, "python": platform.python_version(),
           "date": datetime.date.today().isoformat(), "machine": platform.machine(),
           "load_average": list(os.getloadavg()), "iters": args.iters, "reps": args.reps, "pairs": rows}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
