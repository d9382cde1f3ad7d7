// devmesh/sharding/table.hpp: a spec as a value: one placement per mesh dim (aliases
// included), the explicit shard orders, the chunking rule. Static specs compute it at compile
// time (spec.hpp), dynamic ones at run time (dynamic_spec.hpp), with the same checks
// (add_placement, begin_shard_order); the queries read only this and the mesh.
#pragma once
#include "../core/config.hpp"
#include "../core/layout.hpp"
#include "placement.hpp"

namespace devmesh {

namespace detail {
/// True if one of the n placements at[] shards tensor dim t in an explicit order (order_rank).
DEVMESH_HOST_DEVICE constexpr bool shards_in_order(const placement* at, const int* order_rank, int n, int t) {
  for (int d = 0; d < n; ++d)
    if (at[d].is_shard() && at[d].tensor_dim == t && order_rank[d] >= 0) return true;
  return false;
}
/// The largest tensor dim one of the n placements at[] shards, or -1.
DEVMESH_HOST_DEVICE constexpr int max_sharded_dim(const placement* at, int n) {
  int t = -1;
  for (int d = 0; d < n; ++d)
    if (at[d].is_shard() && at[d].tensor_dim > t) t = at[d].tensor_dim;
  return t;
}
}  // namespace detail

/// The placements of a spec on a mesh of N dims (aliases included), as a structural value.
template <int N>
struct placement_table {
  static constexpr int ndims = N;
  /// Placement of mesh dim d (replicate where nothing is placed).
  placement at[N > 0 ? N : 1]{};
  /// True where a clause names dim d (an explicit replicate included).
  bool placed[N > 0 ? N : 1]{};
  /// Position of dim d in its tensor dim's explicit shard order, or -1 (mesh-dim order).
  int order_rank[N > 0 ? N : 1]{};
  /// How sharded tensor dims are cut.
  chunking rule = chunking::uneven;

  /// An empty spec: every dim replicated.
  constexpr placement_table() {
    for (int d = 0; d < (N > 0 ? N : 1); ++d) order_rank[d] = -1;
  }
  /// Number of mesh dims that shard tensor dim t.
  DEVMESH_HOST_DEVICE constexpr int shard_count(int t) const {
    int k = 0;
    for (int d = 0; d < N; ++d) k += at[d].is_shard() && at[d].tensor_dim == t;
    return k;
  }
  /// True if tensor dim t has an explicit shard order.
  DEVMESH_HOST_DEVICE constexpr bool ordered(int t) const { return detail::shards_in_order(at, order_rank, N, t); }
  /// The largest sharded tensor dim, or -1.
  DEVMESH_HOST_DEVICE constexpr int max_tensor_dim() const { return detail::max_sharded_dim(at, N); }
  /// Same placements, orders and rule.
  friend constexpr bool operator==(const placement_table&, const placement_table&) = default;
};

namespace detail {

/// The most dims a table_view reads: a plan's groups are bit sets of 32 dims (plan.hpp).
inline constexpr int max_view_dims = 32;

/// A placement table read in place, of any number of dims (aliases included): a spec as plain
/// data, what code compiled once for every mesh type reads (redistribute's executor). The same
/// members as placement_table<N>, ndims a value; valid while the table it views lives.
struct table_view {
  const placement* at = nullptr;
  const bool* placed = nullptr;
  const int* order_rank = nullptr;
  chunking rule = chunking::uneven;
  int ndims = 0;

  constexpr table_view() = default;
  /// A view of t.
  template <int N>
  DEVMESH_HOST_DEVICE constexpr table_view(const placement_table<N>& t)  // NOLINT: implicit, as a span's
      : at(t.at), placed(t.placed), order_rank(t.order_rank), rule(t.rule), ndims(N) {}
  /// True if tensor dim t has an explicit shard order.
  DEVMESH_HOST_DEVICE constexpr bool ordered(int t) const { return shards_in_order(at, order_rank, ndims, t); }
  /// The largest sharded tensor dim, or -1.
  DEVMESH_HOST_DEVICE constexpr int max_tensor_dim() const { return max_sharded_dim(at, ndims); }
};

/// The number of dims a query over a table of type Table may meet (what its results hold):
/// N for placement_table<N>, max_view_dims for a table_view.
template <class Table>
struct table_capacity {
  static constexpr int value = Table::ndims;
};
template <>
struct table_capacity<table_view> {
  static constexpr int value = max_view_dims;
};
template <class Table>
inline constexpr int capacity_of = table_capacity<Table>::value;

/// What went wrong adding a placement: the kind, and the dims involved (mesh dim indices).
enum class table_issue_kind : int { none, unknown_dim, placed_twice, order_repeats, order_not_exclusive, partials_differ };
struct table_issue {
  table_issue_kind kind = table_issue_kind::none;
  int dim = -1;    // the dim being placed
  int other = -1;  // the dim it collides with
  int tensor_dim = -1;
  constexpr bool ok() const { return kind == table_issue_kind::none; }
};

/// Places p on dim d (order_rank >= 0: as the order_rank-th dim of an explicit shard order),
/// unless d is unknown (< 0) or already placed, or an alias of d or one of d's own dims is, or
/// p is a Partial of another reduction than a Partial already placed.
template <int N, int D, int M>
constexpr table_issue add_placement(placement_table<N>& t, const layout<D, M>& l, int d, devmesh::placement p,
                                    int order_rank) {
  if (d < 0 || d >= N) return {table_issue_kind::unknown_dim, d, -1, -1};
  for (int e = 0; e < N; ++e)
    if (t.placed[e] && (e == d || l.overlap(e, d))) return {table_issue_kind::placed_twice, d, e, -1};
  if (p.is_shard() && order_rank < 0 && t.ordered(p.tensor_dim))
    return {table_issue_kind::order_not_exclusive, d, -1, p.tensor_dim};
  // Partial values of two reductions (sum on one dim, max on another) have no one reduction
  // order that gives the tensor: PyTorch refuses them, and so does devmesh.
  if (p.is_partial())
    for (int e = 0; e < N; ++e)
      if (t.at[e].is_partial() && t.at[e].op != p.op) return {table_issue_kind::partials_differ, d, e, -1};
  t.at[d] = p;
  t.placed[d] = true;
  t.order_rank[d] = order_rank;
  return {};
}

/// Before an explicit shard order of tensor dim `tensor_dim` over `dims` (count of them):
/// no dim twice, and no other clause shards that tensor dim yet.
template <int N>
constexpr table_issue begin_shard_order(const placement_table<N>& t, int tensor_dim, const int* dims, int count) {
  for (int i = 0; i < count; ++i)
    for (int j = 0; j < i; ++j)
      if (dims[i] >= 0 && dims[i] == dims[j]) return {table_issue_kind::order_repeats, dims[i], -1, tensor_dim};
  for (int e = 0; e < N; ++e)
    if (t.at[e].is_shard() && t.at[e].tensor_dim == tensor_dim)
      return {table_issue_kind::order_not_exclusive, e, -1, tensor_dim};
  return {};
}

/// The order in which a mesh's dims apply their placements: the mesh's dims in order (PyTorch's
/// placements, left to right), each alias where its most significant mode is among them (a
/// flattened "dp_cp" of (dp, cp, tp) comes where dp is). pos[d] is dim d's place in `dims`.
template <int N>
struct application_order {
  int dims[N > 0 ? N : 1]{};
  int pos[N > 0 ? N : 1]{};
};
template <int D, int M>
constexpr application_order<D> order_of_dims(const layout<D, M>& l) {
  int key[D > 0 ? D : 1]{};
  for (int d = 0; d < D; ++d) {
    int m = l.first[d];
    while (m + 1 < l.first[d + 1] && l.shape[m] == 1) ++m;  // a size-1 mode has no digits
    key[d] = M + d;  // a dim without modes of its own: after the others (its shards are whole)
    for (int p = 0; p < l.first[l.nprimary] && m < l.first[d + 1]; ++p)
      if (l.equal_modes(p, m)) {
        key[d] = p;
        break;
      }
  }
  application_order<D> out{};
  for (int d = 0; d < D; ++d) {  // insertion sort by (key, d): D is small
    int i = d;
    while (i > 0 && key[out.dims[i - 1]] > key[d]) {
      out.dims[i] = out.dims[i - 1];
      --i;
    }
    out.dims[i] = d;
  }
  for (int i = 0; i < D; ++i) out.pos[out.dims[i]] = i;
  return out;
}

/// An application order read in place (dims[i], pos[d] as application_order's): with a
/// table_view, what compiled code reads.
struct order_view {
  const int* dims = nullptr;
  const int* pos = nullptr;

  constexpr order_view() = default;
  /// A view of o.
  template <int N>
  DEVMESH_HOST_DEVICE constexpr order_view(const application_order<N>& o) : dims(o.dims), pos(o.pos) {}  // NOLINT
};

}  // namespace detail
}  // namespace devmesh
