// devmesh/mpi/node.hpp: which node each rank of an MPI world is on, for topology.hpp.
//
//   auto nodes = dm::mpi::node_of_ranks(world);  // collective; the same vector on every rank
//   std::cout << dm::topology(mesh, nodes);
//
// A node is what MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups: the ranks that can share
// memory, i.e. one machine. DEVMESH_NODE_ID=<integer >= 0> in a rank's environment overrides
// its node: ranks with the same value are one node, whatever machine they run on (this is how
// tests simulate several nodes on one machine). A rank with the variable and one without are
// never on the same node; set it on every rank or on none. Empty counts as unset.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../runtime/algorithm.hpp"
#include "native.hpp"

#include "../runtime/consensus.hpp"
#include "../runtime/deadline.hpp"
#include "../core/diagnostics.hpp"
#include "../runtime/topology.hpp"
#include "communicator.hpp"
#include "error.hpp"

namespace devmesh::mpi {

namespace detail {

/// The lowest world rank on this rank's shared-memory node: MPI_Comm_split_type over
/// `ctl` (collective over every rank of ctl; blocking, as MPI has no non-blocking form), then
/// a bounded all-gather of world ranks over the node's communicator.
template <class = void>
int lowest_rank_on_node(const communicator& ctl, const deadline& d) {
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

/// Collective over `world`: the node of every rank of `world`, indexed by rank, identical on
/// every rank; node ids are 0..n-1, numbered by the lowest rank on each node (rank 0 is on
/// node 0). A node is a shared-memory domain (MPI_Comm_split_type with
/// MPI_COMM_TYPE_SHARED), unless DEVMESH_NODE_ID (an integer >= 0, read at this call) is set
/// on a rank: ranks with the same DEVMESH_NODE_ID are one node (see the header comment).
///
/// Steps (on a private duplicate of `world`, so the caller's traffic on `world` cannot mix
/// in): an all-reduce that agrees on every rank's DEVMESH_NODE_ID (a malformed value on any
/// rank makes every rank throw mesh_error naming the ranks and the value); the split, only if
/// some rank has no DEVMESH_NODE_ID; an all-gather of every rank's node. Every step but the
/// split polls until `d` and then throws timeout_error on every waiting rank (a rank that
/// never calls node_of_ranks); the split is a blocking MPI call (MPI has no non-blocking
/// split_type) that every rank enters only after the bounded agreement showed that every
/// rank reached this call, so it waits at most for MPI itself.
/// Also device_mesh's node-discovery hook for the MPI backend (found by argument-dependent
/// lookup; docs/runtime.md): init_device_mesh calls it on its control communicator when
/// options.topology, intra_node or node_major ask for the nodes.
template <class = void>
std::vector<int> node_of_ranks(const communicator& world, const deadline& d) {
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

/// node_of_ranks bounded by DEVMESH_TIMEOUT (seconds; default 600), as init_device_mesh's
/// steps are. A malformed DEVMESH_TIMEOUT throws mesh_error before any communication.
template <class = void>
std::vector<int> node_of_ranks(const communicator& world) {
  return node_of_ranks(world, deadline::after(timeout_from_env()));
}

}  // namespace devmesh::mpi
