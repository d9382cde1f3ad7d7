// devmesh/core/group_list.hpp: every group of some dims within a (sub)mesh, computed as it
// is iterated, never listed: all_groups<"tp">(m), a forward range of rank_groups (each a
// first position and a dim_layout). What PyTorch's _get_all_submeshes and a topology step
// walk; constexpr, and no heap.
#pragma once
#include <cstddef>
#include <utility>

#include "basic_mesh.hpp"
#include "fixed_string.hpp"

namespace devmesh {

/// Every group of dims Ns... within one (sub)mesh, computed as it is iterated, never
/// listed (as rank_group computes its positions): a forward range of rank_group values, each
/// group visited once, at its first position in the submesh's order. all_groups makes one.
template <class Mesh, fixed_string... Ns>
class group_list {
  using whole_type = decltype(std::declval<const Mesh&>().group(0));
  Mesh m_;
  whole_type whole_;  // the submesh's positions, in its order

  constexpr bool starts_group(int i) const { return m_.template group<Ns...>(whole_[i]).front() == whole_[i]; }
  constexpr int next_start(int i) const {
    while (i < whole_.size() && !starts_group(i)) ++i;
    return i;
  }

 public:
  /// The groups of dims Ns... within the submesh of m containing position `member`.
  constexpr group_list(const Mesh& m, int member) : m_(m), whole_(m.group(member)) {}

  /// A forward iterator over the groups.
  class iterator {
    const group_list* l_ = nullptr;
    int i_ = 0;  // index in the submesh of the current group's first position

   public:
    using value_type = decltype(std::declval<const Mesh&>().template group<Ns...>(0));
    using difference_type = std::ptrdiff_t;
    /// A singular iterator (a forward iterator is default-constructible).
    constexpr iterator() = default;
    /// At the first group starting at index i or later.
    constexpr iterator(const group_list* l, int i) : l_(l), i_(l->next_start(i)) {}
    /// The current group.
    constexpr value_type operator*() const { return l_->m_.template group<Ns...>(l_->whole_[i_]); }
    /// The next group.
    constexpr iterator& operator++() {
      i_ = l_->next_start(i_ + 1);
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

  /// Number of groups: the submesh's size over a group's size.
  constexpr int size() const { return whole_.size() / m_.template group<Ns...>(whole_.front()).size(); }
  /// The first group.
  constexpr iterator begin() const { return {this, 0}; }
  /// Past the last group.
  constexpr iterator end() const { return {this, whole_.size()}; }
};

/// Every group of dims Ns... within the (sub)mesh containing `member`, in the order of their
/// first positions in that submesh: e.g. for tp on a (2, 4) dp/tp mesh, {0,1,2,3} then
/// {4,5,6,7}. A group_list: computed as it is iterated, nothing stored.
template <fixed_string... Ns, auto L, class Names>
constexpr group_list<basic_mesh<L, Names>, Ns...> all_groups(const basic_mesh<L, Names>& m, int member = 0) {
  return {m, member};
}

}  // namespace devmesh
