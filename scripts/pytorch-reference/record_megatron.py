"""Records the process groups Megatron-Core 0.16.1 builds, from its own pure-Python generators
(no torch.distributed): parallel_state.RankGenerator, as initialize_model_parallel builds the
dense ("decoder") and expert generators from tp, cp, pp, ep, expert tp and the order string,
and HyperCommGrid.get_rank_enum. Writes tests/core/data/megatron_core_0.16.1_groups.txt.

Usage: build/pytorch-venv/bin/python scripts/pytorch-reference/record_megatron.py [OUT]
(the venv needs `pip install megatron-core==0.16.1 einops`: Python 3.11, CPU torch.)
"""
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import groups_text  # noqa: E402

# (world, tp, cp, pp, ep, expert tp): worlds 8 to 4096, non-powers of two among them.
CONFIGS = [
    (8, 2, 1, 2, 2, 1), (8, 2, 2, 1, 4, 1), (12, 2, 1, 1, 2, 3), (48, 2, 3, 2, 4, 1), (16, 2, 2, 2, 2, 2),
    (24, 3, 1, 2, 4, 1), (36, 3, 2, 3, 2, 3), (40, 2, 1, 5, 4, 1), (64, 4, 2, 2, 8, 1), (96, 4, 3, 2, 4, 2),
    (128, 8, 1, 4, 8, 1), (192, 4, 2, 4, 6, 2), (256, 8, 2, 4, 16, 1), (384, 8, 3, 4, 8, 2),
    (1024, 8, 2, 8, 32, 1), (1536, 8, 3, 8, 16, 2), (4096, 8, 4, 16, 64, 1),
]
ORDERS = ("tp-cp-ep-dp-pp", "tp-cp-ep-pp-dp")
# The tokens initialize_model_parallel asks each generator for.
DENSE_TOKENS = ("tp", "cp", "dp", "pp", "tp-pp", "dp-cp", "tp-dp-cp", "tp-dp", "tp-cp")
EXPERT_TOKENS = ("ep", "tp", "tp-ep", "tp-ep-pp", "dp")
# HyperCommGrid: (shape, dim names fastest first, the dims lists asked for).
GRIDS = [
    ([2, 3, 4, 5], ["tp", "cp", "pp", "dp"], [["tp"], ["cp"], ["pp"], ["dp"], ["tp", "pp"], ["cp", "dp"],
                                              ["tp", "cp", "dp"], ["dp", "tp"]]),
    ([4, 2, 3, 2], ["tp", "cp", "dp", "pp"], [["tp"], ["dp"], ["pp"], ["tp", "cp"], ["cp", "dp"], ["tp", "pp"]]),
]


def generators(world, tp, cp, pp, ep, etp, order):
    """The two generators, exactly as initialize_model_parallel makes them."""
    from megatron.core.parallel_state import RankGenerator

    dp = world // (tp * cp * pp)
    edp = world // (etp * ep * pp)
    dense = RankGenerator(tp=tp, ep=1, dp=dp, pp=pp, cp=cp, order=order, rank_offset=0)
    expert = RankGenerator(tp=etp, ep=ep, dp=edp, pp=pp, cp=1, order=order, rank_offset=0)
    assert dense.get_ranks("pp") == expert.get_ranks("pp")  # initialize_model_parallel's own check
    return dp, edp, dense, expert


def main():
    warnings.filterwarnings("ignore")
    import megatron.core
    from megatron.core.hyper_comm_grid import HyperCommGrid

    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../../tests/core/data/megatron_core_0.16.1_groups.txt")
    lines = []
    for world, tp, cp, pp, ep, etp in CONFIGS:
        for order in ORDERS:
            dp, edp = world // (tp * cp * pp), world // (etp * ep * pp)
            if not order.endswith("pp") and pp > 1 and edp != dp:
                continue  # initialize_model_parallel refuses it (pp not last needs edp == dp)
            dp, edp, dense, expert = generators(world, tp, cp, pp, ep, etp, order)
            lines.append(groups_text.case_line(f"w{world}-tp{tp}-cp{cp}-pp{pp}-ep{ep}-etp{etp}-{order}", world=world,
                                               tp=tp, cp=cp, pp=pp, dp=dp, ep=ep, etp=etp, edp=edp, order=order))
            lines += [groups_text.groups_line("dense:" + t, dense.get_ranks(t)) for t in DENSE_TOKENS]
            lines += [groups_text.groups_line("expert:" + t, expert.get_ranks(t)) for t in EXPERT_TOKENS]
    for shape, names, asks in GRIDS:
        world = 1
        for s in shape:
            world *= s
        os.environ["WORLD_SIZE"] = str(world)
        grid = HyperCommGrid(shape, names)
        lines.append(groups_text.case_line("grid-" + "-".join(f"{n}{s}" for n, s in zip(names, shape)), world=world,
                                           shape=",".join(map(str, shape)), names=",".join(names)))
        lines += [groups_text.groups_line("grid:" + "-".join(a), grid.get_rank_enum(a)) for a in asks]
    header = [
        f"Megatron-Core {megatron.core.__version__} process groups, recorded by scripts/pytorch-reference/record_megatron.py",
        "from its pure-Python generators. 'case' gives a configuration: world, tp, cp, pp, dp (world / (tp cp pp)),",
        "ep, etp (expert tp), edp (world / (etp ep pp)) and the order string (fastest dim first). 'groups",
        "dense:TOKEN' is RankGenerator(tp, ep=1, dp, pp, cp, order).get_ranks(TOKEN), 'groups expert:TOKEN' is",
        "RankGenerator(etp, ep, edp, pp, cp=1, order).get_ranks(TOKEN): the generators initialize_model_parallel",
        "makes, asked for the tokens it asks them for. 'grid-...' cases: HyperCommGrid(shape, names) and 'groups",
        "grid:DIMS' its get_rank_enum(DIMS). Each group's ranks in Megatron's order, groups in its order.",
    ]
    groups_text.write(out, header, lines)
    print(f"megatron: {sum(1 for l in lines if l.startswith('case'))} cases -> {out}")


if __name__ == "__main__":
    main()
