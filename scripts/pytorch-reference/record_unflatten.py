"""Records PyTorch 2.15's _unflatten of flattened dims (DeviceMesh under a fake process group):
for every root below, every ascending set of two or more of its dims flattened
(`root[dims]._flatten("f")`, as contiguous or mixed-stride layouts), cut into every ordered
factorization of its size into 2 and 3 new dims. Writes tests/core/data/pytorch_2.15_unflatten.txt:
per case the groups of every new dim over the root (_FlatLayout.global_ranks, the groups
_init_process_groups creates, in its order) or PyTorch's refusal.

Usage: build/pytorch-venv/bin/python scripts/pytorch-reference/record_unflatten.py [OUT]
"""
import itertools
import math
import os
import sys
import warnings

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.testing._internal.distributed.fake_pg import FakeStore

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import groups_text  # noqa: E402

ROOTS = [(6, 4), (3, 4), (4, 9), (4, 3, 2), (2, 3, 2), (3, 1, 2), (3, 4, 2), (2, 2, 6), (5, 3, 2), (6, 2, 4), (2, 5, 3),
         (2, 3, 2, 2), (3, 2, 1, 2), (3, 2, 2, 3)]
NEW_NAMES = ("x", "y", "z")


def factorizations(n, k):
    if k == 1:
        yield (n,)
        return
    for d in range(1, n + 1):
        if n % d == 0:
            for rest in factorizations(n // d, k - 1):
                yield (d,) + rest


def shape_id(shape):
    return "x".join(str(s) for s in shape)


def record_root(shape, lines):
    world = math.prod(shape)
    names = tuple(f"d{i}" for i in range(len(shape)))
    dist.init_process_group("fake", rank=0, world_size=world, store=FakeStore())
    root = init_device_mesh("cpu", shape, mesh_dim_names=names)
    for k in range(2, len(shape) + 1):
        for sel in itertools.combinations(range(len(shape)), k):
            flat = root[tuple(names[i] for i in sel)]._flatten("f_" + "_".join(map(str, sel)))
            n = math.prod(shape[i] for i in sel)
            for parts in (2, 3):
                for sizes in factorizations(n, parts):
                    cid = f"{shape_id(shape)}:{','.join(map(str, sel))}:{','.join(map(str, sizes))}"
                    lines.append(groups_text.case_line(cid))
                    try:
                        cut = flat._unflatten(0, sizes, NEW_NAMES[:parts])
                    except Exception as e:  # PyTorch's refusal, as it raises it
                        text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
                        lines.append("refused " + text.replace("\n", " "))
                        continue
                    for j in range(parts):
                        lines.append(groups_text.groups_line(NEW_NAMES[j], cut._layout[j].global_ranks(world)))
    dist.destroy_process_group()


def main():
    warnings.filterwarnings("ignore")
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../../tests/core/data/pytorch_2.15_unflatten.txt")
    lines = []
    for shape in ROOTS:
        record_root(shape, lines)
    header = [
        f"PyTorch {torch.__version__} DeviceMesh._unflatten of flattened dims (fake process group), recorded by",
        "scripts/pytorch-reference/record_unflatten.py. Each case: root[dims]._flatten(name)._unflatten(0, sizes, (x, y[, z]))",
        "on init_device_mesh('cpu', root, mesh_dim_names=(d0, d1, ...)); id ROOT:DIMS:SIZES (DIMS: indices of the",
        "flattened dims, ascending as PyTorch requires). 'groups NAME' lists every group of new dim NAME over the root",
        "as _FlatLayout.global_ranks does (the groups _init_process_groups creates, in its order); 'refused' is",
        "PyTorch's exception.",
    ]
    groups_text.write(out, header, lines)
    print(f"unflatten: {sum(1 for l in lines if l.startswith('case'))} cases, "
          f"{sum(1 for l in lines if l.startswith('refused'))} refused -> {out}")


if __name__ == "__main__":
    main()
