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

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402
import redistribute_case  # noqa: E402
import sharding_case  # noqa: E402
from jsonout import write_cases  # noqa: E402


def make_meshes():
    return {
        key: init_device_mesh("cpu", shape, mesh_dim_names=names)
        for key, (shape, names) in cases.MESHES.items()
    }


def main():
    out_dir = sys.argv[1]
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
    torch.set_default_dtype(torch.float64)
    meshes = make_meshes()
    version = torch.__version__
    major_minor = ".".join(version.split(".")[:2])
    only = os.environ.get("PYTORCH_REF_ONLY", "")  # an id substring: a partial run, for debugging
    sharding = [sharding_case.run(meshes, *c) for c in cases.sharding_cases() if only in c[0]]
    redistribute = [redistribute_case.run(meshes, *c) for c in cases.redistribute_cases()
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
