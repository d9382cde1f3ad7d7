// devmesh/runtime/impl/rank_placement.ipp: rank_placement.hpp's definitions (compiled once, or
// inline in header-only mode: core/config.hpp).
#pragma once
#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "../../core/print.hpp"
#include "../digest.hpp"
#include "../rank_placement.hpp"

namespace devmesh {

DEVMESH_DECL std::vector<int> rank_range(int first, int count) {
  std::vector<int> out;
  for (int i = 0; i < count; ++i) out.push_back(first + i);
  return out;
}

namespace detail {

DEVMESH_DECL bool is_identity_map(const std::vector<int>& map) {
  for (std::size_t p = 0; p < map.size(); ++p)
    if (map[p] != static_cast<int>(p)) return false;
  return true;
}

DEVMESH_DECL std::string rank_map_string(const std::vector<int>& map) {
  if (map.empty()) return "row-major";
  const std::string all = rank_ranges(map);
  if (all.size() <= 200) return all;
  return all.substr(0, 200) + "... (" + std::to_string(map.size()) + " entries, sha256 " +
         std::to_string(sha256(all)[0]) + ")";
}

DEVMESH_DECL std::string rank_map_error(const std::vector<int>& map, int n, int world) {
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

DEVMESH_DECL void rank_placement::place(int n, std::vector<int> map) {
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

DEVMESH_DECL std::vector<int> rank_placement::positions_to_world() const {
  if (!rank_map.empty()) return rank_map;
  return rank_range(0, root_size);
}

DEVMESH_DECL std::string rank_placement::members_phrase() const {
  if (rank_map.empty())
    return "it spans world ranks [0, " + std::to_string(root_size) + ") of " + std::to_string(world_size);
  std::vector<int> sorted = rank_map;
  std::stable_sort(sorted.begin(), sorted.end());
  return "its rank map holds world ranks " + rank_ranges(sorted) + " of " + std::to_string(world_size);
}

}  // namespace detail
}  // namespace devmesh
