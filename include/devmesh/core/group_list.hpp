// devmesh/core/group_list.hpp: every group of some dims, computed as it is iterated, never
// listed: all_groups<"tp">(m), a forward range of rank_groups (each a first position and a
// dim_layout). What PyTorch's _get_all_submeshes and _init_process_groups walk (every group
// of the dims over the root's positions, whatever m was derived from); block_groups<"tp">(m,
// p), the groups inside the block of m that holds position p. constexpr, and no heap.
#pragma once
#include <cstddef>
#include <utility>

#include "fixed_string.hpp"
#include "group.hpp"
#include "layout.hpp"

namespace devmesh {

namespace detail {
/// The complement of layout g in a rank space of `root` positions (CuTe's complement): the
/// modes over the place values g's modes leave free, most significant first, so that it lists
/// the first positions of g's groups in ascending order. g's modes are disjoint digit groups
/// (any two of them: one ends where, or below a multiple of where, the other starts).
template <int C, int K>
constexpr dim_layout<C> complement(const dim_layout<K>& g, int root) {
  int order[K > 0 ? K : 1]{};  // g's modes with digits, by stride ascending
  int n = 0;
  for (int i = 0; i < g.count; ++i) {
    if (g.shape[i] == 1) continue;
    int at = n++;
    for (; at > 0 && g.stride[order[at - 1]] > g.stride[i]; --at) order[at] = order[at - 1];
    order[at] = i;
  }
  dim_layout<C> gaps{};  // least significant first, reversed below
  long long place = 1;
  const auto gap_to = [&](long long end) {
    if (end > place) {
      gaps.shape[gaps.count] = static_cast<int>(end / place);
      gaps.stride[gaps.count++] = static_cast<int>(place);
    }
  };
  for (int k = 0; k < n; ++k) {
    gap_to(g.stride[order[k]]);
    place = static_cast<long long>(g.stride[order[k]]) * g.shape[order[k]];
  }
  gap_to(root);
  for (int i = 0, j = gaps.count - 1; i < j; ++i, --j) {
    const int s = gaps.shape[i], t = gaps.stride[i];
    gaps.shape[i] = gaps.shape[j], gaps.stride[i] = gaps.stride[j];
    gaps.shape[j] = s, gaps.stride[j] = t;
  }
  return gaps;
}

/// The modes of `block` that are not modes of g, in block's order: within one block, where
/// the groups of g start.
template <int C, int B, int K>
constexpr dim_layout<C> remaining_modes(const dim_layout<B>& block, const dim_layout<K>& g) {
  dim_layout<C> out{};
  for (int i = 0; i < block.count; ++i) {
    bool in_g = false;
    for (int k = 0; k < g.count; ++k) in_g = in_g || (g.shape[k] == block.shape[i] && g.stride[k] == block.stride[i]);
    if (in_g || block.shape[i] == 1) continue;
    out.shape[out.count] = block.shape[i];
    out.stride[out.count++] = block.stride[i];
  }
  return out;
}
}  // namespace detail

/// Groups of one layout, computed as they are iterated, never listed (as rank_group computes
/// its positions): a forward range of rank_group<K> values, group i being the one whose first
/// position is base + starts(i) (a position with no digit in the group's modes). all_groups,
/// block_groups and a dynamic_slice's all_groups make one.
template <int K, int C>
class group_list {
  dim_layout<K> group_;
  int base_;
  dim_layout<C> starts_;

 public:
  /// The groups of layout `group` whose first positions are base + starts(i), i in [0, starts.size()).
  constexpr group_list(const dim_layout<K>& group, int base, const dim_layout<C>& starts)
      : group_(group), base_(base), starts_(starts) {}

  /// A forward iterator over the groups.
  class iterator {
    const group_list* l_ = nullptr;
    int i_ = 0;  // the current group's index

   public:
    using value_type = rank_group<K>;
    using difference_type = std::ptrdiff_t;
    /// A singular iterator (a forward iterator is default-constructible).
    constexpr iterator() = default;
    /// At group i.
    constexpr iterator(const group_list* l, int i) : l_(l), i_(i) {}
    /// The current group.
    constexpr value_type operator*() const { return (*l_)[i_]; }
    /// The next group.
    constexpr iterator& operator++() {
      ++i_;
      return *this;
    }
    /// The next group (postfix).
    constexpr iterator operator++(int) {
      iterator t = *this;
      ++*this;
      return t;
    }
    /// The same position.
    friend constexpr bool operator==(const iterator& a, const iterator& b) { return a.i_ == b.i_; }
  };

  /// Number of groups.
  constexpr int size() const { return starts_.size(); }
  /// Group i, i in [0, size()).
  constexpr rank_group<K> operator[](int i) const { return rank_group<K>(starts_.at(base_, i), group_); }
  /// The first group.
  constexpr iterator begin() const { return {this, 0}; }
  /// Past the last group.
  constexpr iterator end() const { return {this, size()}; }
};

template <auto L, class Names>
class basic_mesh;

/// Every group of dims Ns... over the root's positions, whatever mesh m is (a root, a slice, a
/// flattened or unflattened mesh): what PyTorch's _get_all_submeshes returns and
/// _init_process_groups creates, in its order (ascending first positions). For tp on a
/// (2, 4) dp/tp mesh, {0,1,2,3} then {4,5,6,7}; for dp on m.slice<"dp">() of a (dp=2, cp=2,
/// tp=2) mesh, all four dp groups {0,4} {1,5} {2,6} {3,7}, not only those of one block. Each
/// group's order is the order Ns... name the dims (as group<Ns...>). A group_list: computed as
/// it is iterated, nothing stored.
template <fixed_string... Ns, auto L, class Names>
constexpr auto all_groups(const basic_mesh<L, Names>& m) {
  const auto g = m.template group<Ns...>(0).layout();
  return group_list(g, 0, detail::complement<L.nmodes + 1>(g, m.root_size()));
}

/// The groups of dims Ns... inside one block of m: the (sub)mesh of m that holds position
/// `member` (m.group(member): on a root, the whole mesh; on a slice, the calling rank's
/// submesh), in the order the block first meets them (row-major over its other dims). For dp
/// on m.slice<"dp", "tp">() of a (dp=2, cp=2, tp=2) mesh and member 2: {2,6} {3,7}.
template <fixed_string... Ns, auto L, class Names>
constexpr auto block_groups(const basic_mesh<L, Names>& m, int member) {
  const auto block = m.group(member);
  const auto g = m.template group<Ns...>(0).layout();
  return group_list(g, block.front(), detail::remaining_modes<L.nmodes + 1>(block.layout(), g));
}

}  // namespace devmesh
