"""One sharding case: every rank's coordinate, local shape, global offset and local values."""
import torch.distributed as dist
from torch.distributed.tensor import distribute_tensor
from torch.distributed.tensor._utils import compute_local_shape_and_global_offset

import common


def _local_answer(mesh, shape, placements):
    """This rank's shape and offset (no communication), or the error PyTorch raised."""
    try:
        local_shape, offset = compute_local_shape_and_global_offset(shape, mesh, placements)
        return {"local_shape": list(local_shape), "global_offset": list(offset)}, None
    except Exception as exc:  # recorded as data: PyTorch's refusal is the answer
        return None, common.error_text(exc)


def _distributed_values(mesh, shape, placements):
    """distribute_tensor of arange(numel).reshape(shape): the flattened local block, its shape,
    the error of the default scatter from rank 0 if it raised, and the error if both ways did.

    Where the scatter raises (PyTorch refuses uneven _StridedShard there), the values come from
    distribute_tensor(..., src_data_rank=None): every rank splits its own full copy, without
    the scatter's equal-size check, so the exact index map is still recorded."""
    full = common.global_tensor(shape)
    scatter_error = None
    try:
        local = distribute_tensor(full, mesh, placements).to_local()
    except Exception as exc:
        scatter_error = common.error_text(exc)
    if common.first_error(scatter_error) is None:
        return common.values(local), list(local.shape), None, None
    try:
        local = distribute_tensor(full, mesh, placements, src_data_rank=None).to_local()
        return common.values(local), list(local.shape), scatter_error, None
    except Exception as exc:
        return None, None, scatter_error, common.error_text(exc)


def run(meshes, case_id, mesh_key, shape, placement_text):
    """Runs on every rank; returns the case's JSON object on rank 0 (None elsewhere)."""
    mesh = meshes[mesh_key]
    case = {
        "id": case_id,
        "mesh": common.mesh_json(mesh_key),
        "tensor_shape": list(shape),
        "placements": placement_text,
    }
    try:
        placements = [common.parse_placement(p) for p in placement_text]
        answer, error = _local_answer(mesh, shape, placements)
    except Exception as exc:
        answer, error = None, common.error_text(exc)
    error = common.first_error(error)
    if error is None:
        local_values, value_shape, scatter_error, error = _distributed_values(mesh, shape, placements)
        error = common.first_error(error)
        scatter_error = common.first_error(scatter_error)
    if error is not None:
        ranks = common.gather_to_root(None)
        return dict(case, error=error) if ranks is not None else None
    rank = {
        "rank": dist.get_rank(),
        "coordinate": list(mesh.get_coordinate()),
        **answer,
        "local_values": local_values,
    }
    if value_shape != answer["local_shape"]:
        # Recorded, not hidden: distribute_tensor's block disagrees with the shape query.
        rank["distribute_tensor_shape"] = value_shape
    ranks = common.gather_to_root(rank)
    if ranks is None:
        return None
    return dict(case, ranks=ranks, scatter_error=scatter_error) if scatter_error else dict(case, ranks=ranks)
