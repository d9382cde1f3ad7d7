// devmesh/sharding/block_overlap.hpp: the elements two blocks share (block a of spec A at one
// position, block b of spec B at another), in the global tensor's row-major order, each as its
// offset in both local blocks (row-major). Both sides of an exchange enumerate the same
// elements in the same order, so what one packs the other unpacks without indices on the
// wire. Host only: per tensor dim one list of the shared indices, O(extent) where a block is
// not an interval (an explicit shard order), O(shared) otherwise; then O(1) per element.
#pragma once
#include <array>
#include <utility>
#include <vector>

#include "extents.hpp"
#include "index_map.hpp"

namespace devmesh {

namespace detail {

/// The (local index in a, local index in b) of every global index both maps hold, ascending.
template <int N>
std::vector<std::pair<tensor_index, tensor_index>> shared_indices(const dim_map<N>& a, const dim_map<N>& b) {
  std::vector<std::pair<tensor_index, tensor_index>> out;
  if (a.contiguous() && b.contiguous()) {
    const tensor_index lo = a.offset() > b.offset() ? a.offset() : b.offset();
    const tensor_index hi = min_index(a.offset() + a.length(), b.offset() + b.length());
    for (tensor_index g = lo; g < hi; ++g) out.emplace_back(g - a.offset(), g - b.offset());
    return out;
  }
  std::vector<tensor_index> in_a(static_cast<std::size_t>(a.extent), -1), in_b(static_cast<std::size_t>(b.extent), -1);
  for (tensor_index i = 0; i < a.length(); ++i) in_a[static_cast<std::size_t>(a.global_index(i))] = i;
  for (tensor_index i = 0; i < b.length(); ++i) in_b[static_cast<std::size_t>(b.global_index(i))] = i;
  for (std::size_t g = 0; g < in_a.size(); ++g)
    if (in_a[g] >= 0 && in_b[g] >= 0) out.emplace_back(in_a[g], in_b[g]);
  return out;
}

}  // namespace detail

/// Calls f(offset in a's block, offset in b's block) for every element that spec a's block at
/// position p and spec b's block at position q both hold, in global row-major order; returns
/// their number. a and b are specs on one mesh (padded specs excluded: their padding is not
/// an element).
template <class SpecA, class SpecB, class E, class F>
tensor_index for_each_shared(const SpecA& a, int p, const SpecB& b, int q, const E& ext, F&& f) {
  constexpr int R = E::rank_value;
  if constexpr (R == 0) {
    f(tensor_index{0}, tensor_index{0});
    return 1;
  } else {
    using list = std::vector<std::pair<tensor_index, tensor_index>>;
    std::array<list, R> shared;
    std::array<tensor_index, R> stride_a{}, stride_b{};
    const auto shape_a = a.local_shape(ext, p), shape_b = b.local_shape(ext, q);
    tensor_index sa = 1, sb = 1;
    for (int t = R - 1; t >= 0; --t) {
      shared[t] = detail::shared_indices(a.held(ext, p, t), b.held(ext, q, t));
      if (shared[t].empty()) return 0;
      stride_a[t] = sa, stride_b[t] = sb;
      sa *= shape_a[t], sb *= shape_b[t];
    }
    std::array<std::size_t, R> at{};  // an odometer over the lists, last dim fastest
    tensor_index n = 0;
    for (;;) {
      tensor_index oa = 0, ob = 0;
      for (int t = 0; t < R; ++t) oa += shared[t][at[t]].first * stride_a[t], ob += shared[t][at[t]].second * stride_b[t];
      f(oa, ob);
      ++n;
      int t = R - 1;
      while (t >= 0 && ++at[t] == shared[t].size()) at[t] = 0, --t;
      if (t < 0) return n;
    }
  }
}

}  // namespace devmesh
