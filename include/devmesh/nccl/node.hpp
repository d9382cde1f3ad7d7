// devmesh/nccl/node.hpp: which node each rank of an NCCL world is on, for topology.hpp and
// device_mesh's topology options.
//
//   auto nodes = dm::nccl::node_of_ranks(world, dm::deadline::after(std::chrono::seconds(60)));
//
// A node is a host name: each rank digests its gethostname() and the digests travel over the
// world's host channel (the MPI duplicate a world made by nccl::world(mpi_world) keeps), not
// over NCCL. DEVMESH_NODE_ID=<integer >= 0> overrides a rank's node, as on MPI (mpi/node.hpp):
// ranks with the same value are one node; a rank with it and one without never are. A world
// without a host channel (nccl::world_from_env) cannot discover nodes: asking throws.
#pragma once
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "../runtime/impl/consensus.hpp"
#include "../runtime/deadline.hpp"
#include "../core/diagnostics.hpp"
#include "../runtime/digest.hpp"
#include "../runtime/topology.hpp"
#include "communicator.hpp"

namespace devmesh::nccl {

namespace detail {

/// This rank's node key: (1, DEVMESH_NODE_ID) when set, else (2, the host name's digest);
/// `error` says why there is none (a malformed DEVMESH_NODE_ID, gethostname failing).
template <class = void>
devmesh::detail::node_key local_node_key(std::string& error) {
  const devmesh::detail::node_override o = devmesh::detail::node_id_from_env();
  if (!o.error.empty()) {
    error = o.error;
    return {};
  }
  if (o.id >= 0) return {1, o.id};
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) {
    error = "devmesh: nccl: node_of_ranks: gethostname failed: " + std::string(std::strerror(errno));
    return {};
  }
  const digest h = sha256(std::string_view(host.data()));
  return {2, static_cast<std::int64_t>(h[0] >> 1)};
}

}  // namespace detail

/// Collective over `c` (every rank of it calls this): the node of every rank of `c`, indexed
/// by rank, identical on every rank; node ids are 0..n-1, numbered by the lowest rank on each
/// node. A node is a host name (gethostname), unless DEVMESH_NODE_ID is set (see the header
/// comment). Two bounded steps over c's host channel: an agreement on every rank's key (a
/// malformed DEVMESH_NODE_ID on any rank makes every rank throw mesh_error naming it), then
/// an all-gather of the keys; each throws timeout_error past `d`. Without a host channel
/// (a world from nccl::world_from_env and what derives from it) it throws mesh_error before
/// any communication, on every rank of such a world. Also device_mesh's node-discovery hook
/// for the NCCL backend (found by argument-dependent lookup; docs/runtime.md).
template <class = void>
std::vector<int> node_of_ranks(const communicator& c, const deadline& d) {
  if (!c.has_host_channel())
    throw mesh_error(
        "devmesh: nccl: node_of_ranks: this NCCL communicator has no host channel (a world made by "
        "nccl::world_from_env has none), so the nodes cannot be discovered: options.topology, intra_node and "
        "node_major need a world made by nccl::world(mpi_world)");
  std::string error;
  const devmesh::detail::node_key mine = detail::local_node_key(error);
  return devmesh::detail::bounded_step("node_of_ranks", d, [&] {
    devmesh::detail::agree(c, error, "node_of_ranks", d);
    std::vector<devmesh::detail::node_key> keys(static_cast<std::size_t>(c.size()));
    c.all_gather_bytes(mine.data(), keys.data(), sizeof mine, d);
    return devmesh::detail::number_nodes(keys);
  });
}

}  // namespace devmesh::nccl
