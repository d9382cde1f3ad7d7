// devmesh/runtime/rank_placement.hpp: where the mesh's positions sit in the world. Every layout
// query answers in positions, the root's rank space [0, root_size()); a rank map (PyTorch's
// mesh tensor, flattened: options.rank_map, or node-major placement) says which world rank
// holds each position. Row-major world order (position p is world rank p) stores no map.
// Compiled once (runtime/impl/rank_placement.ipp).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "../core/config.hpp"

namespace devmesh {

/// The rank map of a mesh at an offset: `count` world ranks from `first`, in order
/// (rank_range(4, 4) is {4, 5, 6, 7}): options.rank_map = dm::rank_range(4, 4).
DEVMESH_DECL std::vector<int> rank_range(int first, int count);

namespace detail {

/// How the parent of a split numbers the mesh's ranks: as the world does (the control
/// communicator, a duplicate of the world), or by position (lazy mode's members, split with
/// key = position). split_group takes ranks of its parent, so the two differ under a rank map.
enum class numbering { world, position };

/// True for {0, 1, ..., n-1}: row-major world order, which is stored as no map at all.
DEVMESH_DECL bool is_identity_map(const std::vector<int>& map);

/// A rank map as text for messages and the consistency check: runs of consecutive ranks
/// ("4-7", "0,2,4,6,1,3,5,7"); past 200 characters cut, with the digest of the whole.
[[gnu::cold]] DEVMESH_DECL std::string rank_map_string(const std::vector<int>& map);

/// "" if `map` is a valid rank map of a mesh with n positions in a world of `world` ranks,
/// else why not.
[[gnu::cold]] DEVMESH_DECL std::string rank_map_error(const std::vector<int>& map, int n, int world);

/// This rank in the world and in the mesh: the world's size and this rank's world rank, the
/// root's size, its rank map and this rank's position (-1 off the mesh).
struct rank_placement {
  int world_rank = 0;
  int world_size = 0;
  int root_size = 0;
  std::vector<int> rank_map;  // position -> world rank; empty: position p is world rank p
  int position = -1;          // this rank's position in the root; -1: not a member

  bool is_member() const { return position >= 0; }

  /// Sets the root's size and rank map (valid: checked before), and this rank's position.
  DEVMESH_DECL void place(int n, std::vector<int> map);
  /// The world rank at position p.
  int world_rank_at(int p) const { return rank_map.empty() ? p : rank_map[static_cast<std::size_t>(p)]; }
  /// The world ranks at every position, in order (the identity without a map).
  DEVMESH_DECL std::vector<int> positions_to_world() const;
  /// Which world ranks the mesh holds, for messages: "it spans world ranks [0, 4) of 8" or
  /// "its rank map holds world ranks 4-7 of 8".
  DEVMESH_DECL std::string members_phrase() const;
};

}  // namespace detail
}  // namespace devmesh

#if DEVMESH_HEADER_ONLY
#include "impl/rank_placement.ipp"
#endif
