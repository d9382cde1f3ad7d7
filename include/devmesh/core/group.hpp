// devmesh/core/group.hpp: the positions of one process group, computed, never listed: a
// first position and a dim_layout (layout.hpp), and the (color, key) of a communicator split.
#pragma once
#include <compare>
#include <cstddef>

#include "config.hpp"
#include "layout.hpp"

namespace devmesh {

/// What a communicator split needs for one position: MPI_Comm_split / ncclCommSplit take
/// (color, key). Positions with the same color form one group (the color is its first
/// position); key orders them, and equals the position's index in the group, so the group
/// keeps the mesh's order.
struct split_args {
  int color;
  int key;
  /// Equal color and key.
  friend constexpr bool operator==(split_args, split_args) = default;
};

/// The positions of a group (ranks of the root mesh's rank space), computed, never listed:
/// its first position plus a dim_layout<K> of K modes as a function (the i-th position is
/// base + layout(i), row-major over the modes). O(K) storage, no heap, usable in constant
/// expressions and device code. A random-access range of int.
template <int K>
class rank_group {
  int base_ = 0;
  dim_layout<K> layout_{};

 public:
  /// A random-access iterator over the group's positions (a std::random_access_iterator).
  /// It names no iterator tag, which would cost every TU the iterator header (under nvcc, twice):
  /// C++20 then takes it for random access (ITER_CONCEPT's default), and C++17's
  /// iterator_traits for an input iterator, as std::views::iota's (its positions are values,
  /// not references).
  class iterator {
    const rank_group* g_ = nullptr;
    int i_ = 0;

   public:
    using value_type = int;
    using difference_type = std::ptrdiff_t;
    using reference = int;
    constexpr iterator() = default;
    DEVMESH_HOST_DEVICE constexpr iterator(const rank_group* g, int i) : g_(g), i_(i) {}
    DEVMESH_HOST_DEVICE constexpr int operator*() const { return (*g_)[i_]; }
    DEVMESH_HOST_DEVICE constexpr int operator[](difference_type n) const { return (*g_)[i_ + static_cast<int>(n)]; }
    DEVMESH_HOST_DEVICE constexpr iterator& operator++() { ++i_; return *this; }
    DEVMESH_HOST_DEVICE constexpr iterator operator++(int) { auto t = *this; ++i_; return t; }
    DEVMESH_HOST_DEVICE constexpr iterator& operator--() { --i_; return *this; }
    DEVMESH_HOST_DEVICE constexpr iterator operator--(int) { auto t = *this; --i_; return t; }
    DEVMESH_HOST_DEVICE constexpr iterator& operator+=(difference_type n) { i_ += static_cast<int>(n); return *this; }
    DEVMESH_HOST_DEVICE constexpr iterator& operator-=(difference_type n) { i_ -= static_cast<int>(n); return *this; }
    DEVMESH_HOST_DEVICE friend constexpr iterator operator+(iterator it, difference_type n) { return it += n; }
    DEVMESH_HOST_DEVICE friend constexpr iterator operator+(difference_type n, iterator it) { return it += n; }
    DEVMESH_HOST_DEVICE friend constexpr iterator operator-(iterator it, difference_type n) { return it -= n; }
    DEVMESH_HOST_DEVICE friend constexpr difference_type operator-(iterator a, iterator b) { return a.i_ - b.i_; }
    DEVMESH_HOST_DEVICE friend constexpr bool operator==(iterator a, iterator b) { return a.i_ == b.i_; }
    DEVMESH_HOST_DEVICE friend constexpr std::strong_ordering operator<=>(iterator a, iterator b) { return a.i_ <=> b.i_; }
  };

  /// An empty group.
  constexpr rank_group() = default;
  /// base: the group's first position; layout: its modes (K of them), most significant first.
  DEVMESH_HOST_DEVICE constexpr rank_group(int base, const dim_layout<K>& layout) : base_(base), layout_(layout) {}
  /// base: the group's first position; sizes/strides: its K modes, most significant first.
  DEVMESH_HOST_DEVICE constexpr rank_group(int base, const int* sizes, const int* strides) : base_(base) {
    layout_.count = K;
    for (int i = 0; i < K; ++i) {
      layout_.shape[i] = sizes[i];
      layout_.stride[i] = strides[i];
    }
  }

  /// Number of positions in the group.
  DEVMESH_HOST_DEVICE constexpr int size() const { return layout_.size(); }
  /// Always false: a group has at least one position.
  DEVMESH_HOST_DEVICE constexpr bool empty() const { return false; }
  /// The i-th position of the group (row-major in the order the dims were named).
  DEVMESH_HOST_DEVICE constexpr int operator[](int i) const { return layout_.at(base_, i); }
  /// The group's first position (the color of its communicator split).
  DEVMESH_HOST_DEVICE constexpr int front() const { return base_; }
  /// The group's last position.
  DEVMESH_HOST_DEVICE constexpr int back() const { return (*this)[size() - 1]; }
  /// The group's layout: where its i-th position lies, counted from front().
  DEVMESH_HOST_DEVICE constexpr const dim_layout<K>& layout() const { return layout_; }
  /// Index of `position` in this group, or -1 if it is not in it. O(K).
  DEVMESH_HOST_DEVICE constexpr int index_of(int position) const { return layout_.index_of(position - base_); }
  /// True if `position` is in the group. O(K).
  DEVMESH_HOST_DEVICE constexpr bool contains(int position) const { return index_of(position) >= 0; }
  /// Iterator to the first position.
  DEVMESH_HOST_DEVICE constexpr iterator begin() const { return {this, 0}; }
  /// Iterator past the last position.
  DEVMESH_HOST_DEVICE constexpr iterator end() const { return {this, size()}; }

  /// The same positions in the same order.
  DEVMESH_HOST_DEVICE friend constexpr bool operator==(const rank_group& a, const rank_group& b) {
    const int n = a.size();
    if (n != b.size()) return false;
    for (int i = 0; i < n; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
};

}  // namespace devmesh
