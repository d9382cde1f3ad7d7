// devmesh/mpi/collectives_v.hpp: the v-collectives of dm::mpi::communicator (a count per
// rank; blocks packed in rank order, or for all_to_allv at given displacements): what
// redistribute runs on uneven and empty shards instead of padding. Optional members of the
// communicator concept (runtime/backend.hpp); compiled once (mpi/impl/collectives_v.ipp).
#pragma once
#include <cstddef>
#include <span>

#include "native.hpp"

#include "../core/config.hpp"
#include "../runtime/backend.hpp"
#include "../runtime/deadline.hpp"
#include "../runtime/element_type.hpp"
#include "handle.hpp"

namespace devmesh::mpi::detail {

/// MPI_Alltoallv: send_counts[j] elements to rank j from send + send_at[j], recv_counts[i]
/// from rank i to recv + recv_at[i] (empty displacements: packed in rank order).
DEVMESH_DECL void all_to_allv(const comm_handle& h, const void* send, std::span<const std::size_t> send_counts,
                              std::span<const std::size_t> send_at, void* recv,
                              std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_at,
                              element_type t, const watched_call* watch);

/// MPI_Reduce_scatter: the reduction of every rank's send (the blocks of all ranks, packed in
/// rank order, recv_counts[i] elements for rank i); rank() receives its block. op::avg on
/// floating types sums, then divides; integer averages are refused (mesh_error).
DEVMESH_DECL void reduce_scatterv(const comm_handle& h, const void* send, void* recv,
                                  std::span<const std::size_t> recv_counts, element_type t, op o,
                                  const watched_call* watch);

}  // namespace devmesh::mpi::detail

#if DEVMESH_INLINE_DEFINITIONS
#include "impl/collectives_v.ipp"
#endif
