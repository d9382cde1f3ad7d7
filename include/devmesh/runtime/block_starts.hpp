// devmesh/runtime/block_starts.hpp: the block layout of a v-collective (runtime/backend.hpp):
// one count per rank and, optionally, one displacement per rank (none: packed in rank order).
// Both backends read their arguments through it; MPI then checks that each fits an int.
#pragma once
#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "../core/diagnostics.hpp"

namespace devmesh::detail {

/// Where each of `ranks` blocks starts (into at_out) and the extent, in elements, of the
/// buffer they span: `at` (empty: packed in rank order) and `counts`, one per rank. Throws
/// mesh_error, prefixed by where(), when the sizes do not match `ranks` or an end overflows.
template <class Where>
std::size_t block_starts(const Where& where, std::size_t ranks, std::span<const std::size_t> counts,
                         std::span<const std::size_t> at, std::vector<std::size_t>& at_out) {
  const auto fail = [&](const std::string& what) { return mesh_error(where() + ": " + what); };
  if (counts.size() != ranks)
    throw fail(std::to_string(counts.size()) + " counts for a communicator of " + std::to_string(ranks) + " ranks");
  if (!at.empty() && at.size() != ranks)
    throw fail(std::to_string(at.size()) + " displacements for " + std::to_string(ranks) + " counts");
  at_out.resize(ranks);
  std::size_t packed = 0, extent = 0;
  for (std::size_t i = 0; i < ranks; ++i) {
    at_out[i] = at.empty() ? packed : at[i];
    if (counts[i] > static_cast<std::size_t>(-1) - at_out[i])
      throw fail("the block of rank " + std::to_string(i) + " ends past the largest size_t");
    packed = at_out[i] + counts[i];
    extent = std::max(extent, packed);
  }
  return extent;
}

}  // namespace devmesh::detail
