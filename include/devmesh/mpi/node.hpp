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
#include <vector>

#include "../core/config.hpp"
#include "../runtime/deadline.hpp"
#include "communicator.hpp"

namespace devmesh::mpi {

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
DEVMESH_DECL std::vector<int> node_of_ranks(const communicator& world, const deadline& d);

/// node_of_ranks bounded by DEVMESH_TIMEOUT (seconds; default 600), as init_device_mesh's
/// steps are. A malformed DEVMESH_TIMEOUT throws mesh_error before any communication.
DEVMESH_DECL std::vector<int> node_of_ranks(const communicator& world);

}  // namespace devmesh::mpi

#if DEVMESH_INLINE_DEFINITIONS
#include "impl/node.ipp"
#endif
