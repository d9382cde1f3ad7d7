"""One redistribute pair: PyTorch's plan, the collectives it issued, bytes, values, warnings."""
import logging
import warnings

import torch
import torch._logging._internal as torch_logging
import torch.distributed as dist
import torch.distributed.tensor._redistribute as redistribute_module
from torch.distributed.tensor import DTensor, distribute_tensor
from torch.distributed.tensor._dtensor_spec import DTensorSpec
from torch.distributed.tensor.debug import CommDebugMode
from torch.distributed.tensor.placement_types import Replicate

import common
from collectives import CollectiveRecorder, step_collective
from collectives_math import bytes_sent


class _Messages(logging.Handler):
    """Collects warnings logged by torch's loggers. torch._logging gives some of them their own
    handlers without propagation, so it is attached to every torch logger; a record seen twice
    (propagated to a second logger) is kept once."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.texts = []
        self._seen = set()
        self._loggers = []

    def emit(self, record):
        if id(record) not in self._seen:
            self._seen.add(id(record))
            self.texts.append(record.getMessage())

    def __enter__(self):
        names = [n for n in logging.Logger.manager.loggerDict if n == "torch" or n.startswith("torch.")]
        self._loggers = [logging.getLogger(n) for n in names]
        for lg in self._loggers:
            lg.addHandler(self)
        return self

    def __exit__(self, *exc):
        for lg in self._loggers:
            lg.removeHandler(self)


def _partial_factor(placements, mesh):
    """The source convention: a rank holds its block times (1 + its index in the group of the
    partial dims, row-major); returns (this rank's factor, the factor the reduction yields)."""
    dims = [i for i, p in enumerate(placements) if p.is_partial()]
    coord = mesh.get_coordinate()
    index, k = 0, 1
    for d in dims:
        index = index * mesh.size(d) + coord[d]
        k *= mesh.size(d)
    op = placements[dims[0]].reduce_op if dims else "sum"
    reduced = {"sum": k * (k + 1) / 2, "avg": (k + 1) / 2, "min": 1, "max": k}[op]
    return 1 + index, reduced


def _source(mesh, shape, src):
    """The source DTensor (from_local, so Partial sources hold known values) and the full
    tensor the pair must end up representing."""
    full = common.global_tensor(shape)
    unreduced = [Replicate() if p.is_partial() else p for p in src]
    block = distribute_tensor(full, mesh, unreduced, src_data_rank=None).to_local()
    mine, reduced = _partial_factor(src, mesh)
    local = block * mine
    dt = DTensor.from_local(local, mesh, src, run_check=False, shape=full.shape,
                            stride=full.stride())
    return dt, full * reduced


def _plan(dt, mesh, dst):
    """PyTorch's plan on this rank (the logical shapes depend on the rank's coordinate)."""
    dst_spec = DTensorSpec(mesh, tuple(dst), tensor_meta=dt._spec.tensor_meta)
    infos = redistribute_module._gen_transform_infos(dt._spec, dst_spec)
    return [
        {
            "mesh_dim": info.mesh_dim,
            "src": common.print_placement(info.src_dst_placements[0]),
            "dst": common.print_placement(info.src_dst_placements[1]),
            "collective": step_collective(*info.src_dst_placements),
            "logical_shape": [int(n) for n in info.logical_shape],
        }
        for info in infos
    ]


def _redistribute(dt, mesh, dst):
    """Runs DTensor.redistribute with fresh warn-once caches, recording what it did."""
    redistribute_module._warned_flatten_issues.clear()
    torch_logging.warning_once.cache_clear()
    with _Messages() as handler, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with CommDebugMode() as comm, CollectiveRecorder() as recorder:
            out = dt.redistribute(mesh, dst)
    counts = {getattr(k, "__name__", str(k)): v for k, v in comm.get_comm_counts().items()}
    messages = handler.texts + [str(w.message) for w in caught]
    return out, recorder.calls, dict(sorted(counts.items())), messages


def _checks(out, expected_full, mesh, dst):
    """Whether the result is right: the full tensor, and the local blocks distribute_tensor
    gives (its local split, src_data_rank=None, as for the source)."""
    full_ok = torch.equal(out.full_tensor(), expected_full)
    reference = distribute_tensor(expected_full, mesh, dst, src_data_rank=None).to_local()
    local = out.to_local()
    local_ok = local.shape == reference.shape and torch.equal(local, reference)
    return {"full_tensor_matches": full_ok, "local_matches_distribute_tensor": local_ok}


def _prepare(case, mesh, shape):
    """The source DTensor, its expected full tensor, dst and the plan, or the error raised."""
    try:
        src = [common.parse_placement(p) for p in case["src"]]
        dst = [common.parse_placement(p) for p in case["dst"]]
        dt, expected_full = _source(mesh, shape, src)
        return (dt, expected_full, dst, _plan(dt, mesh, dst)), None
    except Exception as exc:  # recorded as data: PyTorch's refusal is the answer
        return None, common.error_text(exc)


def _rank_record(case, mesh, shape):
    """This rank's part of a pair: runs the redistribute, or returns the error raised."""
    record = {"rank": dist.get_rank(), "coordinate": list(mesh.get_coordinate()), "steps": []}
    prepared, error = _prepare(case, mesh, shape)
    error = common.first_error(error)
    if error is not None:
        return dict(record, error=error)
    dt, expected_full, dst, record["steps"] = prepared
    record["src_local_values"] = common.values(dt.to_local())
    try:
        out, calls, counts, messages = _redistribute(dt, mesh, dst)
    except Exception as exc:
        error = common.error_text(exc)
    error = common.first_error(error)
    if error is not None:
        return dict(record, error=error)
    record.update(calls=calls, collectives=counts, warnings=messages,
                  local_shape=list(out.to_local().shape), local_values=common.values(out.to_local()),
                  checks=_checks(out, expected_full, mesh, dst))
    return record


def _assign_calls(steps, calls):
    """Pairs each communicating step with the call it issued (in order); a mismatch between
    the plan and what PyTorch issued is a bug in this script's model: fail loudly."""
    expected = [s["collective"] for s in steps if s["collective"] is not None]
    issued = [c["op"] for c in calls]
    if expected != issued:
        raise RuntimeError(f"plan expects {expected}, PyTorch issued {issued}")
    it = iter(calls)
    return [next(it) if s["collective"] is not None else None for s in steps]


def _merge_steps(records):
    """One step list for the case: per rank logical shapes, element counts and bytes."""
    per_rank_calls = [_assign_calls(r["steps"], r.get("calls", [])) for r in records]
    merged = []
    for i, step in enumerate(records[0]["steps"]):
        for r in records:
            other = r["steps"][i]
            if (other["mesh_dim"], other["src"], other["dst"]) != (step["mesh_dim"], step["src"], step["dst"]):
                raise RuntimeError(f"ranks disagree on step {i}: {step} vs {other}")
        calls = [c[i] for c in per_rank_calls]
        entry = {k: step[k] for k in ("mesh_dim", "src", "dst", "collective")}
        entry["logical_shape_per_rank"] = [r["steps"][i]["logical_shape"] for r in records]
        if step["collective"] is not None:
            entry["group_size"] = calls[0]["group_size"]
            entry["input_elements_per_rank"] = [c["input_elements"] for c in calls]
            entry["output_elements_per_rank"] = [c["output_elements"] for c in calls]
        entry["bytes_sent_per_rank"] = [bytes_sent(c) if c else 0 for c in calls]
        merged.append(entry)
    return merged


def _merge(case, records):
    """Rank 0: the case's JSON object from every rank's record."""
    error = next((r["error"] for r in records if "error" in r), None)
    steps = _merge_steps(records) if error is None else None
    out = dict(case)
    if error is not None:
        out["error"] = error
        out["steps"] = [{k: s[k] for k in ("mesh_dim", "src", "dst")} for s in records[0]["steps"]]
        return out
    counts = [r["collectives"] for r in records]
    if any(c != counts[0] for c in counts):
        raise RuntimeError(f"ranks issued different collectives: {counts}")
    out["steps"] = steps
    out["collectives"] = counts[0]
    out["bytes_sent_per_rank"] = [sum(s["bytes_sent_per_rank"][r] for s in steps)
                                  for r in range(len(records))]
    out["warnings"] = list(dict.fromkeys(m for r in records for m in r["warnings"]))
    out["checks"] = {k: all(r["checks"][k] for r in records) for k in records[0]["checks"]}
    out["ranks"] = [{k: r[k] for k in ("rank", "coordinate", "src_local_values",
                                       "local_shape", "local_values")} for r in records]
    return out


def run(meshes, case_id, mesh_key, shape, src_text, dst_text):
    """Runs on every rank; returns the pair's JSON object on rank 0 (None elsewhere)."""
    mesh = meshes[mesh_key]
    case = {"id": case_id, "mesh": common.mesh_json(mesh_key), "tensor_shape": list(shape),
            "src": src_text, "dst": dst_text}
    records = common.gather_to_root(_rank_record(case, mesh, shape))
    return _merge(case, records) if records is not None else None
