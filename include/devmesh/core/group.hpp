// devmesh/core/group.hpp: the ranks of one process group, computed, never listed.
#pragma once
#include <compare>
#include <cstddef>

#include "config.hpp"

namespace devmesh {

/// What a communicator split needs for one rank: MPI_Comm_split / ncclCommSplit take
/// (color, key). Ranks with the same color form one group; key orders them, and equals
/// the rank's index in the group, so the group keeps the mesh's order.
struct split_args {
  int color;
  int key;
  /// Equal color and key.
  friend constexpr bool operator==(split_args, split_args) = default;
};

/// The ranks of a group, row-major over K digit groups (atoms): O(K) storage, no heap,
/// usable in constant expressions and device code. A random-access range of int.
template <int K>
class rank_group {
  static constexpr int cap = K > 0 ? K : 1;
  int base_ = 0;
  int count_ = 1;
  int size_[cap]{};
  int stride_[cap]{};

 public:
  /// A random-access iterator over the group's ranks (a std::random_access_iterator).
  /// It names no iterator tag, which would cost every TU the iterator header (under nvcc, twice):
  /// C++20 then takes it for random access (ITER_CONCEPT's default), and C++17's
  /// iterator_traits for an input iterator, as std::views::iota's (its ranks are values,
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
  /// base: the group's first rank; sizes/strides: its digit groups, most significant first.
  DEVMESH_HOST_DEVICE constexpr rank_group(int base, const int* sizes, const int* strides) : base_(base) {
    for (int i = 0; i < K; ++i) {
      size_[i] = sizes[i];
      stride_[i] = strides[i];
      count_ *= sizes[i];
    }
  }

  /// Number of ranks in the group.
  DEVMESH_HOST_DEVICE constexpr int size() const { return count_; }
  /// Always false: a group has at least one rank.
  DEVMESH_HOST_DEVICE constexpr bool empty() const { return false; }
  /// The i-th rank of the group (row-major in the order the dims were named).
  DEVMESH_HOST_DEVICE constexpr int operator[](int i) const {
    int r = base_;
    for (int k = K - 1; k >= 0; --k) {
      r += (i % size_[k]) * stride_[k];
      i /= size_[k];
    }
    return r;
  }
  /// The group's first rank (the color of its communicator split).
  DEVMESH_HOST_DEVICE constexpr int front() const { return base_; }
  /// The group's last rank.
  DEVMESH_HOST_DEVICE constexpr int back() const { return (*this)[count_ - 1]; }
  /// Index of global rank r in this group, or -1 if r is not in it. O(K).
  DEVMESH_HOST_DEVICE constexpr int index_of(int r) const {
    int off = r - base_;
    int idx = 0;
    for (int k = 0; k < K; ++k) {
      const int d = (off / stride_[k]) % size_[k];
      if (off < 0 || d < 0) return -1;
      idx = idx * size_[k] + d;
    }
    return (*this)[idx] == r ? idx : -1;
  }
  /// True if global rank r is in the group. O(K).
  DEVMESH_HOST_DEVICE constexpr bool contains(int r) const { return index_of(r) >= 0; }
  /// Iterator to the first rank.
  DEVMESH_HOST_DEVICE constexpr iterator begin() const { return {this, 0}; }
  /// Iterator past the last rank.
  DEVMESH_HOST_DEVICE constexpr iterator end() const { return {this, count_}; }

  /// The same ranks in the same order.
  DEVMESH_HOST_DEVICE friend constexpr bool operator==(const rank_group& a, const rank_group& b) {
    if (a.count_ != b.count_) return false;
    for (int i = 0; i < a.count_; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
};

}  // namespace devmesh
