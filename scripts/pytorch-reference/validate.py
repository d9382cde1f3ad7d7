#!/usr/bin/env python3
"""Re-reads the recorded data files and checks their invariants (plain Python, no torch).

Usage: validate.py [DATA_DIR]   (default tests/sharding/data); exits 1 on any problem.

Sharding file: schema keys; ids unique and as cases.py spells them; 8 ranks in rank order, each
with its row-major coordinate; len(local_values) == prod(local_shape); offsets within the
tensor; the values of a Shard/Replicate spec are exactly the row-major block at global_offset
(so the recorded offset and shape say what distribute_tensor holds), Partial(sum) blocks
divided by the partial group size; every element held by exactly prod(unsharded mesh dims)
ranks (blocks tile the tensor, strided shards included).
Redistribute file: schema keys; totals equal the sum of the steps; bytes recomputed from the
recorded element counts; collective counts equal the steps' collectives; every successful pair
ends with the right full tensor, and with distribute_tensor(dst)'s local blocks when dst has no
Partial; the issue's two measured byte counts (3,584 B each).
"""
import collections
import json
import math
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402
from collectives_math import bytes_sent  # noqa: E402

PLACEMENT = re.compile(r"^(R|S\(\d+\)|P\((sum|avg|min|max)\)|_S\(\d+,\d+\))$")
SHARDING_KEYS = {"id", "mesh", "tensor_shape", "placements"}
RANK_KEYS = {"rank", "coordinate", "local_shape", "global_offset", "local_values"}
PAIR_KEYS = {"id", "mesh", "tensor_shape", "src", "dst"}
PAIR_RESULT_KEYS = {"steps", "collectives", "bytes_sent_per_rank", "warnings", "checks", "ranks"}
ISSUE_BYTES = {"2x4:8x8:S(0),S(0)->R,S(0)": 3584, "8:5x3:S(0)->S(1)": 3584}


def coordinate(rank, shape):
    out = []
    for n in reversed(shape):
        out.append(rank % n)
        rank //= n
    return list(reversed(out))


def block_indices(tensor_shape, offset, local_shape):
    """Row-major global indices of the block at offset with local_shape."""
    indices = [0]
    for n, o, m in zip(tensor_shape, offset, local_shape):
        indices = [i * n + o + j for i in indices for j in range(m)]
    return indices


def mesh_key(mesh):
    return "x".join(str(n) for n in mesh["shape"])


class Checker:
    def __init__(self):
        self.problems = []

    def expect(self, ok, where, what):
        if not ok:
            self.problems.append(f"{where}: {what}")
        return ok

    def ranks(self, where, mesh, items):
        ok = self.expect(len(items) == cases.WORLD, where, f"{len(items)} ranks, not {cases.WORLD}")
        for r, item in enumerate(items):
            ok &= self.expect(item["rank"] == r, where, f"rank {item['rank']} at index {r}")
            ok &= self.expect(item["coordinate"] == coordinate(r, mesh["shape"]), where,
                              f"rank {r} coordinate {item['coordinate']}")
        return ok


def placement_scale(mesh, placements):
    """What distribute_tensor multiplies a block by: Partial(sum) divides by its dim's size."""
    scale = 1.0
    for size, p in zip(mesh["shape"], placements):
        if p == "P(sum)":
            scale /= size
    return scale


def sharded_dims(placements):
    """Tensor dims some mesh dim shards (Shard or _StridedShard)."""
    return sorted({int(re.search(r"\((\d+)", p).group(1)) for p in placements if "S(" in p})


def holders(mesh, placements):
    """How many ranks hold each element: the product of the mesh dims that do not shard."""
    return math.prod(n for n, p in zip(mesh["shape"], placements) if "S(" not in p)


def check_sharding_ranks(chk, case):
    where, mesh, shape, placements = case["id"], case["mesh"], case["tensor_shape"], case["placements"]
    if not chk.ranks(where, mesh, case["ranks"]):
        return
    strided = any(p.startswith("_S") for p in placements)
    partial = any(p.startswith("P") for p in placements)
    scale = placement_scale(mesh, placements)
    owners = collections.Counter()
    for r in case["ranks"]:
        chk.expect(set(r) == RANK_KEYS, where, f"rank {r['rank']} keys {sorted(r)}")
        local, offset, vals = r["local_shape"], r["global_offset"], r["local_values"]
        chk.expect(len(local) == len(shape) == len(offset), where, f"rank {r['rank']} ranks of shape")
        chk.expect(len(vals) == math.prod(local), where, f"rank {r['rank']}: {len(vals)} values, shape {local}")
        chk.expect(all(0 <= o <= n and m <= n for o, m, n in zip(offset, local, shape)), where,
                   f"rank {r['rank']}: offset {offset} shape {local} outside {shape}")
        for d in sharded_dims(placements):
            chk.expect(local[d] > 0 or offset[d] == shape[d], where,
                       f"rank {r['rank']}: empty shard of dim {d} at offset {offset[d]}, not {shape[d]}")
        if not strided:
            block = [i * scale for i in block_indices(shape, offset, local)]
            chk.expect(vals == block, where, f"rank {r['rank']}: values are not the block at {offset}")
        if not partial:
            owners.update(int(v) for v in vals)
    if not partial:
        want = holders(mesh, placements)
        numel = math.prod(shape)
        chk.expect(sorted(owners) == list(range(numel)) and set(owners.values()) <= {want}, where,
                   f"elements not each held by {want} ranks")


def check_sharding(chk, data):
    ids = collections.Counter(c["id"] for c in data["cases"])
    chk.expect(max(ids.values(), default=1) == 1, "sharding", f"duplicate ids {[i for i, n in ids.items() if n > 1]}")
    for case in data["cases"]:
        where = case["id"]
        keys = set(case) - SHARDING_KEYS
        chk.expect(keys in ({"ranks"}, {"ranks", "scatter_error"}, {"error"}), where, f"keys {sorted(case)}")
        chk.expect(math.prod(case["mesh"]["shape"]) == cases.WORLD, where, "mesh is not 8 ranks")
        chk.expect(len(case["mesh"]["names"]) == len(case["mesh"]["shape"]), where, "names/shape")
        chk.expect(all(PLACEMENT.match(p) for p in case["placements"]), where, "placement spelling")
        chk.expect(where == cases.case_id(mesh_key(case["mesh"]), case["tensor_shape"], case["placements"]),
                   where, "id does not spell mesh, shape and placements")
        if "error" in case:
            chk.expect(re.match(r"^\w+: ", case["error"]) is not None, where, "error is not 'Type: message'")
        else:
            check_sharding_ranks(chk, case)


def check_pair_steps(chk, case):
    where, steps = case["id"], case["steps"]
    counts = collections.Counter(s["collective"] for s in steps if s["collective"])
    chk.expect(dict(counts) == case["collectives"], where,
               f"collectives {case['collectives']} vs steps {dict(counts)}")
    for i, s in enumerate(steps):
        chk.expect(len(s["logical_shape_per_rank"]) == cases.WORLD, where, f"step {i} logical shapes")
        if s["collective"] is None:
            chk.expect(s["bytes_sent_per_rank"] == [0] * cases.WORLD, where, f"local step {i} sends")
            continue
        recomputed = [bytes_sent({"op": s["collective"], "group_size": s["group_size"], "input_elements": n})
                      for n in s["input_elements_per_rank"]]
        chk.expect(recomputed == s["bytes_sent_per_rank"], where, f"step {i} bytes {s['bytes_sent_per_rank']}")
    totals = [sum(s["bytes_sent_per_rank"][r] for s in steps) for r in range(cases.WORLD)]
    chk.expect(totals == case["bytes_sent_per_rank"], where, "bytes_sent_per_rank is not the steps' sum")


def check_pair(chk, case):
    where = case["id"]
    if "error" in case:
        chk.expect(set(case) == PAIR_KEYS | {"error", "steps"}, where, f"keys {sorted(case)}")
        return
    chk.expect(set(case) == PAIR_KEYS | PAIR_RESULT_KEYS, where, f"keys {sorted(case)}")
    chk.ranks(where, case["mesh"], case["ranks"])
    for r in case["ranks"]:
        chk.expect(len(r["local_values"]) == math.prod(r["local_shape"]), where,
                   f"rank {r['rank']}: {len(r['local_values'])} values, shape {r['local_shape']}")
    check_pair_steps(chk, case)
    chk.expect(case["checks"]["full_tensor_matches"], where, "full_tensor() is not the expected tensor")
    if not any(p.startswith("P") for p in case["dst"]):
        chk.expect(case["checks"]["local_matches_distribute_tensor"], where,
                   "local blocks differ from distribute_tensor(dst)")
    if where in ISSUE_BYTES:
        total = sum(case["bytes_sent_per_rank"])
        chk.expect(total == ISSUE_BYTES[where], where, f"{total} B in all, the issue measured {ISSUE_BYTES[where]}")


def check_redistribute(chk, data):
    ids = collections.Counter(c["id"] for c in data["cases"])
    chk.expect(max(ids.values(), default=1) == 1, "redistribute", "duplicate ids")
    chk.expect(set(ISSUE_BYTES) <= set(ids), "redistribute", "the issue's examples are missing")
    for case in data["cases"]:
        check_pair(chk, case)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    data_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "tests", "sharding", "data")
    chk = Checker()
    total = 0
    for kind, check in (("sharding", check_sharding), ("redistribute", check_redistribute)):
        with open(os.path.join(data_dir, f"pytorch_2.15_{kind}.json")) as f:
            data = json.load(f)
        chk.expect(data["torch_version"].startswith("2.15."), kind, f"torch {data['torch_version']}")
        check(chk, data)
        errors = sum("error" in c for c in data["cases"])
        print(f"{kind}: {len(data['cases'])} cases ({errors} where PyTorch raises)")
        total += len(data["cases"])
    for p in chk.problems:
        print("problem:", p)
    print(f"validate: {total} cases, {len(chk.problems)} problems")
    return 1 if chk.problems else 0


if __name__ == "__main__":
    sys.exit(main())
