// devmesh/mpi/impl/node.ipp: node.hpp's definitions (compiled once, or inline in header-only
// mode: core/config.hpp).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "../../runtime/impl/consensus.hpp"
#include "../../runtime/topology.hpp"
#include "../error.hpp"
#include "../node.hpp"

namespace devmesh::mpi {

namespace detail {

/// The lowest world rank on this rank's shared-memory node: MPI_Comm_split_type over
/// `ctl` (collective over every rank of ctl; blocking, as MPI has no non-blocking form), then
/// a bounded all-gather of world ranks over the node's communicator.
DEVMESH_DECL int lowest_rank_on_node(const communicator& ctl, const deadline& d) {
  MPI_Comm raw = MPI_COMM_NULL;
  check(MPI_Comm_split_type(ctl.native(), MPI_COMM_TYPE_SHARED, ctl.rank(), MPI_INFO_NULL, &raw),
        "MPI_Comm_split_type");
  const communicator node = communicator::adopt(raw);
  const std::int32_t me = ctl.rank();
  std::vector<std::int32_t> all(static_cast<std::size_t>(node.size()));
  node.all_gather_bytes(&me, all.data(), sizeof me, d);
  std::int32_t lowest = me;
  for (std::int32_t r : all) lowest = std::min(lowest, r);
  return lowest;
}

}  // namespace detail

DEVMESH_DECL std::vector<int> node_of_ranks(const communicator& world, const deadline& d) {
  const communicator ctl = devmesh::detail::bounded_step("node_of_ranks", d, [&] { return world.duplicate(d); });
  const devmesh::detail::node_override mine = devmesh::detail::node_id_from_env();
  const bool has_override = mine.error.empty() && mine.id >= 0;
  return devmesh::detail::bounded_step("node_of_ranks", d, [&] {
    std::array<std::uint64_t, 2> w{mine.error.empty() ? 0U : 1U, has_override ? 0U : 1U};  // failed, needs split
    ctl.all_reduce_max(w.data(), w.size(), d);
    if (w[0]) devmesh::detail::throw_failed(ctl, mine.error, "node_of_ranks", d);
    devmesh::detail::node_key key{1, mine.id};
    if (w[1]) {
      const int lowest = detail::lowest_rank_on_node(ctl, d);
      if (!has_override) key = {0, lowest};
    }
    std::vector<devmesh::detail::node_key> keys(static_cast<std::size_t>(ctl.size()));
    ctl.all_gather_bytes(key.data(), keys.data(), sizeof key, d);
    return devmesh::detail::number_nodes(keys);
  });
}

DEVMESH_DECL std::vector<int> node_of_ranks(const communicator& world) {
  return node_of_ranks(world, deadline::after(timeout_from_env()));
}

}  // namespace devmesh::mpi
