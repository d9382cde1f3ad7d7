// devmesh/nccl/collectives_v.hpp: the v-collectives of dm::nccl::communicator (a count per
// rank): all_to_allv as one group of ncclSend/ncclRecv, reduce_scatterv as one group of
// ncclReduce (NCCL has no reduce-scatter of uneven blocks). What redistribute runs on uneven
// and empty shards instead of padding; optional members of the communicator concept
// (runtime/backend.hpp). Compiled once (nccl/impl/collectives_v.ipp).
#pragma once
#include <cstddef>
#include <span>

#include <cuda_runtime_api.h>

#include "../core/config.hpp"
#include "../runtime/backend.hpp"
#include "../runtime/element_type.hpp"
#include "handle.hpp"
#include "watch.hpp"

namespace devmesh::nccl::detail {

/// send_counts[j] elements to rank j from send + send_at[j], recv_counts[i] from rank i to
/// recv + recv_at[i] (empty displacements: packed in rank order).
DEVMESH_DECL void all_to_allv(const comm_handle& h, const void* send, std::span<const std::size_t> send_counts,
                              std::span<const std::size_t> send_at, void* recv,
                              std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_at,
                              element_type t, cudaStream_t st, watch* w);

/// The reduction of every rank's send (blocks packed in rank order, recv_counts[i] elements
/// for rank i); this rank's block lands in recv.
DEVMESH_DECL void reduce_scatterv(const comm_handle& h, const void* send, void* recv,
                                  std::span<const std::size_t> recv_counts, element_type t, op o, cudaStream_t st,
                                  watch* w);

}  // namespace devmesh::nccl::detail

#if DEVMESH_INLINE_DEFINITIONS
#include "impl/collectives_v.ipp"
#endif
