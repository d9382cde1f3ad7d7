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
// Compiled once (nccl/impl/node.ipp).
#pragma once
#include <vector>

#include "../core/config.hpp"
#include "../runtime/deadline.hpp"
#include "communicator.hpp"

namespace devmesh::nccl {

/// Collective over `c` (every rank of it calls this): the node of every rank of `c`, indexed
/// by rank, identical on every rank; node ids are 0..n-1, numbered by the lowest rank on each
/// node. A node is a host name (gethostname), unless DEVMESH_NODE_ID is set (see the header
/// comment). Two bounded steps over c's host channel: an agreement on every rank's key (a
/// malformed DEVMESH_NODE_ID on any rank makes every rank throw mesh_error naming it), then
/// an all-gather of the keys; each throws timeout_error past `d`. Without a host channel
/// (a world from nccl::world_from_env and what derives from it) it throws mesh_error before
/// any communication, on every rank of such a world. Also device_mesh's node-discovery hook
/// for the NCCL backend (found by argument-dependent lookup; docs/runtime.md).
DEVMESH_DECL std::vector<int> node_of_ranks(const communicator& c, const deadline& d);

}  // namespace devmesh::nccl

#if DEVMESH_HEADER_ONLY
#include "impl/node.ipp"
#endif
