"""Records real PyTorch DTensor answers (CPU, gloo, 8 ranks) as devmesh test data.

Run under torchrun (see ./run):  torchrun --standalone --nproc-per-node 8 record.py OUT_DIR
Writes OUT_DIR/pytorch_<major.minor>_sharding.json and ..._redistribute.json (README.md).
"""
import datetime
import os
import sys

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.placement_types import Partial, Replicate, Shard, _StridedShard

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402
import redistribute_case  # noqa: E402
import sharding_case  # noqa: E402
from jsonout import write_cases  # noqa: E402


def parse_placement(text):
    """"R", "S(d)", "P(op)", "_S(d,f)" -> a PyTorch placement."""
    if text == "R":
        return Replicate()
    inner = text[text.index("(") + 1 : -1]
    if text.startswith("S("):
        return Shard(int(inner))
    if text.startswith("P("):
        return Partial(inner)
    if text.startswith("_S("):
        dim, factor = (int(v) for v in inner.split(","))
        return _StridedShard(dim, split_factor=factor)
    raise ValueError(f"unknown placement {text!r}")


def print_placement(p):
    """The data files' spelling of a PyTorch placement (parse_placement's inverse)."""
    if isinstance(p, _StridedShard):
        return f"_S({p.dim},{p.split_factor})"
    if p.is_shard():
        return f"S({p.dim})"
    if p.is_replicate():
        return "R"
    if p.is_partial():
        return f"P({p.reduce_op})"
    raise ValueError(f"unknown placement {p!r}")


def error_text(exc):
    return f"{type(exc).__name__}: {exc}"


def first_error(local_error):
    """Every rank learns the lowest rank's error (None if no rank failed): ranks agree before
    the next collective, so a refusal on some ranks cannot leave the others waiting."""
    errors = [None] * dist.get_world_size()
    dist.all_gather_object(errors, local_error)
    return next((e for e in errors if e is not None), None)


def gather_to_root(obj):
    """Rank 0 gets every rank's object in rank order; other ranks get None."""
    out = [None] * dist.get_world_size() if dist.get_rank() == 0 else None
    dist.gather_object(obj, out, dst=0)
    return out


def make_meshes():
    return {
        key: init_device_mesh("cpu", shape, mesh_dim_names=names)
        for key, (shape, names) in cases.MESHES.items()
    }


def mesh_json(key):
    shape, names = cases.MESHES[key]
    return {"names": list(names), "shape": list(shape)}


def global_tensor(shape):
    """torch.arange(numel).reshape(shape) in float64: every element names its own index."""
    numel = 1
    for n in shape:
        numel *= n
    return torch.arange(numel, dtype=torch.float64).reshape(shape)


def number(v):
    """JSON numbers: integral values without '.0' (most are), others as floats."""
    return int(v) if float(v).is_integer() else float(v)


def values(tensor):
    return [number(v) for v in tensor.contiguous().view(-1).tolist()]


def main():
    out_dir = sys.argv[1]
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
    torch.set_default_dtype(torch.float64)
    meshes = make_meshes()
    version = torch.__version__
    major_minor = ".".join(version.split(".")[:2])
    ctx = {
        "meshes": meshes, "parse": parse_placement, "show": print_placement,
        "first_error": first_error, "gather": gather_to_root, "error_text": error_text,
        "mesh_json": mesh_json, "global_tensor": global_tensor, "values": values,
    }
    only = os.environ.get("PYTORCH_REF_ONLY", "")  # an id substring: a partial run, for debugging
    sharding = [sharding_case.run(ctx, *c) for c in cases.sharding_cases() if only in c[0]]
    redistribute = [redistribute_case.run(ctx, *c) for c in cases.redistribute_cases()
                    if only in c[0]]
    if dist.get_rank() == 0:
        os.makedirs(out_dir, exist_ok=True)
        for kind, data in (("sharding", sharding), ("redistribute", redistribute)):
            path = os.path.join(out_dir, f"pytorch_{major_minor}_{kind}.json")
            write_cases(path, version, data)
            print(f"wrote {len(data)} cases to {path}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
