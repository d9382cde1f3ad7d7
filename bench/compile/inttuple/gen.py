#!/usr/bin/env python3
"""Writes the translation units of the IntTuple comparison (see README.md).

Four sides, same work:
  hana       hana_layout.hpp   (Boost.Hana IntTuples, CuTe style, Hana's algorithms)
  hana_lean  hana_layout.hpp with HL_LEAN (same IntTuples, index_sequence folds: an ablation)
  struct   struct_layout.hpp (constexpr structs as template arguments, devmesh style)
  devmesh  <devmesh/core/mesh.hpp> (the real devmesh::mesh API: names, checks, aliases on top)

TUs, each defining `int extra(int r, int n)` (n = 2 at run time: the dynamic sizes):
  bare            includes nothing
  include_SIDE    the side's header only
  meshes10_SIDE   10 3-D meshes (dp, cp, tp): i % 3 == 0 all static, 1 dp dynamic, 2 dp and
                  tp dynamic; each sliced (tp, dp), flattened (dp, cp), unflattened (cp ->
                  2 x cp/2), the flattened one sliced again (tp, dp_cp) and its dp_cp coalesced;
                  queried: rank -> coordinate (all dims, one dim), coordinate -> rank, group
                  ranks, (color, key) split, dim sizes, the coalesced dim as a function
  slices63s_SIDE  a static 6-dim mesh (2 x 2 x 2 x 2 x 2 x 2) and all its 63 slices, each
                  queried (one group rank, one split key)
  slices63d_SIDE  the same with dims b and e dynamic

usage: gen.py OUT_DIR
"""
import itertools
import os
import sys

SIDES = ("struct", "hana", "hana_lean", "devmesh")
HEADER = {"hana": '#include "hana_layout.hpp"', "struct": '#include "struct_layout.hpp"',
          "hana_lean": '#define HL_LEAN 1\n#include "hana_layout.hpp"',
          "devmesh": "#include <devmesh/core/mesh.hpp>\nnamespace dm = devmesh;"}
NS = {"hana": "hl", "hana_lean": "hl", "struct": "sl"}


def mesh_kind(i):
    """(cp, dp dynamic, tp dynamic) of mesh i of meshes10."""
    return 2 * (i + 2), i % 3 >= 1, i % 3 == 2


def root3(side, i):
    cp, dp_dyn, tp_dyn = mesh_kind(i)
    if side in ("hana", "hana_lean"):
        return f"hl::make_root({'n' if dp_dyn else 'hl::C<2>'}, hl::C<{cp}>, {f'n + {i}' if tp_dyn else f'hl::C<{i + 2}>'})"
    sizes = ["-1" if dp_dyn else "2", str(cp), "-1" if tp_dyn else str(i + 2)]
    dyn = (["n"] if dp_dyn else []) + ([f"n + {i}"] if tp_dyn else [])
    return f"sl::make_root<{', '.join(sizes)}>({', '.join(dyn)})"


def meshes10(side):
    out = [HEADER[side]]
    for i in range(10):
        cp, dp_dyn, tp_dyn = mesh_kind(i)
        if side == "devmesh":
            dp = 'dm::dim<"dp">' if dp_dyn else 'dm::dim<"dp", 2>'
            tp = 'dm::dim<"tp">' if tp_dyn else f'dm::dim<"tp", {i + 2}>'
            args = ", ".join((["n"] if dp_dyn else []) + ([f"n + {i}"] if tp_dyn else []))
            out.append(f"""namespace mesh{i} {{
using M = dm::mesh<{dp}, dm::dim<"cp", {cp}>, {tp}>;
int run(int r, int n) {{
  const auto m = {f"M({args})" if args else "M{}"};
  (void)n;
  r %= m.size();
  const auto s = m.slice<"tp", "dp">();
  const auto f = m.flatten<"dp_cp", "dp", "cp">();
  const auto u = m.unflatten<"cp", dm::dim<"cpa", 2>, dm::dim<"cpb", {cp // 2}>>();
  const auto g = f.slice<"tp", "dp_cp">();
  const auto c = g.dim_layout(1).coalesce();
  const auto x = m.coordinate(r);
  const int x0 = x[0], x1 = x[1], x2 = x[2];
  unsigned acc = (x0 * 31u + x1) * 31u + x2;
  acc = acc * 31u + m.rank_at({{x0, (x1 + 1) % m.size<"cp">(), x2}});
  acc = acc * 31u + s.group(r)[1];
  const auto sp = f.comm_split<"dp_cp">(r);
  acc = acc * 31u + sp.color;
  acc = acc * 31u + sp.key;
  acc = acc * 31u + u.local_rank<"cpb">(r);
  acc = acc * 31u + g.size<"dp_cp">() + g.coordinate(r)[1];
  acc = acc * 31u + m.size<"cp">() + s.size<"tp">();
  acc = acc * 31u + c(r % g.size<"dp_cp">());
  return static_cast<int>(acc);
}}
}}  // namespace mesh{i}""")
        else:
            ns = NS[side]
            out.append(f"""namespace mesh{i} {{
int run(int r, int n) {{
  const auto m = {root3(side, i)};
  (void)n;
  r %= int({ns}::size(m));
  const auto s = {ns}::slice<2, 0>(m);
  const auto f = {ns}::flatten<0, 1>(m);
  const auto u = {ns}::unflatten<1, 2, {cp // 2}>(m);
  const auto g = {ns}::slice<2, 3>(f);
  const auto c = {ns}::coalesce<1>(g);
  const auto x = {ns}::coordinates(m, r);
  const int x0 = {ns}::get<0>(x), x1 = {ns}::get<1>(x), x2 = {ns}::get<2>(x);
  unsigned acc = (x0 * 31u + x1) * 31u + x2;
  acc = acc * 31u + {ns}::rank_at(m, {ns}::make_coord(x0, (x1 + 1) % int({ns}::size<1>(m)), x2));
  acc = acc * 31u + {ns}::group_at(s, r, 1);
  const auto sp = {ns}::split<3>(f, r);
  acc = acc * 31u + sp.color;
  acc = acc * 31u + sp.key;
  acc = acc * 31u + {ns}::coordinate<2>(u, r);
  acc = acc * 31u + int({ns}::size<1>(g)) + {ns}::coordinate<1>(g, r);
  acc = acc * 31u + int({ns}::size<1>(m)) + int({ns}::size<0>(s));
  acc = acc * 31u + {ns}::offset<0>(c, r % int({ns}::size<0>(c)));
  return static_cast<int>(acc);
}}
}}  // namespace mesh{i}""")
    out.append("int extra(int r, int n) {\n  unsigned acc = 0;\n" +
               "".join(f"  acc = acc * 1000003u + static_cast<unsigned>(mesh{i}::run(r, n));\n" for i in range(10)) +
               "  return static_cast<int>(acc);\n}")
    return "\n".join(out) + "\n"


def slices63(side, dynamic):
    names = ["a", "b", "c", "d", "e", "f"]
    dyn = {"b", "e"} if dynamic else set()
    out = [HEADER[side]]
    if side == "devmesh":
        dims = ", ".join(f'dm::dim<"{x}">' if x in dyn else f'dm::dim<"{x}", 2>' for x in names)
        out += [f"using M6 = dm::mesh<{dims}>;", "int extra(int r, int n) {",
                "  const M6 m(n, n);" if dynamic else "  constexpr M6 m{};", "  (void)n;", "  r %= m.size();"]
    elif side in ("hana", "hana_lean"):
        sizes = ", ".join("n" if x in dyn else "hl::C<2>" for x in names)
        out += ["int extra(int r, int n) {", f"  const auto m = hl::make_root({sizes});", "  (void)n;", "  r %= int(hl::size(m));"]
    else:
        sizes = ", ".join("-1" if x in dyn else "2" for x in names)
        out += ["int extra(int r, int n) {", f"  const auto m = sl::make_root<{sizes}>({'n, n' if dynamic else ''});", "  (void)n;",
                "  r %= sl::size(m);"]
    out.append("  unsigned acc = 0;")
    count = 0
    for k in range(1, 7):
        for subset in itertools.combinations(range(6), k):
            i = f"1 % {1 << k}"
            if side == "devmesh":
                args = ", ".join(f'"{names[j]}"' for j in subset)
                out.append(f"  acc = acc * 31u + m.slice<{args}>().group(r)[{i}] + m.comm_split<{args}>(r).key;")
            else:
                ns = NS[side]
                idx = ", ".join(str(j) for j in subset)
                out.append(f"  {{ const auto s = {ns}::slice<{idx}>(m); acc = acc * 31u + {ns}::group_at(s, r, {i}) + {ns}::split_all(s, r).key; }}")
            count += 1
    assert count == 63
    out += ["  return static_cast<int>(acc);", "}"]
    return "\n".join(out) + "\n"


CHECK_MAIN = """// Links with one TU: prints a hash of extra(r, 2) over r in [0, 4096) and a few values.
#include <cstdio>
int extra(int r, int n);
int main() {
  unsigned long long h = 0;
  for (int r = 0; r < 4096; ++r) h = h * 1000003ull + static_cast<unsigned>(extra(r, 2));
  std::printf("%llu %d %d %d\\n", h, extra(0, 2), extra(5, 2), extra(77, 2));
  return 0;
}
"""


def tus():
    yield "bare", "int extra(int r, int n) { return r + n; }\n"
    for side in SIDES:
        yield f"include_{side}", HEADER[side] + "\nint extra(int r, int n) { return r + n; }\n"
        yield f"meshes10_{side}", meshes10(side)
        yield f"slices63s_{side}", slices63(side, False)
        yield f"slices63d_{side}", slices63(side, True)


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name, text in tus():
        for ext in ("cpp", "cu"):
            with open(os.path.join(out_dir, f"{name}.{ext}"), "w") as f:
                f.write(text)
    with open(os.path.join(out_dir, "check_main.cpp"), "w") as f:
        f.write(CHECK_MAIN)


if __name__ == "__main__":
    main()
