"""The generated case lists: which meshes, shapes and placements are recorded.

Pure Python (no torch), so the lists can be read, counted and tested without PyTorch. Order and
ids are deterministic: the same lists come out on every run and every rank.

Placement spelling (the data files' schema): "R", "S(d)", "P(sum|avg|min|max)", "_S(d,f)".
"""
import itertools

WORLD = 8

# (shape, dim names) of every mesh recorded; each has WORLD ranks.
MESHES = {
    "8": ((8,), ("dp",)),
    "2x4": ((2, 4), ("dp", "tp")),
    "4x2": ((4, 2), ("dp", "tp")),
    "2x2x2": ((2, 2, 2), ("dp", "cp", "tp")),
}


def shape_id(shape):
    return "x".join(str(n) for n in shape) if shape else "scalar"


def case_id(mesh_key, shape, placements):
    return f"{mesh_key}:{shape_id(shape)}:{','.join(placements)}"


def alphabet(tensor_ndim, partial_ops=("sum",)):
    """Placements one mesh dim may take: R, S(d) on every tensor dim, the given Partials."""
    return ["R"] + [f"S({d})" for d in range(tensor_ndim)] + [f"P({op})" for op in partial_ops]


# Tensor shapes by rank: even, uneven (13 on 8: 2,2,2,2,2,2,1,0), empty shards (3 on 8) and
# zero-size dims. Kept small so local_values stay small.
SHAPES = {
    0: [()],
    1: [(8,), (16,), (13,), (3,), (0,)],
    2: [(8, 8), (13, 6), (3, 5), (0, 4)],
    3: [(4, 6, 8), (3, 0, 5)],
}

# The 3-D mesh has 3 placements per case: fewer shapes there, so the list stays a few hundred.
SHAPES_3D_MESH = {
    0: [()],
    1: [(8,), (13,), (3,)],
    2: [(8, 8), (13, 6)],
    3: [(4, 6, 8)],
}


def cross_product_cases(mesh_key, shapes_by_rank):
    """Every placement tuple over alphabet(ndim) for every listed shape."""
    mesh_shape, _ = MESHES[mesh_key]
    for ndim in sorted(shapes_by_rank):
        symbols = alphabet(ndim)
        for shape in shapes_by_rank[ndim]:
            for placements in itertools.product(symbols, repeat=len(mesh_shape)):
                yield mesh_key, shape, list(placements)


def partial_op_cases():
    """Every Partial op, alone and next to a shard (one op per spec: PyTorch refuses mixes)."""
    for op in ("avg", "min", "max"):
        yield "8", (13,), [f"P({op})"]
        yield "2x4", (13, 6), [f"P({op})", "S(0)"]
        yield "2x4", (8, 8), ["S(1)", f"P({op})"]
        yield "2x2x2", (8, 8), [f"P({op})", "S(0)", f"P({op})"]


def strided_cases():
    """_StridedShard: FSDP over TP (shard on tp first, then dp), and a few other orders."""
    fsdp_tp = [
        ("2x4", ["_S(0,4)", "S(0)"]),
        ("4x2", ["_S(0,2)", "S(0)"]),
        ("2x4", ["_S(1,4)", "S(1)"]),
        ("2x2x2", ["_S(0,2)", "S(0)", "R"]),
        ("2x2x2", ["R", "_S(0,2)", "S(0)"]),
        ("2x2x2", ["_S(0,2)", "R", "S(0)"]),
        ("2x2x2", ["_S(0,4)", "_S(0,2)", "S(0)"]),
        ("2x2x2", ["_S(0,2)", "S(0)", "S(1)"]),
        ("2x4", ["_S(0,4)", "S(1)"]),
        ("8", ["_S(0,2)"]),
    ]
    for mesh_key, placements in fsdp_tp:
        for shape in [(8, 8), (16, 4), (13, 6), (6, 13), (3, 5), (0, 4)]:
            yield mesh_key, shape, placements


def error_cases():
    """Specs PyTorch refuses: the data records its exception type and message."""
    yield "8", (8,), ["S(1)"]
    yield "8", (), ["S(0)"]
    yield "2x4", (8, 8), ["S(2)", "R"]
    yield "2x4", (8, 8), ["S(0)"]
    yield "2x4", (8, 8), ["P(sum)", "P(max)"]
    yield "2x2x2", (8, 8), ["R", "S(0)", "S(3)"]


def sharding_cases():
    """All sharding cases in file order: (id, mesh_key, shape, placements), ids unique."""
    groups = [
        cross_product_cases("8", SHAPES),
        cross_product_cases("2x4", SHAPES),
        cross_product_cases("4x2", SHAPES),
        cross_product_cases("2x2x2", SHAPES_3D_MESH),
        partial_op_cases(),
        strided_cases(),
        error_cases(),
    ]
    seen = set()
    out = []
    for mesh_key, shape, placements in itertools.chain(*groups):
        cid = case_id(mesh_key, shape, placements)
        if cid in seen:
            continue
        seen.add(cid)
        out.append((cid, mesh_key, tuple(shape), placements))
    return out


# --- redistribute pairs (issue 20) -------------------------------------------------------

ISSUE_EXAMPLES = [
    ("2x4", (8, 8), ["S(0)", "S(0)"], ["R", "S(0)"]),
    ("8", (5, 3), ["S(0)"], ["S(1)"]),
    ("2x4", (8, 8), ["P(sum)", "R"], ["R", "S(0)"]),
    ("2x2x2", (8, 8), ["P(sum)", "P(sum)", "P(sum)"], ["R", "R", "R"]),
    ("2x2x2", (8, 8), ["S(0)", "S(0)", "S(0)"], ["S(0)", "R", "R"]),
]

SYSTEMATIC_SYMBOLS = ["R", "S(0)", "S(1)", "P(sum)"]
# Even (8x8 divides by every mesh dim product) and uneven with empty shards (5x3 on 4 and 8).
SYSTEMATIC_SHAPES = [(8, 8), (5, 3)]

THREE_D_PAIRS = [
    (["S(0)", "S(0)", "S(0)"], ["R", "R", "R"]),
    (["S(0)", "S(1)", "R"], ["R", "S(0)", "S(1)"]),
    (["R", "R", "R"], ["S(0)", "S(0)", "S(0)"]),
    (["P(sum)", "S(0)", "S(1)"], ["S(0)", "R", "S(1)"]),
    (["P(sum)", "P(sum)", "R"], ["S(0)", "S(0)", "R"]),
    (["S(1)", "R", "S(0)"], ["S(0)", "S(1)", "R"]),
    (["P(avg)", "P(avg)", "P(avg)"], ["R", "R", "R"]),
    (["P(max)", "R", "P(max)"], ["R", "S(0)", "R"]),
    (["_S(0,2)", "S(0)", "R"], ["R", "R", "R"]),
    (["R", "R", "R"], ["_S(0,2)", "S(0)", "R"]),
]

OTHER_PAIRS = [
    ("2x4", (8, 8), ["_S(0,4)", "S(0)"], ["R", "R"]),
    ("2x4", (8, 8), ["_S(0,4)", "S(0)"], ["S(0)", "S(0)"]),
    ("2x4", (8, 8), ["S(0)", "S(0)"], ["_S(0,4)", "S(0)"]),
    ("2x4", (13, 6), ["_S(0,4)", "S(0)"], ["R", "R"]),
    ("2x4", (13, 6), ["P(avg)", "S(1)"], ["R", "R"]),
    ("2x4", (13, 6), ["P(min)", "R"], ["S(0)", "R"]),
    ("2x4", (13, 6), ["P(max)", "P(max)"], ["R", "S(0)"]),
    ("2x4", (8, 8), ["S(0)", "R"], ["P(avg)", "R"]),
    ("8", (13,), ["S(0)"], ["P(max)"]),
    ("8", (13, 6), ["P(sum)"], ["P(avg)"]),
]


def redistribute_cases():
    """All redistribute pairs in file order: (id, mesh_key, shape, src, dst), ids unique."""
    pairs = list(ISSUE_EXAMPLES)
    for mesh_key in ("2x4", "8"):
        ndim = len(MESHES[mesh_key][0])
        specs = [list(p) for p in itertools.product(SYSTEMATIC_SYMBOLS, repeat=ndim)]
        for shape in SYSTEMATIC_SHAPES:
            pairs += [(mesh_key, shape, src, dst) for src in specs for dst in specs]
    for shape in SYSTEMATIC_SHAPES:
        pairs += [("2x2x2", shape, src, dst) for src, dst in THREE_D_PAIRS]
    pairs += OTHER_PAIRS
    seen = set()
    out = []
    for mesh_key, shape, src, dst in pairs:
        cid = f"{case_id(mesh_key, shape, src)}->{','.join(dst)}"
        if cid in seen:
            continue
        seen.add(cid)
        out.append((cid, mesh_key, tuple(shape), src, dst))
    return out


if __name__ == "__main__":
    print(len(sharding_cases()), "sharding cases,", len(redistribute_cases()), "redistribute pairs")
