// devmesh/mpi/collectives.hpp: the collectives of dm::mpi::communicator over host memory
// (runtime/backend.hpp lists them), one MPI call each, over an element type given as a value:
// written and compiled once (mpi/impl/collectives.ipp). Counts are elements; send == recv is
// in place; any other overlap of send and recv sends a copy (MPI forbids aliasing outside
// MPI_IN_PLACE).
#pragma once
#include <cstddef>

#include "native.hpp"

#include "../core/config.hpp"
#include "../runtime/backend.hpp"
#include "../runtime/deadline.hpp"
#include "../runtime/element_type.hpp"
#include "handle.hpp"

namespace devmesh::mpi::detail {

/// The MPI_Op of a reduction on elements of type t: MPI takes only the logical ops on
/// MPI_CXX_BOOL, so on bool sum and max are MPI_LOR, prod and min MPI_LAND (what they give on
/// bools, as in PyTorch); op::avg is MPI_SUM, then a division; op::max and op::min on float,
/// double and long double are ops of devmesh's own where a NaN wins (torch.maximum's rule; MPI
/// leaves NaN in MPI_MAX to the implementation). comm_error for op::avg on bool and for any
/// reduction on std::byte.
DEVMESH_DECL MPI_Op op_of(element_type t, op o);

/// MPI_Allreduce of n elements.
DEVMESH_DECL void all_reduce(const comm_handle& h, const void* send, void* recv, std::size_t n, element_type t, op o,
                             const watched_call* watch);
/// MPI_Reduce of n elements onto rank root.
DEVMESH_DECL void reduce(const comm_handle& h, const void* send, void* recv, std::size_t n, element_type t, op o,
                         int root, const watched_call* watch);
/// MPI_Bcast of n elements from rank root.
DEVMESH_DECL void broadcast(const comm_handle& h, void* buf, std::size_t n, element_type t, int root,
                            const watched_call* watch);
/// MPI_Allgather: send_count elements from each rank into recv, in rank order.
DEVMESH_DECL void all_gather(const comm_handle& h, const void* send, void* recv, std::size_t send_count,
                             element_type t, const watched_call* watch);
/// MPI_Reduce_scatter_block: block rank() of the reduction, recv_count elements.
DEVMESH_DECL void reduce_scatter(const comm_handle& h, const void* send, void* recv, std::size_t recv_count,
                                 element_type t, op o, const watched_call* watch);
/// MPI_Alltoall: block j of send to rank j, block i of recv from rank i.
DEVMESH_DECL void all_to_all(const comm_handle& h, const void* send, void* recv, std::size_t count_per_rank,
                             element_type t, const watched_call* watch);
/// MPI_Barrier.
DEVMESH_DECL void barrier(const comm_handle& h, const watched_call* watch);
/// MPI_Sendrecv; dest/source -1: no send/receive on that side (MPI_PROC_NULL). Watched: an
/// MPI_Isend and an MPI_Irecv, waited for together.
DEVMESH_DECL void sendrecv(const comm_handle& h, const void* send, std::size_t send_count, int dest, void* recv,
                           std::size_t recv_count, int source, element_type t, const watched_call* watch);

}  // namespace devmesh::mpi::detail

#if DEVMESH_INLINE_DEFINITIONS
#include "impl/collectives.ipp"
#endif
