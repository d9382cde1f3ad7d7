// devmesh/runtime/rank_placement.hpp: where the mesh's positions sit in the world. Every layout
// query answers in positions, the root's rank space [0, root_size()); a rank map (PyTorch's
// mesh tensor, flattened: options.rank_map, or node-major placement) says which world rank
// holds each position. Row-major world order (position p is world rank p) stores no map.
#pragma once
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "../core/print.hpp"
#include "digest.hpp"

namespace devmesh {

/// The rank map of a mesh at an offset: `count` world ranks from `first`, in order
/// (rank_range(4, 4) is {4, 5, 6, 7}): options.rank_map = dm::rank_range(4, 4).
inline std::vector<int> rank_range(int first, int count) {
  std::vector<int> out;
  for (int i = 0; i < count; ++i) out.push_back(first + i);
  return out;
}

namespace detail {

/// How the parent of a split numbers the mesh's ranks: as the world does (the control
/// communicator, a duplicate of the world), or by position (lazy mode's members, split with
/// key = position). split_group takes ranks of its parent, so the two differ under a rank map.
enum class numbering { world, position };

/// True for {0, 1, ..., n-1}: row-major world order, which is stored as no map at all.
inline bool is_identity_map(const std::vector<int>& map) {
  for (std::size_t p = 0; p < map.size(); ++p)
    if (map[p] != static_cast<int>(p)) return false;
  return true;
}

/// A rank map as text for messages and the consistency check: runs of consecutive ranks
/// ("4-7", "0,2,4,6,1,3,5,7"); past 200 characters cut, with the digest of the whole.
template <class = void>
[[gnu::cold, gnu::noinline]] std::string rank_map_string(const std::vector<int>& map) {
  if (map.empty()) return "row-major";
  const std::string all = rank_ranges(map);
  if (all.size() <= 200) return all;
  return all.substr(0, 200) + "... (" + std::to_string(map.size()) + " entries, sha256 " +
         std::to_string(sha256(all)[0]) + ")";
}

/// "" if `map` is a valid rank map of a mesh with n positions in a world of `world` ranks,
/// else why not.
template <class = void>
[[gnu::cold, gnu::noinline]] std::string rank_map_error(const std::vector<int>& map, int n, int world) {
  if (map.empty()) return {};
  const std::string here = "devmesh: rank map: ";
  if (static_cast<int>(map.size()) != n)
    return here + "it has " + std::to_string(map.size()) + " entries, the mesh has " + std::to_string(n) +
           " positions (one world rank per position, options.rank_map[p] for position p)";
  std::vector<int> at(static_cast<std::size_t>(world), -1);  // world rank -> its position
  for (int p = 0; p < n; ++p) {
    const int w = map[static_cast<std::size_t>(p)];
    if (w < 0 || w >= world)
      return here + "rank_map[" + std::to_string(p) + "] = " + std::to_string(w) +
             " is not a world rank (the world has " + std::to_string(world) + ": [0, " + std::to_string(world) + "))";
    int& seen = at[static_cast<std::size_t>(w)];
    if (seen >= 0)
      return here + "rank_map[" + std::to_string(p) + "] = " + std::to_string(w) + " repeats rank_map[" +
             std::to_string(seen) + "] (each world rank holds at most one position)";
    seen = p;
  }
  return {};
}

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
  void place(int n, std::vector<int> map) {
    root_size = n;
    rank_map = std::move(map);
    if (is_identity_map(rank_map)) rank_map.clear();  // the row-major path: no map
    position = -1;
    if (rank_map.empty()) {
      if (world_rank < n) position = world_rank;
      return;
    }
    for (int p = 0; p < n; ++p)
      if (rank_map[static_cast<std::size_t>(p)] == world_rank) position = p;
  }
  /// The world rank at position p.
  int world_rank_at(int p) const { return rank_map.empty() ? p : rank_map[static_cast<std::size_t>(p)]; }
  /// The world ranks at every position, in order (the identity without a map).
  std::vector<int> positions_to_world() const {
    if (!rank_map.empty()) return rank_map;
    return rank_range(0, root_size);
  }
  /// Which world ranks the mesh holds, for messages: "it spans world ranks [0, 4) of 8" or
  /// "its rank map holds world ranks 4-7 of 8".
  template <class = void>
  std::string members_phrase() const {
    if (rank_map.empty())
      return "it spans world ranks [0, " + std::to_string(root_size) + ") of " + std::to_string(world_size);
    std::vector<int> sorted = rank_map;
    std::stable_sort(sorted.begin(), sorted.end());
    return "its rank map holds world ranks " + rank_ranges(sorted) + " of " + std::to_string(world_size);
  }
};

}  // namespace detail
}  // namespace devmesh
