#!/usr/bin/env python3
"""bench/compile/sharding_cost.py: what ten sharding specs add to a TU's compile (issue 19).

Two TUs, both including <devmesh/devmesh.hpp> and <devmesh/sharding.hpp> and one mesh query:
  without  that alone;
  specs10  the same plus ten specs (static and dynamic meshes; shard, nested, shard_order,
           partial, padded; one a dynamic_sharding parsed from text), each asked for the local
           shape, global offset and local size of a rank known only at run time.
Reports, per compiler (g++ -O2, and nvcc -O2 on .cu copies when nvcc is found), the median CPU
time of --reps compiles of each (interleaved) and, with --instructions, the instructions each
compile executes (valgrind cachegrind; independent of the machine's load).

Usage: sharding_cost.py [--reps N] [--instructions] [--compilers g++,nvcc] [--work DIR]
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compile_cost import ROOT, count_instructions, find_nvcc, measure  # noqa: E402

HEAD = """#include <devmesh/devmesh.hpp>
#include <devmesh/sharding.hpp>
namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
int query(int r) { return mesh2d{}.local_rank<"tp">(r); }
"""

SPECS = """
using dyn2d = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;
template <class S, class E>
long long ask(const S& s, const E& e, int r) {
  return s.local_shape(e, r)[0] + s.global_offset(e, r)[0] + s.local_size(e, r);
}
long long specs(int r, int n) {
  const dyn2d d(2, n);
  const dm::dextents<2> x(13, n);
  long long t = 0;
  t += ask(dm::sharding<mesh2d, dm::on<"dp", dm::shard<0>>>{}, dm::extents<13, 6>{}, r);
  t += ask(dm::sharding<mesh2d, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<1>>>{}, x, r);
  t += ask(dm::sharding<mesh2d, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<0>>>{}, x, r);
  t += ask(dm::sharding<mesh2d, dm::shard_order<0, "tp", "dp">>{}, x, r);
  t += ask(dm::sharding<mesh2d, dm::on<"dp", dm::partial<dm::reduction::sum>>, dm::on<"tp", dm::shard<1>>>{}, x, r);
  t += ask(dm::sharding<mesh2d, dm::chunks<dm::chunking::padded>, dm::on<"tp", dm::shard<0>>>{}, x, r);
  t += ask(dm::sharding<mesh3d, dm::on<"dp", dm::shard<0>>, dm::on<"cp", dm::shard<0>>, dm::on<"tp", dm::shard<1>>>{}, x, r);
  t += ask(dm::sharding<dyn2d, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<1>>>(d), x, r);
  t += ask(dm::sharding<dyn2d, dm::shard_order<0, "tp", "dp">>(d), dm::dextents<1>(n), r);
  t += ask(dm::parse_sharding("S(0),_S(1,2)", d), x, r);
  return t;
}
"""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--instructions", action="store_true")
    p.add_argument("--compilers", default="g++,nvcc")
    p.add_argument("--work", default=os.path.join(ROOT, "build", "sharding_cost"))
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    tus = {"without": HEAD, "specs10": HEAD + SPECS}
    cmds = {}
    for comp in a.compilers.split(","):
        for name, text in tus.items():
            ext = ".cu" if comp == "nvcc" else ".cpp"
            src = os.path.join(a.work, name + ext)
            with open(src, "w") as f:
                f.write(text)
            obj = os.path.join(a.work, f"{name}.{comp}.o")
            inc = "-I" + os.path.join(ROOT, "include")
            if comp == "nvcc":
                nvcc = find_nvcc()
                if not nvcc:
                    continue
                cmds[(comp, name)] = [nvcc, "-std=c++20", "-O2", "--expt-relaxed-constexpr", inc, "-c", src, "-o", obj]
            else:
                cmds[(comp, name)] = [comp, "-std=c++20", "-O2", inc, "-c", src, "-o", obj]
    cpu = {k: [] for k in cmds}
    for _ in range(a.reps):
        for k, cmd in cmds.items():
            cpu[k].append(measure(cmd)[1])
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}")
    print("| compiler | TU without specs | + ten specs | extra |" + (" instructions without | + ten specs | extra |" if a.instructions else ""))
    print("| --- | --- | --- | --- |" + (" --- | --- | --- |" if a.instructions else ""))
    for comp in a.compilers.split(","):
        if (comp, "without") not in cmds:
            continue
        base, ten = statistics.median(cpu[(comp, "without")]), statistics.median(cpu[(comp, "specs10")])
        row = f"| {comp} | {base:.2f} s | {ten:.2f} s | +{ten - base:.2f} s |"
        if a.instructions:
            ib = count_instructions(cmds[(comp, "without")], a.work)
            it = count_instructions(cmds[(comp, "specs10")], a.work)
            row += f" {ib / 1e9:.2f} G | {it / 1e9:.2f} G | +{(it - ib) / 1e9:.2f} G ({100 * (it - ib) / ib:.0f}%) |"
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
