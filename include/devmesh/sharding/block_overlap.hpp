// devmesh/sharding/block_overlap.hpp: the elements two blocks share (block a of spec A at one
// position, block b of spec B at another), in the global tensor's row-major order, each as its
// offset in both local blocks (row-major). Both sides of an exchange enumerate the same
// elements in the same order, so what one packs the other unpacks without indices on the
// wire. Host only: per tensor dim a list of runs of shared indices, one run (O(1)) where both
// blocks are intervals, O(extent) where one is not (an explicit shard order); then O(1) per run
// of the last dim, so a step copies rows, not elements.
#pragma once
#include <array>
#include <utility>
#include <vector>

#include "extents.hpp"
#include "index_map.hpp"

namespace devmesh {

namespace detail {

/// A run of global indices both maps hold, consecutive in both blocks: local index a in the
/// first, b in the second, len of them.
struct shared_run {
  tensor_index a = 0, b = 0, len = 0;
};

/// Every global index both maps hold, ascending, as maximal runs: one run for two intervals
/// (O(1)), else O(extent) (an explicit order's blocks are not intervals).
template <int N>
std::vector<shared_run> shared_runs(const dim_map<N>& a, const dim_map<N>& b) {
  std::vector<shared_run> out;
  if (a.contiguous() && b.contiguous()) {
    const tensor_index lo = a.offset() > b.offset() ? a.offset() : b.offset();
    const tensor_index hi = min_index(a.offset() + a.length(), b.offset() + b.length());
    if (hi > lo) out.push_back({lo - a.offset(), lo - b.offset(), hi - lo});
    return out;
  }
  std::vector<tensor_index> in_a(static_cast<std::size_t>(a.extent), -1), in_b(static_cast<std::size_t>(b.extent), -1);
  for (tensor_index i = 0; i < a.length(); ++i) in_a[static_cast<std::size_t>(a.global_index(i))] = i;
  for (tensor_index i = 0; i < b.length(); ++i) in_b[static_cast<std::size_t>(b.global_index(i))] = i;
  for (std::size_t g = 0; g < in_a.size(); ++g) {
    if (in_a[g] < 0 || in_b[g] < 0) continue;
    if (!out.empty() && out.back().a + out.back().len == in_a[g] && out.back().b + out.back().len == in_b[g])
      ++out.back().len;
    else
      out.push_back({in_a[g], in_b[g], 1});
  }
  return out;
}

}  // namespace detail

/// Calls f(offset in a's block, offset in b's block, n) for every run of n elements that spec
/// a's block at position p and spec b's block at position q both hold and that are
/// consecutive in both blocks (along the last tensor dim), in global row-major order; returns
/// the number of elements. a and b are specs on one mesh (padded specs excluded: their padding
/// is not an element). What a step packs and unpacks, a run at a time.
template <class SpecA, class SpecB, class E, class F>
tensor_index for_each_shared_run(const SpecA& a, int p, const SpecB& b, int q, const E& ext, F&& f) {
  constexpr int R = E::rank_value;
  if constexpr (R == 0) {
    f(tensor_index{0}, tensor_index{0}, tensor_index{1});
    return 1;
  } else {
    std::array<std::vector<detail::shared_run>, R> runs;
    std::array<tensor_index, R> stride_a{}, stride_b{};
    const auto shape_a = a.local_shape(ext, p), shape_b = b.local_shape(ext, q);
    tensor_index sa = 1, sb = 1;
    for (int t = R - 1; t >= 0; --t) {
      runs[t] = detail::shared_runs(a.held(ext, p, t), b.held(ext, q, t));
      if (runs[t].empty()) return 0;
      stride_a[t] = sa, stride_b[t] = sb;
      sa *= shape_a[t], sb *= shape_b[t];
    }
    tensor_index last = 0;  // elements per row of the last dim
    for (const auto& r : runs[R - 1]) last += r.len;
    std::array<std::size_t, R> run{};      // an odometer over the dims before the last:
    std::array<tensor_index, R> within{};  // a run, and an index in it, per dim
    tensor_index n = 0;
    for (;;) {
      tensor_index oa = 0, ob = 0;
      for (int t = 0; t + 1 < R; ++t) {
        const auto& r = runs[t][run[t]];
        oa += (r.a + within[t]) * stride_a[t], ob += (r.b + within[t]) * stride_b[t];
      }
      for (const auto& r : runs[R - 1]) f(oa + r.a, ob + r.b, r.len);
      n += last;
      int t = R - 2;
      for (; t >= 0; --t) {
        if (++within[t] < runs[t][run[t]].len) break;
        within[t] = 0;
        if (++run[t] < runs[t].size()) break;
        run[t] = 0;
      }
      if (t < 0) return n;
    }
  }
}

/// Calls f(offset in a's block, offset in b's block) for every element that spec a's block at
/// position p and spec b's block at position q both hold, in global row-major order; returns
/// their number (for_each_shared_run, an element at a time).
template <class SpecA, class SpecB, class E, class F>
tensor_index for_each_shared(const SpecA& a, int p, const SpecB& b, int q, const E& ext, F&& f) {
  return for_each_shared_run(a, p, b, q, ext, [&](tensor_index oa, tensor_index ob, tensor_index len) {
    for (tensor_index i = 0; i < len; ++i) f(oa + i, ob + i);
  });
}

}  // namespace devmesh
