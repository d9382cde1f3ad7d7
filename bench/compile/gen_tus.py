#!/usr/bin/env python3
"""Writes the translation units whose compile cost bench/compile measures.

  baseline.cpp   <mpi.h> + <array> + <span>, and a main that uses them
  include.cpp    the same + <devmesh/devmesh.hpp>
  meshes10.cpp   the same + 10 distinct meshes (half dynamic), each sliced, flattened,
                 unflattened and queried at run time
  slices63.cpp   the same + a 6-dim mesh and every one of its 63 slices, each queried
  include_mpi.cpp  (with --mpi) baseline + devmesh.hpp with its MPI backend switched on

usage: gen_tus.py OUT_DIR [--mpi]
"""
import itertools
import os
import sys

PRELUDE = """#include <mpi.h>
#include <array>
#include <span>
"""
BASE_MAIN = """
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::array<int, 4> buf{1, 2, 3, 4};
  std::span<int> s(buf);
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  int acc = static_cast<int>(s.size()) + r + extra(r);
  MPI_Finalize();
  return acc == 0;
}
"""


def tu(body):
    return PRELUDE + body + BASE_MAIN


def baseline():
    return tu("static int extra(int r) { return r; }\n")


def include():
    return tu("#include <devmesh/devmesh.hpp>\nstatic int extra(int r) { return r; }\n")


def include_mpi():
    return tu("#define DEVMESH_WITH_MPI 1\n#include <devmesh/devmesh.hpp>\nstatic int extra(int r) { return r; }\n")


def meshes10():
    out = ["#include <devmesh/devmesh.hpp>", "namespace dm = devmesh;"]
    calls = []
    for i in range(10):
        pp = i + 2
        dynamic = i % 2 == 1
        dp = 'dm::dim<"dp">' if dynamic else 'dm::dim<"dp", 2>'
        make = f"M::for_world(2 * {pp} * 2 * 4)" if dynamic else "M{}"
        out.append(f"""namespace mesh{i} {{
using M = dm::mesh<{dp}, dm::dim<"pp", {pp}>, dm::dim<"cp", 2>, dm::dim<"tp", 4>>;
int run(int r) {{
  const auto m = {make};
  r %= m.size();
  const auto s = m.slice<"dp", "tp">();
  const auto f = m.flatten<"dp_cp", "dp", "cp">();
  const auto u = m.unflatten<"tp", dm::dim<"tpa", 2>, dm::dim<"tpb", 2>>();
  const auto g = f.slice<"pp", "dp_cp">();
  return s.group(r)[1] + f.comm_split<"dp_cp">(r).key + u.local_rank<"tpb">(r) + m.coordinate(r)[1] +
         g.group<"dp_cp">(r).size() + m["cp"_dim].size() + s.size<"tp">();
}}
}}  // namespace mesh{i}""")
        calls.append(f"mesh{i}::run(r)")
    out.insert(2, "using namespace dm::literals;")
    out.append("static int extra(int r) { return " + " + ".join(calls) + "; }")
    return tu("\n".join(out) + "\n")


def slices63():
    names = ["a", "b", "c", "d", "e", "f"]
    out = ["#include <devmesh/devmesh.hpp>", "namespace dm = devmesh;",
           "using M6 = dm::mesh<" + ", ".join(f'dm::dim<"{n}", 2>' for n in names) + ">;",
           "static int extra(int r) {", "  constexpr M6 m{};", "  r %= m.size();", "  int acc = 0;"]
    count = 0
    for k in range(1, 7):
        for subset in itertools.combinations(names, k):
            args = ", ".join(f'"{n}"' for n in subset)
            out.append(f"  acc += m.slice<{args}>().group(r)[1 % (1 << {k})] + m.comm_split<{args}>(r).key;")
            count += 1
    assert count == 63
    out += ["  return acc;", "}"]
    return tu("\n".join(out) + "\n")


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    tus = [("baseline", baseline()), ("include", include()), ("meshes10", meshes10()), ("slices63", slices63())]
    if "--mpi" in sys.argv[2:]:
        tus.insert(2, ("include_mpi", include_mpi()))
    for name, text in tus:
        for ext in ("cpp", "cu"):
            with open(os.path.join(out_dir, f"{name}.{ext}"), "w") as f:
                f.write(text)


main()
