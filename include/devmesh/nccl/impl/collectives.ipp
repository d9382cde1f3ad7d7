// devmesh/nccl/impl/collectives.ipp: collectives.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <cstddef>
#include <string>

#include <nccl.h>

#include "../collectives.hpp"
#include "../device_buffer.hpp"
#include "../enqueue.hpp"
#include "../error.hpp"
#include "../types.hpp"

namespace devmesh::nccl::detail {

DEVMESH_DECL void require_avg_type(const char* call, element_type t, op o) {
  if (o != op::avg) return;
  if (t.code == element_code::boolean)
    throw comm_error(std::string("devmesh: ") + call +
                     ": op::avg on bool elements (an average of truth values is not one): use op::sum or op::max "
                     "for a logical or, op::prod or op::min for a logical and");
  if (t.is_integer())
    throw comm_error(std::string("devmesh: ") + call +
                     ": op::avg on an integer type (ncclAvg sums in the element type, which can overflow); "
                     "reduce with op::sum in a wider type and divide, or average floats");
}

/// The ncclDataType_t of t; comm_error naming `call` when NCCL has none (a caller that typed
/// its elements was refused at compile time already).
DEVMESH_DECL ncclDataType_t nccl_type(const char* call, element_type t) {
  const ncclDataType_t d = datatype_of(t);
  if (d == ncclNumTypes)
    throw comm_error(std::string("devmesh: ") + call + ": NCCL has no datatype for elements of type " +
                     std::string(t.name) + " (" + std::string(code_name(t.code)) + ")");
  return d;
}

/// What to do about a partial overlap inside a group, for the reductions (send == recv is
/// NCCL's in place and needs no copy).
inline constexpr const char* reduction_overlap_remedy = "use identical buffers (in place) or disjoint ones";

DEVMESH_DECL void all_reduce(const comm_handle& h, const void* send, void* recv, std::size_t count, element_type t,
                             op o, cudaStream_t st, watch* w) {
  comm_state& s = h.use("ncclAllReduce");
  require_avg_type("ncclAllReduce", t, o);
  const ncclDataType_t d = nccl_type("ncclAllReduce", t);
  const std::size_t bytes = count * t.size;
  send_copy copy(send, bytes, send != recv && devmesh::detail::bytes_overlap(send, bytes, recv, bytes), st,
                 "ncclAllReduce", reduction_overlap_remedy);
  enqueued(s, "ncclAllReduce", ncclAllReduce(copy.send, recv, count, d, redop_of(t, o), s.comm, st));
  record_watch(w, st);
  copy.settle(st, w);
}

DEVMESH_DECL void reduce(const comm_handle& h, const void* send, void* recv, std::size_t count, element_type t, op o,
                         int root, cudaStream_t st, watch* w) {
  comm_state& s = h.use("ncclReduce");
  require_avg_type("ncclReduce", t, o);
  s.check_rank("ncclReduce", "root", root);
  const ncclDataType_t d = nccl_type("ncclReduce", t);
  const std::size_t bytes = count * t.size;
  send_copy copy(send, bytes, send != recv && devmesh::detail::bytes_overlap(send, bytes, recv, bytes), st,
                 "ncclReduce", reduction_overlap_remedy);
  enqueued(s, "ncclReduce", ncclReduce(copy.send, recv, count, d, redop_of(t, o), root, s.comm, st));
  record_watch(w, st);
  copy.settle(st, w);
}

DEVMESH_DECL void broadcast(const comm_handle& h, void* buf, std::size_t count, element_type t, int root,
                            cudaStream_t st, watch* w) {
  comm_state& s = h.use("ncclBroadcast");
  s.check_rank("ncclBroadcast", "root", root);
  enqueued(s, "ncclBroadcast", ncclBroadcast(buf, buf, count, nccl_type("ncclBroadcast", t), root, s.comm, st));
  record_watch(w, st);
}

DEVMESH_DECL void all_gather(const comm_handle& h, const void* send, void* recv, std::size_t send_count,
                             element_type t, cudaStream_t st, watch* w) {
  comm_state& s = h.use("ncclAllGather");
  enqueued(s, "ncclAllGather", ncclAllGather(send, recv, send_count, nccl_type("ncclAllGather", t), s.comm, st));
  record_watch(w, st);
}

DEVMESH_DECL void reduce_scatter(const comm_handle& h, const void* send, void* recv, std::size_t recv_count,
                                 element_type t, op o, cudaStream_t st, watch* w) {
  comm_state& s = h.use("ncclReduceScatter");
  require_avg_type("ncclReduceScatter", t, o);
  const ncclDataType_t d = nccl_type("ncclReduceScatter", t);
  enqueued(s, "ncclReduceScatter", ncclReduceScatter(send, recv, recv_count, d, redop_of(t, o), s.comm, st));
  record_watch(w, st);
}

DEVMESH_DECL void all_to_all(const comm_handle& h, const void* send, void* recv, std::size_t count_per_rank,
                             element_type t, cudaStream_t st, watch* w) {
  comm_state& s = h.use("all_to_all");
  const ncclDataType_t d = nccl_type("all_to_all", t);
  const std::size_t n = static_cast<std::size_t>(s.size), block = count_per_rank * t.size, total = n * block;
  send_copy copy(send, total, devmesh::detail::bytes_overlap(send, total, recv, total), st, "all_to_all",
                 "use disjoint buffers, or call it outside the group");
  as_group([&] {
    for (std::size_t p = 0; p < n; ++p) {
      const int peer = static_cast<int>(p);
      enqueued(s, "ncclSend (all_to_all)", ncclSend(copy.at(p * block), count_per_rank, d, peer, s.comm, st));
      enqueued(s, "ncclRecv (all_to_all)",
               ncclRecv(static_cast<char*>(recv) + p * block, count_per_rank, d, peer, s.comm, st));
    }
  });
  record_watch(w, st);
  copy.settle(st, w);
}

DEVMESH_DECL void barrier(const comm_handle& h, cudaStream_t st, watch* w) {
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

DEVMESH_DECL void sendrecv(const comm_handle& h, const void* send, std::size_t send_count, int dest, void* recv,
                           std::size_t recv_count, int source, element_type t, cudaStream_t st, watch* w) {
  comm_state& s = h.use("sendrecv");
  if (dest != -1) s.check_rank("ncclSend", "dest", dest);
  if (source != -1) s.check_rank("ncclRecv", "source", source);
  const ncclDataType_t d = nccl_type("sendrecv", t);
  const std::size_t ns = send_count * t.size, nr = recv_count * t.size;
  send_copy copy(send, ns, dest != -1 && source != -1 && devmesh::detail::bytes_overlap(send, ns, recv, nr), st,
                 "sendrecv", "use disjoint buffers, or call it outside the group");
  as_group([&] {
    if (dest != -1) enqueued(s, "ncclSend", ncclSend(copy.send, send_count, d, dest, s.comm, st));
    if (source != -1) enqueued(s, "ncclRecv", ncclRecv(recv, recv_count, d, source, s.comm, st));
  });
  record_watch(w, st);
  copy.settle(st, w);
}

}  // namespace devmesh::nccl::detail
