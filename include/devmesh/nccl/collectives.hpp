// devmesh/nccl/collectives.hpp: the typed collectives of dm::nccl::communicator
// (runtime/backend.hpp lists them): each enqueues NCCL work on the caller's stream and
// returns; buffers are device pointers, counts are elements. Roots and peers are checked
// before NCCL sees them; overlapping send and recv buffers go through a device copy of send.
// The last argument, `w` (nullptr: none), is the watchdog's (watch.hpp): given, each call
// records an event after its work and waits for nothing.
#pragma once
#include <cstddef>
#include <string>
#include <type_traits>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "../core/diagnostics.hpp"
#include "../runtime/backend.hpp"
#include "device_buffer.hpp"
#include "enqueue.hpp"
#include "error.hpp"
#include "handle.hpp"
#include "types.hpp"
#include "watch.hpp"

namespace devmesh::nccl::detail {

/// ncclAvg on integers sums in the element type (it can overflow, then divides): refused
/// rather than silently wrong. On bool, refused as on MPI (an average of truth values is not one).
template <class T>
void require_avg_type(const char* call, op o) {
  if constexpr (std::is_same_v<T, bool>) {
    if (o == op::avg)
      throw comm_error(std::string("devmesh: ") + call +
                       ": op::avg on bool elements (an average of truth values is not one): use op::sum or op::max "
                       "for a logical or, op::prod or op::min for a logical and");
  } else if constexpr (std::is_integral_v<T>) {
    if (o == op::avg)
      throw comm_error(std::string("devmesh: ") + call +
                       ": op::avg on an integer type (ncclAvg sums in the element type, which can overflow); "
                       "reduce with op::sum in a wider type and divide, or average floats");
  }
}

/// What to do about a partial overlap inside a group, for the reductions (send == recv is
/// NCCL's in place and needs no copy).
inline constexpr const char* reduction_overlap_remedy = "use identical buffers (in place) or disjoint ones";

/// ncclAllReduce of count elements; partially overlapping send and recv reduce from a copy.
template <class T>
void all_reduce(const comm_handle& h, const T* send, T* recv, std::size_t count, op o, cudaStream_t st, watch* w) {
  comm_state& s = h.use("ncclAllReduce");
  require_avg_type<T>("ncclAllReduce", o);
  send_copy<T> copy(send, count, send != recv && devmesh::detail::buffers_overlap(send, count, recv, count), st, "ncclAllReduce",
                    reduction_overlap_remedy);
  enqueued(s, "ncclAllReduce", ncclAllReduce(copy.send, recv, count, datatype<T>, redop_of<T>(o), s.comm, st));
  record_watch(w, st);
  copy.settle(st, w);
}

/// ncclReduce of count elements onto rank root.
template <class T>
void reduce(const comm_handle& h, const T* send, T* recv, std::size_t count, op o, int root, cudaStream_t st, watch* w) {
  comm_state& s = h.use("ncclReduce");
  require_avg_type<T>("ncclReduce", o);
  s.check_rank("ncclReduce", "root", root);
  send_copy<T> copy(send, count, send != recv && devmesh::detail::buffers_overlap(send, count, recv, count), st, "ncclReduce",
                    reduction_overlap_remedy);
  enqueued(s, "ncclReduce", ncclReduce(copy.send, recv, count, datatype<T>, redop_of<T>(o), root, s.comm, st));
  record_watch(w, st);
  copy.settle(st, w);
}

/// ncclBroadcast of count elements from rank root, in place.
template <class T>
void broadcast(const comm_handle& h, T* buf, std::size_t count, int root, cudaStream_t st, watch* w) {
  comm_state& s = h.use("ncclBroadcast");
  s.check_rank("ncclBroadcast", "root", root);
  enqueued(s, "ncclBroadcast", ncclBroadcast(buf, buf, count, datatype<T>, root, s.comm, st));
  record_watch(w, st);
}

/// ncclAllGather: send_count elements from each rank into recv, in rank order.
template <class T>
void all_gather(const comm_handle& h, const T* send, T* recv, std::size_t send_count, cudaStream_t st, watch* w) {
  comm_state& s = h.use("ncclAllGather");
  enqueued(s, "ncclAllGather", ncclAllGather(send, recv, send_count, datatype<T>, s.comm, st));
  record_watch(w, st);
}

/// ncclReduceScatter: block rank() of the reduction, recv_count elements.
template <class T>
void reduce_scatter(const comm_handle& h, const T* send, T* recv, std::size_t recv_count, op o, cudaStream_t st, watch* w) {
  comm_state& s = h.use("ncclReduceScatter");
  require_avg_type<T>("ncclReduceScatter", o);
  enqueued(s, "ncclReduceScatter", ncclReduceScatter(send, recv, recv_count, datatype<T>, redop_of<T>(o), s.comm, st));
  record_watch(w, st);
}

/// count_per_rank elements to and from every rank, as one group of ncclSend/ncclRecv;
/// overlapping send and recv (in place) send from a device copy.
template <class T>
void all_to_all(const comm_handle& h, const T* send, T* recv, std::size_t count_per_rank, cudaStream_t st, watch* w) {
  comm_state& s = h.use("all_to_all");
  const std::size_t n = static_cast<std::size_t>(s.size), total = n * count_per_rank;
  send_copy<T> copy(send, total, devmesh::detail::buffers_overlap(send, total, recv, total), st, "all_to_all",
                          "use disjoint buffers, or call it outside the group");
  as_group([&] {
    for (std::size_t p = 0; p < n; ++p) {
      const int peer = static_cast<int>(p);
      const std::size_t at = p * count_per_rank;
      enqueued(s, "ncclSend (all_to_all)", ncclSend(copy.send + at, count_per_rank, datatype<T>, peer, s.comm, st));
      enqueued(s, "ncclRecv (all_to_all)", ncclRecv(recv + at, count_per_rank, datatype<T>, peer, s.comm, st));
    }
  });
  record_watch(w, st);
  copy.settle(st, w);
}

/// A host barrier: a one-element all-reduce on a scratch int, then the stream is
/// synchronized (inside a group, at the group's end instead; under the watchdog, by the
/// runtime, watched).
inline void barrier(const comm_handle& h, cudaStream_t st, watch* w) {
  comm_state& s = h.use("barrier");
  if (!s.scratch) {
    check_cuda(cudaMalloc(&s.scratch, sizeof(int)), "cudaMalloc (barrier)");
    check_cuda(cudaMemset(s.scratch, 0, sizeof(int)), "cudaMemset (barrier)");
  }
  enqueued(s, "ncclAllReduce (barrier)", ncclAllReduce(s.scratch, s.scratch, 1, ncclInt32, ncclSum, s.comm, st));
  record_watch(w, st);
  if (w && !w->unwatched)
    w->wait = true;  // the runtime waits, watched: a peer that never comes is the watchdog's to end
  else if (groups().depth == 0)
    check_cuda(cudaStreamSynchronize(st), "cudaStreamSynchronize (barrier)");
}

/// Sends to `dest` and receives from `source` (either may be -1: none), as one group;
/// overlapping send and recv buffers (shift(buf, buf)) send from a device copy.
template <class T>
void sendrecv(const comm_handle& h, const T* send, std::size_t send_count, int dest, T* recv, std::size_t recv_count,
              int source, cudaStream_t st, watch* w) {
  comm_state& s = h.use("sendrecv");
  if (dest != -1) s.check_rank("ncclSend", "dest", dest);
  if (source != -1) s.check_rank("ncclRecv", "source", source);
  send_copy<T> copy(send, send_count,
                          dest != -1 && source != -1 && devmesh::detail::buffers_overlap(send, send_count, recv, recv_count), st, "sendrecv",
                          "use disjoint buffers, or call it outside the group");
  as_group([&] {
    if (dest != -1) enqueued(s, "ncclSend", ncclSend(copy.send, send_count, datatype<T>, dest, s.comm, st));
    if (source != -1) enqueued(s, "ncclRecv", ncclRecv(recv, recv_count, datatype<T>, source, s.comm, st));
  });
  record_watch(w, st);
  copy.settle(st, w);
}

}  // namespace devmesh::nccl::detail
