"""Records the meshes TorchTitan's ParallelDims.build_mesh() makes, with real PyTorch 2.15
DeviceMesh objects under a fake process group, for three versions of
torchtitan/distributed/parallel_dims.py (read from a git clone of pytorch/torchtitan, not copied:
the search tool's `fetch` of github:pytorch/torchtitan gives one). Its imports of the rest of
TorchTitan (logger, device type, config classes, spmd_types annotations) are stubbed.
Writes tests/core/data/torchtitan_meshes.txt.

Usage: build/pytorch-venv/bin/python scripts/pytorch-reference/record_torchtitan.py [GIT_DIR [OUT]]
"""
import dataclasses
import importlib.machinery
import logging
import os
import subprocess
import sys
import types
import warnings

import torch
import torch.distributed as dist
from torch.testing._internal.distributed.fake_pg import FakeStore

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import groups_text  # noqa: E402

# (commit, date, subject): before unflatten (flattens of one root), with unflatten, the newest.
VERSIONS = [
    ("aeb3a4baf", "2025-08-13", "[EP] add support for ETP=1"),
    ("183a0d2e7", "2025-12-17", "Use new DeviceMesh unflatten to rewrite parallel_dims"),
    ("253a12a2a", "2026-08-22", "[distributed] Validate expert parallel divisibility"),
]
# (dp_replicate, dp_shard, cp, tp, pp, ep, etp): worlds 8 to 64, non-powers of two among them.
# A version whose checks refuse one records that; the newest has no etp (it ignores the field).
CONFIGS = [
    (1, 8, 1, 1, 1, 1, 1), (2, 2, 1, 2, 1, 1, 1), (1, 4, 1, 2, 1, 2, 1), (1, 2, 2, 2, 1, 4, 1),
    (2, 2, 1, 2, 1, 2, 2), (1, 3, 1, 2, 2, 3, 1), (2, 2, 3, 2, 1, 3, 1), (1, 4, 3, 2, 1, 4, 1),
    (1, 4, 3, 2, 1, 6, 1), (1, 4, 3, 2, 1, 6, 2), (2, 4, 1, 2, 2, 4, 1), (1, 2, 3, 2, 2, 6, 1),
    (3, 2, 1, 2, 2, 2, 1), (1, 4, 2, 2, 2, 8, 1), (2, 2, 2, 2, 2, 4, 2), (1, 6, 1, 3, 2, 9, 1),
    (2, 4, 2, 2, 2, 8, 1), (1, 4, 2, 4, 2, 8, 4), (1, 5, 1, 2, 4, 5, 1), (2, 3, 2, 1, 1, 3, 1),
]


def stub_modules():
    """What parallel_dims.py imports from the rest of TorchTitan, as plain stand-ins."""
    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__spec__ = importlib.machinery.ModuleSpec(name, None)
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m
    module("torchtitan")
    module("torchtitan.tools")
    module("torchtitan.tools.logging", logger=logging.getLogger("torchtitan"))
    module("torchtitan.tools.utils", device_type="cpu")
    module("torchtitan.config")
    module("torchtitan.config.configs", ParallelismConfig=object)
    placeholder = type("placeholder", (), {})
    module("spmd_types", PerMeshAxisSpmdType=placeholder, Shard=placeholder, PartitionSpec=placeholder, V=None)


def load_parallel_dims(git_dir, commit):
    source = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:torchtitan/distributed/parallel_dims.py"],
                            check=True, capture_output=True, text=True).stdout
    ns = {"__name__": f"parallel_dims_{commit}"}
    sys.modules[ns["__name__"]] = types.ModuleType(ns["__name__"])  # dataclasses looks the module up
    exec(compile(source, f"parallel_dims.py@{commit}", "exec"), sys.modules[ns["__name__"]].__dict__)
    return sys.modules[ns["__name__"]].ParallelDims


def meshes_of(pd, root):
    """Every DeviceMesh build_mesh() made, by label: the mesh it returned and the flattened dims
    registered on it, and the dicts of global and single-axis meshes newer versions keep."""
    out = {"world": root}
    for name, m in getattr(root, "_flatten_mapping", {}).items():
        out["flat_" + name] = m
    for attr in ("_global_meshes", "_meshes", "_single_axis_meshes"):
        for name, m in (getattr(pd, attr, None) or {}).items():
            out.setdefault(name, m)
    return out


def record_config(ParallelDims, config, spmd_backend, lines):
    dp_replicate, dp_shard, cp, tp, pp, ep, etp = config
    world = dp_replicate * dp_shard * cp * tp * pp
    fields = {f.name for f in dataclasses.fields(ParallelDims)}
    kwargs = dict(dp_replicate=dp_replicate, dp_shard=dp_shard, cp=cp, tp=tp, pp=pp, ep=ep, world_size=world)
    if "etp" in fields:
        kwargs["etp"] = etp
    if spmd_backend:
        kwargs["spmd_backend"] = spmd_backend
    dist.init_process_group("fake", rank=0, world_size=world, store=FakeStore())
    try:
        pd = ParallelDims(**kwargs)
        root = pd.build_mesh()
    except Exception as e:  # the version's own checks refuse the configuration
        lines.append("refused " + (f"{type(e).__name__}: {e}" if str(e) else type(e).__name__).replace("\n", " "))
        return
    for label, m in meshes_of(pd, root).items():
        for i, name in enumerate(m.mesh_dim_names):
            lines.append(groups_text.groups_line(f"{label}:{name}", m._layout[i].global_ranks(world)))
    dist.destroy_process_group()


def main():
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    git_dir = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/pytorch+torchtitan/repo"
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "../../tests/core/data/torchtitan_meshes.txt")
    stub_modules()
    lines = []
    for commit, date, subject in VERSIONS:
        ParallelDims = load_parallel_dims(git_dir, commit)
        fields = {f.name for f in dataclasses.fields(ParallelDims)}
        backends = ("spmd_types", "partial_dtensor") if "spmd_backend" in fields else (None,)
        for backend in backends:
            for config in CONFIGS:
                dp_replicate, dp_shard, cp, tp, pp, ep, etp = config
                world = dp_replicate * dp_shard * cp * tp * pp
                cid = f"{commit}{'-' + backend if backend else ''}:r{dp_replicate}-s{dp_shard}-cp{cp}-tp{tp}-pp{pp}-ep{ep}"
                cid += f"-etp{etp}" if "etp" in fields else ""
                lines.append(groups_text.case_line(cid, version=date, world=world, dp_replicate=dp_replicate,
                                                   dp_shard=dp_shard, cp=cp, tp=tp, pp=pp, ep=ep,
                                                   etp=etp if "etp" in fields else 1))
                if dist.is_initialized():
                    dist.destroy_process_group()
                record_config(ParallelDims, config, backend, lines)
                if dist.is_initialized():
                    dist.destroy_process_group()
    header = [
        f"TorchTitan ParallelDims.build_mesh() meshes on PyTorch {torch.__version__} (fake process group), recorded by",
        "scripts/pytorch-reference/record_torchtitan.py from three versions of torchtitan/distributed/parallel_dims.py:",
    ] + [f"  {c} ({d}) {s}" for c, d, s in VERSIONS] + [
        "(the newest twice: spmd_backend 'spmd_types' and 'partial_dtensor'). 'case' is a configuration (etp=1 where",
        "the version has no expert tp); 'groups MESH:DIM' lists every group of that dim of that mesh over the world",
        "(_FlatLayout.global_ranks: the groups _init_process_groups creates, in its order). MESH is 'world' (the mesh",
        "build_mesh returns), 'flat_NAME' (a dim _flatten registered on it), or a key of _global_meshes, _meshes or",
        "_single_axis_meshes. 'refused' is the version's exception for a configuration it does not take.",
    ]
    groups_text.write(out, header, lines)
    print(f"torchtitan: {sum(1 for l in lines if l.startswith('case'))} cases, "
          f"{sum(1 for l in lines if l.startswith('refused'))} refused -> {out}")


if __name__ == "__main__":
    main()
