"""Helpers every case module shares: placement spelling, errors, agreement and gathering
across ranks, the global tensor, JSON numbers."""
import torch
import torch.distributed as dist
from torch.distributed.tensor.placement_types import Partial, Replicate, Shard, _StridedShard

import cases


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
    """A local block, flattened row-major."""
    return [number(v) for v in tensor.contiguous().view(-1).tolist()]
