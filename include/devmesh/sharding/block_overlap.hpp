// devmesh/sharding/block_overlap.hpp: the elements two blocks share (block a of spec A at one
// position, block b of spec B at another), in the global tensor's row-major order, each as its
// offset in both local blocks (row-major). Both sides of an exchange enumerate the same
// elements in the same order, so what one packs the other unpacks without indices on the
// wire. Host only: per tensor dim the runs of shared indices, one run (O(1), no heap) where
// both blocks are intervals, O(extent) where one is not (an explicit shard order); then O(1)
// per run of the last dim, so a step copies rows, not elements, and a block of whole rows as
// one run.
#pragma once
#include <array>
#include <cstddef>
#include <span>
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

/// The runs of one tensor dim: where both blocks are intervals (every spec but an explicit
/// order) at most one, held in place; a list (shared_runs) otherwise. A redistribute step
/// asks for them several times per peer, so the common case allocates nothing.
class dim_runs {
  shared_run one_{};
  std::vector<shared_run> list_;
  std::size_t size_ = 0;
  bool listed_ = false;

 public:
  template <int N>
  void assign(const dim_map<N>& a, const dim_map<N>& b) {
    listed_ = !(a.contiguous() && b.contiguous());
    if (listed_) {
      list_ = shared_runs(a, b);
      size_ = list_.size();
      return;
    }
    const tensor_index lo = a.offset() > b.offset() ? a.offset() : b.offset();
    const tensor_index hi = min_index(a.offset() + a.length(), b.offset() + b.length());
    one_ = {lo - a.offset(), lo - b.offset(), hi > lo ? hi - lo : 0};
    size_ = hi > lo ? 1 : 0;
  }
  const shared_run* begin() const noexcept { return listed_ ? list_.data() : &one_; }
  const shared_run* end() const noexcept { return begin() + size_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  const shared_run& operator[](std::size_t i) const noexcept { return begin()[i]; }
  /// The dim is whole in both blocks (of lengths la and lb): one run over all of it.
  bool whole(tensor_index la, tensor_index lb) const noexcept {
    return size_ == 1 && one_.a == 0 && one_.b == 0 && !listed_ && one_.len == la && one_.len == lb;
  }
};

/// The index maps of one block (spec s at position p) along every tensor dim: what
/// for_each_shared_run intersects, computed once where a step meets the block several times.
template <class Spec, class E>
auto block_maps_of(const Spec& s, int p, const E& ext) {
  std::array<decltype(s.held(ext, p, 0)), E::rank_value> m{};
  for (int t = 0; t < E::rank_value; ++t) m[static_cast<std::size_t>(t)] = s.held(ext, p, t);
  return m;
}

/// What walking two blocks keeps per tensor dim: its shared runs, both blocks' lengths and
/// strides, and where the walk is (a run, an index in it). The caller's storage, one per
/// tensor dim: an array in a typed query, kept by the thread in compiled code (no heap once
/// warm).
struct block_walk_dim {
  dim_runs runs;
  tensor_index shape_a = 0, shape_b = 0, stride_a = 0, stride_b = 0, within = 0;
  std::size_t run = 0;
};

/// The element offsets of the runs two blocks share, walked as an odometer over the tensor
/// dims before the last one that is not whole in both: f(offset in a, offset in b, n) per run.
template <class F>
tensor_index walk_shared_runs(std::span<block_walk_dim> w, int last, tensor_index inner, F& f) {
  const shared_run *first = w[last].runs.begin(), *end = w[last].runs.end();
  tensor_index row = 0;  // elements per index of the dims before `last`
  for (auto* r = first; r != end; ++r) row += r->len * inner;
  const auto emit = [&](tensor_index oa, tensor_index ob) {
    for (auto* r = first; r != end; ++r) f(oa + r->a * inner, ob + r->b * inner, r->len * inner);
  };
  const int loop = last - 1;  // the dim before `last`, looped directly; an odometer over those before
  if (loop < 0) {
    emit(0, 0);
    return row;
  }
  tensor_index per_step = 0;  // elements per step of the odometer
  for (const auto& r : w[loop].runs) per_step += r.len * row;
  for (int t = 0; t < loop; ++t) w[t].run = 0, w[t].within = 0;
  tensor_index n = 0;
  for (;;) {
    tensor_index oa = 0, ob = 0;
    for (int t = 0; t < loop; ++t) {
      const auto& r = w[t].runs[w[t].run];
      oa += (r.a + w[t].within) * w[t].stride_a, ob += (r.b + w[t].within) * w[t].stride_b;
    }
    for (const auto& r : w[loop].runs)
      for (tensor_index i = 0; i < r.len; ++i)
        emit(oa + (r.a + i) * w[loop].stride_a, ob + (r.b + i) * w[loop].stride_b);
    n += per_step;
    int t = loop - 1;
    for (; t >= 0; --t) {
      if (++w[t].within < w[t].runs[w[t].run].len) break;
      w[t].within = 0;
      if (++w[t].run < w[t].runs.size()) break;
      w[t].run = 0;
    }
    if (t < 0) return n;
  }
}

/// for_each_shared_run on two blocks' maps (one per tensor dim; checked specs), walked in w
/// (one entry per tensor dim): a 0-D tensor's one element, else the runs of every dim, the
/// trailing dims whole in both blocks folded into the runs of the dim before them.
template <class Map, class F>
tensor_index for_each_shared_run_in(std::span<const Map> ma, std::span<const Map> mb, std::span<block_walk_dim> w,
                                    F&& f) {
  const int R = static_cast<int>(ma.size());
  if (R == 0) {
    f(tensor_index{0}, tensor_index{0}, tensor_index{1});
    return 1;
  }
  for (int t = R - 1; t >= 0; --t) {
    w[t].shape_a = ma[t].length(), w[t].shape_b = mb[t].length();
    w[t].runs.assign(ma[t], mb[t]);
    if (w[t].runs.empty()) return 0;
  }
  int last = R - 1;
  tensor_index inner = 1;
  while (last > 0 && w[last].runs.whole(w[last].shape_a, w[last].shape_b)) inner *= w[last--].shape_a;
  tensor_index sa = inner, sb = inner;
  for (int t = last; t >= 0; --t) {
    w[t].stride_a = sa, w[t].stride_b = sb;
    sa *= w[t].shape_a, sb *= w[t].shape_b;
  }
  return walk_shared_runs(w, last, inner, f);
}

/// for_each_shared_run on two blocks' maps (block_maps_of; checked specs).
template <class Map, std::size_t R, class F>
tensor_index for_each_shared_run_in(const std::array<Map, R>& ma, const std::array<Map, R>& mb, F&& f) {
  std::array<block_walk_dim, R> w;
  return for_each_shared_run_in(std::span<const Map>(ma), std::span<const Map>(mb), std::span<block_walk_dim>(w), f);
}

}  // namespace detail

/// Calls f(offset in a's block, offset in b's block, n) for every run of n elements that spec
/// a's block at position p and spec b's block at position q both hold and that are
/// consecutive in both blocks, in global row-major order; returns the number of elements.
/// Runs are maximal along the last tensor dim, and span rows where the trailing dims are whole
/// in both blocks (a block of rows is one run). a and b are specs on one mesh (padded specs
/// excluded: their padding is not an element). What a step packs and unpacks, a run at a time.
template <class SpecA, class SpecB, class E, class F>
tensor_index for_each_shared_run(const SpecA& a, int p, const SpecB& b, int q, const E& ext, F&& f) {
  a.check(ext), b.check(ext);  // chunking::even on an uneven extent throws, as local_shape does
  return detail::for_each_shared_run_in(detail::block_maps_of(a, p, ext), detail::block_maps_of(b, q, ext), f);
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
