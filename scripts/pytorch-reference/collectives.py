"""What a redistribute step sends: the collectives PyTorch issued and the bytes each rank sent.

CollectiveRecorder is a TorchDispatchMode that sees every functional collective DTensor issues
(the same ops CommDebugMode counts) and records, per call, the op, the group size and the
element counts of the buffers PyTorch passed in, after its padding of uneven shards.

Bytes per call: collectives_math.py.
"""
import torch
import torch.distributed as dist
from torch.utils._python_dispatch import TorchDispatchMode

COLLECTIVE_OPS = {
    "all_gather_into_tensor",
    "reduce_scatter_tensor",
    "all_reduce",
    "all_to_all_single",
}


def _group_size(args):
    """The group size of a functional collective: its last argument names the group."""
    group_name = args[-1]
    return dist.distributed_c10d._resolve_process_group(group_name).size()


class CollectiveRecorder(TorchDispatchMode):
    """calls: what each collective moved (above); issued: the calls themselves, (op, args, kwargs),
    for bench/pytorch/redistribute_time.py to replay."""

    def __init__(self):
        super().__init__()
        self.calls = []
        self.issued = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if any(t.__name__ == "DTensor" for t in types):
            return NotImplemented
        name = func._overloadpacket.__name__
        out = func(*args, **kwargs)
        if name in COLLECTIVE_OPS:
            self.issued.append((func, args, kwargs))
            self.calls.append({
                "op": name,
                "group_size": _group_size(args),
                "input_elements": args[0].numel(),
                "output_elements": out.numel(),
            })
        return out


def step_collective(src, dst):
    """The collective PyTorch's redistribute_local_tensor issues for one step (None: local).

    src, dst are Placement objects; this mirrors redistribute_local_tensor's branches on CPU,
    where gloo has no all_to_all and Shard -> Shard is an all_gather plus a local chunk.
    """
    from torch.distributed.tensor.placement_types import _StridedShard

    src_shard = src.is_shard() or isinstance(src, _StridedShard)
    dst_shard = dst.is_shard() or isinstance(dst, _StridedShard)
    if src.is_partial():
        if dst.is_replicate() or isinstance(dst, _StridedShard):
            return "all_reduce"
        return "reduce_scatter_tensor" if dst.is_shard() else None
    if src_shard and (dst.is_replicate() or dst_shard):
        return "all_gather_into_tensor"
    return None
