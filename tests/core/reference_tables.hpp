// The rank tables of the reference docs (../shared/reference, see its README), as constexpr
// checks on a mesh of the right dims. Each check takes the mesh as a parameter, so the same
// table is a static_assert on a static mesh (reference_static.cpp, also under nvcc) and a
// doctest CHECK on a dynamic one (reference_tables.cpp). Where PyTorch's prose and code
// disagree, the tables follow the code (README items 1-3).
#pragma once
#include <devmesh/devmesh.hpp>

#include <algorithm>
#include <array>
#include <cstddef>

namespace reference {

namespace dm = devmesh;
using namespace devmesh::literals;
using row = std::array<int, 2>;

// Arrays by helper, not by CTAD: nvcc 13 miscompiles std::array{...} inside templates.
template <class... T>
constexpr std::array<int, sizeof...(T)> ints(T... v) {
  return {v...};
}
template <class... T>
constexpr std::array<row, sizeof...(T)> rows(T... v) {
  return {v...};
}

/// `sub` (a submesh) as seen from each of `ranks` is the 1-D list `want`.
template <class M, std::size_t R, std::size_t N>
constexpr bool on_ranks_1d(const M& sub, const std::array<int, R>& ranks, const std::array<int, N>& want) {
  if (M::ndim != 1 || sub.size() != static_cast<int>(N)) return false;
  for (int r : ranks) {
    if (!std::ranges::equal(sub.group(r), want)) return false;
    for (std::size_t i = 0; i < N; ++i)
      if (sub.rank_at({static_cast<int>(i)}, r) != want[i]) return false;
  }
  return true;
}

/// `sub` as seen from each of `ranks` is the 2-D array `want` (PyTorch's mesh tensor).
template <class M, std::size_t R, std::size_t A, std::size_t B>
constexpr bool on_ranks_2d(const M& sub, const std::array<int, R>& ranks,
                           const std::array<std::array<int, B>, A>& want) {
  if constexpr (M::ndim != 2) {
    return false;
  } else {
    if (sub.shape() != ints(static_cast<int>(A), static_cast<int>(B))) return false;
    for (int r : ranks) {
      int k = 0;
      const auto g = sub.group(r);
      for (std::size_t i = 0; i < A; ++i)
        for (std::size_t j = 0; j < B; ++j, ++k)
          if (sub.rank_at({static_cast<int>(i), static_cast<int>(j)}, r) != want[i][j] || g[k] != want[i][j])
            return false;
      if (sub.coordinate(want[1][0]) != ints(1, 0)) return false;
    }
    return true;
  }
}

// ---- device_mesh.py docstrings -----------------------------------------------------------

/// get_local_rank on a (2, 4) mesh: "mesh_2d.get_local_rank(mesh_dim=0) on rank 0, 1, 2, 3
/// would return 0 ... on rank 4, 5, 6, 7 would return 1"; mesh_dim=1 on ranks 0, 4 -> 0,
/// 1, 5 -> 1, 2, 6 -> 2, 3, 7 -> 3. Dims are named dp, tp as in __getitem__'s example.
template <class M>
constexpr bool local_rank_2x4(const M& m) {
  constexpr int dim0[8] = {0, 0, 0, 0, 1, 1, 1, 1};
  constexpr int dim1[8] = {0, 1, 2, 3, 0, 1, 2, 3};
  for (int r = 0; r < 8; ++r) {
    if (dm::local_rank<"dp">(m, r) != dim0[r] || dm::local_rank<"tp">(m, r) != dim1[r]) return false;
    if (m.coordinate(r) != ints(dim0[r], dim1[r])) return false;
  }
  return m.shape() == ints(2, 4) && m.size() == 8;
}

/// __getitem__, first example: mesh_2d["tp"] on ranks 0-3 is [0, 1, 2, 3], on 4-7 is
/// [4, 5, 6, 7]; mesh_2d["dp"] on 0, 4 is [0, 4], on 1, 5 is [1, 5], and so on.
template <class M>
constexpr bool getitem_2x4(const M& m) {
  const auto tp = m["tp"_dim];
  const auto dp = m["dp"_dim];
  return on_ranks_1d(tp, ints(0, 1, 2, 3), ints(0, 1, 2, 3)) &&
         on_ranks_1d(tp, ints(4, 5, 6, 7), ints(4, 5, 6, 7)) &&
         on_ranks_1d(dp, ints(0, 4), ints(0, 4)) && on_ranks_1d(dp, ints(1, 5), ints(1, 5)) &&
         on_ranks_1d(dp, ints(2, 6), ints(2, 6)) && on_ranks_1d(dp, ints(3, 7), ints(3, 7)) &&
         // The same through the named groups of the mesh itself.
         std::ranges::equal(dm::group<"tp">(m, 6), ints(4, 5, 6, 7)) &&
         std::ranges::equal(dm::group<"dp">(m, 6), ints(2, 6));
}

/// __getitem__, second example, on a (2, 2, 2) mesh named (dp, pp, cp):
/// mesh_3d["dp", "cp"] on 0, 1, 4, 5 is [[0, 1], [4, 5]], on 2, 3, 6, 7 is [[2, 3], [6, 7]];
/// mesh_3d["cp", "dp"] on 0, 1, 4, 5 is [[0, 4], [1, 5]], on 2, 3, 6, 7 is [[2, 6], [3, 7]]
/// (the docstring's transposed submesh: PyTorch's code rejects it, devmesh supports it).
template <class M>
constexpr bool getitem_2x2x2(const M& m) {
  const auto dp_cp = dm::slice<"dp", "cp">(m);
  const auto cp_dp = dm::slice<"cp", "dp">(m);
  return on_ranks_2d(dp_cp, ints(0, 1, 4, 5), rows(row{0, 1}, row{4, 5})) &&
         on_ranks_2d(dp_cp, ints(2, 3, 6, 7), rows(row{2, 3}, row{6, 7})) &&
         on_ranks_2d(cp_dp, ints(0, 1, 4, 5), rows(row{0, 4}, row{1, 5})) &&
         on_ranks_2d(cp_dp, ints(2, 3, 6, 7), rows(row{2, 6}, row{3, 7})) &&
         // Per-dim groups of the transposed submesh are the same as the original's.
         std::ranges::equal(dm::group<"dp">(cp_dp, 5), dm::group<"dp">(m, 5)) &&
         std::ranges::equal(dm::group<"cp">(cp_dp, 5), dm::group<"cp">(m, 5));
}

/// _flatten, corrected (README item 2): on a (2, 2, 2) mesh (dp, cp, tp),
/// mesh_3d["dp", "cp"]._flatten() is [0, 2, 4, 6] on ranks 0, 2, 4, 6 and [1, 3, 5, 7] on
/// 1, 3, 5, 7; afterwards mesh_3d["dp_cp"] is the same mesh.
template <class M>
constexpr bool flatten_dp_cp(const M& m) {
  const auto flat = m.template slice<"dp", "cp">().template flatten<"dp_cp">();
  const auto root_alias = dm::flatten<"dp_cp", "dp", "cp">(m);
  const auto sliced = dm::slice<"dp_cp">(root_alias);
  return on_ranks_1d(flat, ints(0, 2, 4, 6), ints(0, 2, 4, 6)) &&
         on_ranks_1d(flat, ints(1, 3, 5, 7), ints(1, 3, 5, 7)) &&
         on_ranks_1d(sliced, ints(0, 2, 4, 6), ints(0, 2, 4, 6)) &&
         on_ranks_1d(sliced, ints(1, 3, 5, 7), ints(1, 3, 5, 7)) &&
         std::ranges::equal(dm::group<"dp_cp">(root_alias, 3), ints(1, 3, 5, 7));
}

// ---- newer PyTorch (README, "Newer PyTorch behaviour worth matching") --------------------

/// Non-adjacent flatten: mesh_3d["dp", "tp"]._flatten() is [0, 1, 4, 5] on ranks 0, 1, 4, 5
/// (and [2, 3, 6, 7] on the others).
template <class M>
constexpr bool flatten_dp_tp(const M& m) {
  const auto flat = m.template slice<"dp", "tp">().template flatten<"dp_tp">();
  const auto alias = dm::flatten<"dp_tp", "dp", "tp">(m);
  return on_ranks_1d(flat, ints(0, 1, 4, 5), ints(0, 1, 4, 5)) &&
         on_ranks_1d(flat, ints(2, 3, 6, 7), ints(2, 3, 6, 7)) &&
         std::ranges::equal(dm::group<"dp_tp">(alias, 5), ints(0, 1, 4, 5)) &&
         std::ranges::equal(dm::group<"dp_tp">(alias, 6), ints(2, 3, 6, 7));
}

/// A flattened name registered on the root sliced with another root dim:
/// mesh_3d["dp_cp", "tp"] is [[0, 1], [2, 3], [4, 5], [6, 7]] on every rank.
template <class M>
constexpr bool slice_alias_with_tp(const M& m) {
  const auto s = m.template flatten<"dp_cp", "dp", "cp">().template slice<"dp_cp", "tp">();
  const auto table = rows(row{0, 1}, row{2, 3}, row{4, 5}, row{6, 7});
  if (s.shape() != ints(4, 2)) return false;
  for (int r = 0; r < 8; ++r)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 2; ++j)
        if (s.rank_at({i, j}, r) != table[i][j]) return false;
  return std::ranges::equal(s.group(5), ints(0, 1, 2, 3, 4, 5, 6, 7)) &&
         std::ranges::equal(dm::group<"dp_cp">(s, 5), ints(1, 3, 5, 7)) &&
         // The dims of the alias stay reachable.
         std::ranges::equal(dm::group<"cp">(s, 5), ints(5, 7));
}

// ---- mesh_notes_zh.md and the DeviceMesh tutorial -----------------------------------------

/// The row-major (2, 2, 2) (replicate, shard, tp) table of mesh_notes_zh.md.
template <class M>
constexpr bool notes_table_2x2x2(const M& m) {
  constexpr int table[8][4] = {{0, 0, 0, 0}, {0, 0, 1, 1}, {0, 1, 0, 2}, {0, 1, 1, 3},
                               {1, 0, 0, 4}, {1, 0, 1, 5}, {1, 1, 0, 6}, {1, 1, 1, 7}};
  for (const auto& row : table) {
    const std::array c{row[0], row[1], row[2]};
    if (m.rank_at(c) != row[3] || m.coordinate(row[3]) != c) return false;
    if (dm::local_rank<"replicate">(m, row[3]) != row[0] || dm::local_rank<"shard">(m, row[3]) != row[1] ||
        dm::local_rank<"tp">(m, row[3]) != row[2])
      return false;
  }
  return true;
}

/// mesh_3d["replicate", "shard"], corrected (README item 1): ranks 0, 2, 4, 6 get
/// [[0, 2], [4, 6]] and ranks 1, 3, 5, 7 get [[1, 3], [5, 7]]; mesh_3d["tp"] on rank r is
/// [r & ~1, r | 1]; hsdp_mesh["replicate"] and ["shard"] are its per-dim groups.
template <class M>
constexpr bool notes_hsdp_slice(const M& m) {
  const auto hsdp = dm::slice<"replicate", "shard">(m);
  const auto tp = m["tp"_dim];
  for (int r = 0; r < 8; ++r)
    if (!on_ranks_1d(tp, ints(r), ints(r & ~1, r | 1))) return false;
  return on_ranks_2d(hsdp, ints(0, 2, 4, 6), rows(row{0, 2}, row{4, 6})) &&
         on_ranks_2d(hsdp, ints(1, 3, 5, 7), rows(row{1, 3}, row{5, 7})) &&
         on_ranks_1d(hsdp["replicate"_dim], ints(2, 6), ints(2, 6)) &&
         on_ranks_1d(hsdp["shard"_dim], ints(5, 7), ints(5, 7));
}

/// The tutorial's HSDP groups on a (2, 4) (replicate, shard) mesh: shard groups
/// (0, 1, 2, 3), (4, 5, 6, 7); replicate groups (0, 4), (1, 5), (2, 6), (3, 7).
template <class M>
constexpr bool tutorial_hsdp(const M& m) {
  constexpr int shard[2][4] = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  constexpr int replicate[4][2] = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  for (const auto& g : shard)
    for (int r : g)
      if (!std::ranges::equal(dm::group<"shard">(m, r), g) ||
          !on_ranks_1d(m["shard"_dim], ints(r), ints(g[0], g[1], g[2], g[3])))
        return false;
  for (const auto& g : replicate)
    for (int r : g)
      if (!std::ranges::equal(dm::group<"replicate">(m, r), g) ||
          !on_ranks_1d(m["replicate"_dim], ints(r), ints(g[0], g[1])))
        return false;
  // Split arguments group the ranks the same way, keys in the tutorial's order.
  for (int r = 0; r < 8; ++r)
    if (dm::comm_split<"shard">(m, r) != devmesh::split_args{r / 4 * 4, r % 4} ||
        dm::comm_split<"replicate">(m, r) != devmesh::split_args{r % 4, r / 4})
      return false;
  return true;
}

}  // namespace reference
