// devmesh/sharding/local_sizes.hpp: the block sizes of the ranks along one mesh dim, what a
// v-collective (all_gatherv, reduce_scatterv, ...) over that dim's group needs: computed per
// element from the spec, never stored.
#pragma once
#include <array>

#include "../core/config.hpp"
#include "extents.hpp"

namespace devmesh {

/// The blocks of the ranks of one group (a rank_group of a mesh dim), in group order: i-th
/// rank's element count (count(i)), its block's shape (shape(i)), and the element offset of
/// its block in the group's concatenation (displacement(i), O(i)).
template <class Spec, class E, class Group>
class local_sizes_view {
  Spec spec_;
  E ext_;
  Group group_;

 public:
  /// The view of `group`'s blocks under `spec` for a tensor of extents `ext`.
  DEVMESH_HOST_DEVICE constexpr local_sizes_view(const Spec& spec, const E& ext, const Group& group)
      : spec_(spec), ext_(ext), group_(group) {}
  /// Number of ranks in the group.
  DEVMESH_HOST_DEVICE constexpr int size() const { return group_.size(); }
  /// The i-th rank of the group (a position).
  DEVMESH_HOST_DEVICE constexpr int position(int i) const { return group_[i]; }
  /// Number of elements the i-th rank holds.
  DEVMESH_HOST_DEVICE constexpr tensor_index count(int i) const { return spec_.local_size(ext_, group_[i]); }
  /// count(i), so that the view reads as the list of counts.
  DEVMESH_HOST_DEVICE constexpr tensor_index operator[](int i) const { return count(i); }
  /// The i-th rank's block shape.
  DEVMESH_HOST_DEVICE constexpr std::array<tensor_index, E::rank_value> shape(int i) const {
    return spec_.local_shape(ext_, group_[i]);
  }
  /// Sum of the counts before the i-th rank's.
  DEVMESH_HOST_DEVICE constexpr tensor_index displacement(int i) const {
    tensor_index n = 0;
    for (int j = 0; j < i; ++j) n = detail::checked_add(n, count(j), "local_sizes (a sum of block sizes)");
    return n;
  }
  /// Sum of every count.
  DEVMESH_HOST_DEVICE constexpr tensor_index total() const { return displacement(size()); }
};

}  // namespace devmesh
