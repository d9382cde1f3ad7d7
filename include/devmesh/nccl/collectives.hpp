// devmesh/nccl/collectives.hpp: the collectives of dm::nccl::communicator (runtime/backend.hpp
// lists them): each enqueues NCCL work on the caller's stream and returns; buffers are device
// pointers, counts are elements. Roots and peers are checked before NCCL sees them;
// overlapping send and recv buffers go through a device copy of send. The last argument, `w`
// (nullptr: none), is the watchdog's (watch.hpp): given, each call records an event after its
// work and waits for nothing. Written and compiled once, over an element type given as a
// value (nccl/impl/collectives.ipp).
#pragma once
#include <cstddef>

#include <cuda_runtime_api.h>

#include "../core/config.hpp"
#include "../runtime/backend.hpp"
#include "../runtime/element_type.hpp"
#include "handle.hpp"
#include "watch.hpp"

namespace devmesh::nccl::detail {

/// op::avg is refused on bool (an average of truth values is not one) and on integers (ncclAvg
/// sums in the element type, which can overflow): comm_error naming `call`.
DEVMESH_DECL void require_avg_type(const char* call, element_type t, op o);

/// ncclAllReduce of count elements.
DEVMESH_DECL void all_reduce(const comm_handle& h, const void* send, void* recv, std::size_t count, element_type t,
                             op o, cudaStream_t st, watch* w);
/// ncclReduce of count elements onto rank root.
DEVMESH_DECL void reduce(const comm_handle& h, const void* send, void* recv, std::size_t count, element_type t, op o,
                         int root, cudaStream_t st, watch* w);
/// ncclBroadcast of count elements from rank root, in place.
DEVMESH_DECL void broadcast(const comm_handle& h, void* buf, std::size_t count, element_type t, int root,
                            cudaStream_t st, watch* w);
/// ncclAllGather: send_count elements from each rank, in rank order.
DEVMESH_DECL void all_gather(const comm_handle& h, const void* send, void* recv, std::size_t send_count,
                             element_type t, cudaStream_t st, watch* w);
/// ncclReduceScatter: block rank() of the reduction, recv_count elements.
DEVMESH_DECL void reduce_scatter(const comm_handle& h, const void* send, void* recv, std::size_t recv_count,
                                 element_type t, op o, cudaStream_t st, watch* w);
/// count_per_rank elements to and from every rank, as one group of ncclSend/ncclRecv.
DEVMESH_DECL void all_to_all(const comm_handle& h, const void* send, void* recv, std::size_t count_per_rank,
                             element_type t, cudaStream_t st, watch* w);
/// A host barrier: a one-element all-reduce, then the stream synchronized (under the
/// watchdog, by the runtime, watched).
DEVMESH_DECL void barrier(const comm_handle& h, cudaStream_t st, watch* w);
/// Sends to `dest` and receives from `source` (either may be -1: none), as one group.
DEVMESH_DECL void sendrecv(const comm_handle& h, const void* send, std::size_t send_count, int dest, void* recv,
                           std::size_t recv_count, int source, element_type t, cudaStream_t st, watch* w);

}  // namespace devmesh::nccl::detail

#if DEVMESH_INLINE_DEFINITIONS
#include "impl/collectives.ipp"
#endif
