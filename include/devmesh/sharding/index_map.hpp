// devmesh/sharding/index_map.hpp: which global indices of one tensor dim a position holds,
// as a function (never a list): its length, PyTorch's global offset, local index -> global
// index, and global index -> (coordinates, local index). O(number of mesh dims) each.
//
// Rules (chunk.hpp for one step):
//  - uneven and even: the mesh dims that shard the tensor dim apply in the mesh's dim order
//    (PyTorch's placements left to right), each splitting what the ones before left; a dim
//    in an explicit shard order applies as PyTorch's _StridedShard with the split factor
//    PyTorch derives from that order (DTensorSpec._convert_shard_order_to_StridedShard).
//  - padded: one contiguous block of ceil(extent / shards) per combination of coordinates,
//    numbered row-major in shard order; the last ones are short or empty (their padding).
#pragma once
#include "../core/config.hpp"
#include "chunk.hpp"
#include "extents.hpp"
#include "table.hpp"

namespace devmesh::detail {

/// The mesh dims that shard tensor dim t, in shard order (the explicit order if t has one,
/// else application order), and their number.
template <int N>
struct shard_dims {
  int dims[N > 0 ? N : 1]{};
  int count = 0;
};
/// (Each query below reads a placement_table<N> with its application_order<N>, or, in code
/// compiled once for every mesh, a table_view with an order_view: table.hpp.)
template <class Table, class Order>
DEVMESH_HOST_DEVICE constexpr shard_dims<capacity_of<Table>> dims_in_shard_order(const Table& t, const Order& o,
                                                                                int tensor_dim) {
  shard_dims<capacity_of<Table>> out{};
  const bool ordered = t.ordered(tensor_dim);
  for (int r = 0; r < t.ndims; ++r)
    for (int i = 0; i < t.ndims; ++i) {
      const int d = o.dims[i];
      if (t.at[d].is_shard() && t.at[d].tensor_dim == tensor_dim && (ordered ? t.order_rank[d] == r : i == r))
        out.dims[out.count++] = d;
    }
  return out;
}

/// PyTorch's split factor of dim d (1: Shard, else _StridedShard(t, split_factor)): the
/// product of the sizes of the dims before d in its explicit order that come after d in
/// application order. sizes[e] is dim e's size.
template <class Table, class Order>
DEVMESH_HOST_DEVICE constexpr tensor_index split_factor_of(const Table& t, const Order& o, const int* sizes, int d) {
  tensor_index f = 1;
  if (t.at[d].split_factor > 1) return t.at[d].split_factor;  // written as _StridedShard
  if (!t.at[d].is_shard() || t.order_rank[d] < 0) return f;
  for (int e = 0; e < t.ndims; ++e)
    if (t.at[e].is_shard() && t.at[e].tensor_dim == t.at[d].tensor_dim && t.order_rank[e] >= 0 &&
        t.order_rank[e] < t.order_rank[d] && o.pos[e] > o.pos[d])
      f *= sizes[e];
  return f;
}

/// One tensor dim as seen by one position: the steps that cut it (application order), or,
/// padded, its block.
template <int N>
struct dim_map {
  tensor_index extent = 0;
  bool padded = false;
  shard_step steps[N > 0 ? N : 1]{};
  tensor_index lengths[N + 1]{};  // lengths[k]: the list's length before step k
  int count = 0;
  tensor_index block = 0;       // padded: this position's block, row-major in shard order
  tensor_index block_size = 0;  // padded: ceil(extent / number of blocks)

  /// Number of global indices held (padding excluded).
  DEVMESH_HOST_DEVICE constexpr tensor_index length() const {
    if (!padded) return lengths[count];
    const tensor_index start = block * block_size;
    return start >= extent ? 0 : min_index(extent - start, block_size);
  }
  /// Padding after the held indices (padded only: block_size - length()).
  DEVMESH_HOST_DEVICE constexpr tensor_index padding() const { return padded ? block_size - length() : 0; }
  /// The global index of local index i (i in [0, length())).
  DEVMESH_HOST_DEVICE constexpr tensor_index global_index(tensor_index i) const {
    if (padded) return block * block_size + i;
    for (int k = count - 1; k >= 0; --k) i = step_to_parent(lengths[k], steps[k], i);
    return i;
  }
  /// PyTorch's global offset: the first held index, or the extent when none is held.
  DEVMESH_HOST_DEVICE constexpr tensor_index offset() const { return length() == 0 ? extent : global_index(0); }
  /// True if global index g is held. O(steps).
  DEVMESH_HOST_DEVICE constexpr bool contains(tensor_index g) const {
    if (g < 0 || g >= extent) return false;
    if (padded) return g >= block * block_size && g - block * block_size < length();
    for (int k = 0; k < count; ++k) {
      const located at = step_locate(lengths[k], steps[k].n, steps[k].split_factor, g);
      if (at.c != steps[k].c) return false;
      g = at.at;
    }
    return true;
  }
  /// True if the held indices are one interval, [offset(), offset() + length()): every step
  /// a plain Shard (no split factor).
  DEVMESH_HOST_DEVICE constexpr bool contiguous() const {
    for (int k = 0; k < count && !padded; ++k)
      if (steps[k].split_factor != 1) return false;
    return true;
  }
};

/// Number of global indices both maps hold: O(1) for two intervals, else O(the shorter one's
/// length x steps).
template <int N>
DEVMESH_HOST_DEVICE constexpr tensor_index overlap(const dim_map<N>& a, const dim_map<N>& b) {
  if (a.contiguous() && b.contiguous()) {
    const tensor_index lo = a.offset() > b.offset() ? a.offset() : b.offset();
    const tensor_index hi = min_index(a.offset() + a.length(), b.offset() + b.length());
    return hi > lo ? hi - lo : 0;
  }
  const dim_map<N>& shorter = a.length() <= b.length() ? a : b;
  const dim_map<N>& other = a.length() <= b.length() ? b : a;
  tensor_index n = 0;
  for (tensor_index i = 0; i < shorter.length(); ++i) n += other.contains(shorter.global_index(i));
  return n;
}

/// The map of tensor dim `tensor_dim` (extent `extent`) for a position whose coordinate along
/// dim e is coords[e]; sizes[e] is dim e's size: written into m, where only what the map reads
/// is written (a map of many dims kept by compiled code is not cleared first).
template <int C, class Table, class Order>
DEVMESH_HOST_DEVICE constexpr void map_dim_into(dim_map<C>& m, const Table& t, const Order& o, const int* sizes,
                                                const int* coords, int tensor_dim, tensor_index extent) {
  m.extent = extent;
  m.lengths[0] = extent;
  m.count = 0;
  m.padded = t.rule == chunking::padded;
  m.block = 0;
  m.block_size = 0;
  if (m.padded) {
    const auto sd = dims_in_shard_order(t, o, tensor_dim);
    tensor_index blocks = 1;
    for (int k = 0; k < sd.count; ++k) {
      m.block = m.block * sizes[sd.dims[k]] + coords[sd.dims[k]];
      blocks *= sizes[sd.dims[k]];
    }
    m.block_size = ceil_div(extent, blocks);
    return;
  }
  for (int i = 0; i < t.ndims; ++i) {
    const int d = o.dims[i];
    if (!t.at[d].is_shard() || t.at[d].tensor_dim != tensor_dim) continue;
    m.steps[m.count] = {sizes[d], coords[d], split_factor_of(t, o, sizes, d)};
    m.lengths[m.count + 1] = step_length(m.lengths[m.count], m.steps[m.count]);
    ++m.count;
  }
}
/// The map of tensor dim `tensor_dim` (map_dim_into), as a value.
template <class Table, class Order>
DEVMESH_HOST_DEVICE constexpr dim_map<capacity_of<Table>> map_dim(const Table& t, const Order& o, const int* sizes,
                                                                 const int* coords, int tensor_dim,
                                                                 tensor_index extent) {
  dim_map<capacity_of<Table>> m{};
  map_dim_into(m, t, o, sizes, coords, tensor_dim, extent);
  return m;
}

/// The coordinates along the dims that shard tensor dim `tensor_dim` of the positions that
/// hold global index g (g in [0, extent)): written to coords[d] for those dims.
template <class Table, class Order>
DEVMESH_HOST_DEVICE constexpr void locate_index(const Table& t, const Order& o, const int* sizes, int tensor_dim,
                                                tensor_index extent, tensor_index g, int* coords) {
  if (t.rule == chunking::padded) {
    const auto sd = dims_in_shard_order(t, o, tensor_dim);
    tensor_index blocks = 1;
    for (int k = 0; k < sd.count; ++k) blocks *= sizes[sd.dims[k]];
    tensor_index b = g / ceil_div(extent, blocks);
    for (int k = sd.count - 1; k >= 0; --k) {
      coords[sd.dims[k]] = static_cast<int>(b % sizes[sd.dims[k]]);
      b /= sizes[sd.dims[k]];
    }
    return;
  }
  tensor_index len = extent;
  for (int i = 0; i < t.ndims; ++i) {
    const int d = o.dims[i];
    if (!t.at[d].is_shard() || t.at[d].tensor_dim != tensor_dim) continue;
    const tensor_index f = split_factor_of(t, o, sizes, d);
    const located at = step_locate(len, sizes[d], f, g);
    coords[d] = at.c;
    len = step_length(len, {sizes[d], at.c, f});
    g = at.at;
  }
}

}  // namespace devmesh::detail
