// devmesh/nccl/collectives_v.hpp: the v-collectives of dm::nccl::communicator (a count per
// rank; blocks packed in rank order, or for all_to_allv at given displacements), the optional
// members of the communicator concept (runtime/backend.hpp) that MPI has as MPI_Alltoallv and
// MPI_Reduce_scatter. NCCL has neither call: all_to_allv is one group of ncclSend/ncclRecv
// (a zero count sends nothing), reduce_scatterv one group of ncclReduce, one per rank as its
// root. Device pointers and the caller's stream, as in collectives.hpp.
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "../core/diagnostics.hpp"
#include "../runtime/backend.hpp"
#include "../runtime/block_starts.hpp"
#include "collectives.hpp"
#include "device_buffer.hpp"
#include "enqueue.hpp"
#include "handle.hpp"
#include "types.hpp"
#include "watch.hpp"

namespace devmesh::nccl::detail {

/// The layout of a v-collective's blocks on s (runtime/block_starts.hpp), errors naming the call.
template <class = void>
std::size_t block_starts(const comm_state& s, const char* call, std::span<const std::size_t> counts,
                         std::span<const std::size_t> at, std::vector<std::size_t>& at_out) {
  return devmesh::detail::block_starts([&] { return "devmesh: " + std::string(call) + " on " + s.label(); },
                                       static_cast<std::size_t>(s.size), counts, at, at_out);
}

/// send_counts[j] elements to rank j from send + send_at[j], recv_counts[i] from rank i to
/// recv + recv_at[i] (empty displacements: packed in rank order), as one group of
/// ncclSend/ncclRecv; overlapping send and recv go through a device copy of send.
template <class T>
void all_to_allv(const comm_handle& h, const T* send, std::span<const std::size_t> send_counts,
                 std::span<const std::size_t> send_at, T* recv, std::span<const std::size_t> recv_counts,
                 std::span<const std::size_t> recv_at, cudaStream_t st, watch* w) {
  comm_state& s = h.use("all_to_allv");
  std::vector<std::size_t> sa, ra;
  const std::size_t ns = block_starts(s, "all_to_allv", send_counts, send_at, sa);
  const std::size_t nr = block_starts(s, "all_to_allv", recv_counts, recv_at, ra);
  send_copy<T> copy(send, ns, devmesh::detail::buffers_overlap(send, ns, recv, nr), st, "all_to_allv",
                    "use disjoint buffers, or call it outside the group");
  as_group([&] {
    for (std::size_t p = 0; p < sa.size(); ++p) {
      const int peer = static_cast<int>(p);
      if (send_counts[p])
        enqueued(s, "ncclSend (all_to_allv)", ncclSend(copy.send + sa[p], send_counts[p], datatype<T>, peer, s.comm, st));
      if (recv_counts[p])
        enqueued(s, "ncclRecv (all_to_allv)", ncclRecv(recv + ra[p], recv_counts[p], datatype<T>, peer, s.comm, st));
    }
  });
  record_watch(w, st);
  copy.settle(st, w);
}

/// The reduction of every rank's send (the blocks of all ranks packed in rank order,
/// recv_counts[i] elements for rank i); rank() receives its block in recv. One group of
/// ncclReduce, rank i the root of block i; op::avg as ncclAvg (floating types only).
template <class T>
void reduce_scatterv(const comm_handle& h, const T* send, T* recv, std::span<const std::size_t> recv_counts, op o,
                     cudaStream_t st, watch* w) {
  comm_state& s = h.use("reduce_scatterv");
  require_avg_type<T>("reduce_scatterv", o);
  std::vector<std::size_t> at;
  const std::size_t ns = block_starts(s, "reduce_scatterv", recv_counts, {}, at);
  const std::size_t mine = recv_counts[static_cast<std::size_t>(s.rank)];
  send_copy<T> copy(send, ns, devmesh::detail::buffers_overlap(send, ns, recv, mine), st, "reduce_scatterv",
                    "use disjoint buffers, or call it outside the group");
  as_group([&] {
    for (std::size_t r = 0; r < at.size(); ++r)
      if (recv_counts[r])
        enqueued(s, "ncclReduce (reduce_scatterv)",
                 ncclReduce(copy.send + at[r], recv, recv_counts[r], datatype<T>, redop_of<T>(o), static_cast<int>(r),
                            s.comm, st));
  });
  record_watch(w, st);
  copy.settle(st, w);
}

}  // namespace devmesh::nccl::detail
