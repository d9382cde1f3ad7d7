"""bench/pytorch/redistribute_time.py: PyTorch 2.15's DTensor.redistribute against the raw
collectives it issues (issue 20, item 7; devmesh's side: bench/redistribute, the same pairs,
mesh and sizes). Run on 8 ranks with gloo (bench/pytorch/run --redistribute: torchrun).

For each pair of bench/redistribute_pairs.txt on the (dp=2, tp=4) mesh and each square float64
tensor (256, 512, 1024: an S(0),S(0) block of 64 KiB, 256 KiB, 1 MiB per rank):
  dtensor  dt.redistribute(mesh, dst) (its plan from @cache, its local ops, its collectives);
  raw      the functional collectives that call issued, recorded once (CollectiveRecorder)
           and replayed with the same input tensors and groups, each waited for: what a
           program that already knows its layout and holds its buffers issues.
Alternating ABBA over --reps repetitions; each repetition times `iters` back-to-back calls
after a barrier and keeps the slowest rank's mean; medians. Rank 0 writes JSON.
"""
import argparse
import datetime
import json
import logging
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Replicate, distribute_tensor

# The recorder of scripts/pytorch-reference (the collectives a call issues, to replay).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "pytorch-reference"))
from collectives import CollectiveRecorder  # noqa: E402
import plan_time  # noqa: E402  (this folder's: the pairs file's reader, placements from text)


def read_pairs(path):
    """bench/redistribute's five: the first pairs on the (dp=2, tp=4) mesh."""
    return [(p["from"], p["to"]) for p in plan_time.read_pairs(path) if p["mesh"] == "dp=2,tp=4"][:5]


def source(mesh, n, src):
    """The source DTensor of the tensor 0, 1, 2, ... (a Partial source: the block on every rank)."""
    full = torch.arange(n * n, dtype=torch.float64).reshape(n, n)
    unreduced = [Replicate() if p.is_partial() else p for p in src]
    block = distribute_tensor(full, mesh, unreduced, src_data_rank=None).to_local()
    return DTensor.from_local(block, mesh, src, run_check=False, shape=full.shape, stride=full.stride())


def slowest_mean_us(fn, iters):
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    t = torch.tensor([(time.perf_counter() - t0) / iters * 1e6], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--max-n", type=int, default=1024)
    args = ap.parse_args()
    # PyTorch warns, once per pair, that sequential all_gathers are suboptimal: what it does is measured anyway.
    logging.getLogger("torch.distributed.tensor._redistribute").setLevel(logging.ERROR)
    dist.init_process_group("gloo")
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    wait = torch.ops._c10d_functional.wait_tensor
    rows = []
    for n in (256, 512, 1024):
        if n > args.max_n:
            continue
        iters = max(2, 2 * (1024 // n) ** 2)
        for src_text, dst_text in read_pairs(args.pairs):
            src, dst = list(plan_time.placements(src_text)), list(plan_time.placements(dst_text))
            dt = source(mesh, n, src)
            dt.redistribute(mesh, dst)  # warm: the plan cached, the groups used once
            with CollectiveRecorder() as rec:
                dt.redistribute(mesh, dst)
            calls = rec.issued

            def dtensor():
                dt.redistribute(mesh, dst)

            def raw():
                for func, a, kw in calls:
                    wait(func(*a, **kw))

            a_times, b_times = [], []
            for r in range(args.reps):  # ABBA
                order = (dtensor, raw) if r % 2 == 0 else (raw, dtensor)
                for fn in order:
                    (a_times if fn is dtensor else b_times).append(slowest_mean_us(fn, iters))
            d, w = statistics.median(a_times), statistics.median(b_times)
            rows.append({"from": src_text, "to": dst_text, "tensor": n, "kib_per_rank": n * n * 8 / 8 / 1024,
                         "collectives": [c[0]._overloadpacket.__name__ for c in calls],
                         "raw_us": w, "dtensor_us": d})
            if dist.get_rank() == 0:
                print(f"{src_text:14s} -> {dst_text:8s} {n:5d}  raw {w:10.1f} us  DTensor {d:10.1f} us  "
                      f"{d / w:.3f}x  {rows[-1]['collectives']}", flush=True)
    if dist.get_rank() == 0:
        with open(args.out, "w") as f:
            json.dump({"torch_version": torch.__version__, "date": datetime.date.today().isoformat(),
                       "load_average": list(os.getloadavg()), "reps": args.reps, "rows": rows}, f, indent=1)
            f.write("\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
