// devmesh/mpi/impl/collectives.ipp: collectives.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <cstring>
#include <memory>
#include <span>
#include <string>

#include "average.ipp"
#include "../collectives.hpp"
#include "control.ipp"
#include "datatype.ipp"
#include "../error.hpp"

namespace devmesh::mpi::detail {

/// max and min of floating values where a NaN wins, as torch.maximum and torch.minimum: MPI's
/// MPI_MAX and MPI_MIN leave NaN to the implementation (Open MPI's `a > b ? a : b` keeps a NaN
/// only where it is the last operand, so Partial(max) dropped a NaN unless the last rank held
/// it). inout[i] = in[i] op inout[i], the first NaN met kept.
template <class F, bool Max>
void nan_propagating(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const F*>(in);
  auto* b = static_cast<F*>(inout);
  for (int i = 0; i < *len; ++i) {
    const F x = a[i], y = b[i];
    if (y != y) continue;  // inout is NaN: it stays
    if (x != x || (Max ? x > y : x < y)) b[i] = x;
  }
}
struct nan_propagating_handles {
  MPI_Op max[3]{MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL}, min[3]{MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
};
/// The ops for float, double and long double, created on first use (after MPI_Init; MPI_Finalize
/// frees them, as average.ipp's wide_sum).
DEVMESH_DECL const nan_propagating_handles& nan_propagating_ops() {
  static const nan_propagating_handles h = [] {
    nan_propagating_handles n;
    check(MPI_Op_create(&nan_propagating<float, true>, 1, &n.max[0]), "MPI_Op_create");
    check(MPI_Op_create(&nan_propagating<double, true>, 1, &n.max[1]), "MPI_Op_create");
    check(MPI_Op_create(&nan_propagating<long double, true>, 1, &n.max[2]), "MPI_Op_create");
    check(MPI_Op_create(&nan_propagating<float, false>, 1, &n.min[0]), "MPI_Op_create");
    check(MPI_Op_create(&nan_propagating<double, false>, 1, &n.min[1]), "MPI_Op_create");
    check(MPI_Op_create(&nan_propagating<long double, false>, 1, &n.min[2]), "MPI_Op_create");
    return n;
  }();
  return h;
}

DEVMESH_DECL MPI_Op op_of(element_type t, op o) {
  if (t.code == element_code::byte)
    throw comm_error("devmesh: mpi: std::byte has no arithmetic, so reductions (all_reduce, reduce, reduce_scatter) "
                     "on it are errors; reduce std::uint8_t instead (std::byte is for moves)");
  if (t.code == element_code::boolean) {
    if (o == op::avg)
      throw comm_error("devmesh: mpi: op::avg on bool elements (an average of truth values is not one): use op::sum "
                       "or op::max for a logical or, op::prod or op::min for a logical and");
    return o == op::sum || o == op::max ? MPI_LOR : MPI_LAND;
  }
  if ((o == op::max || o == op::min) &&
      (t.code == element_code::float32 || t.code == element_code::float64 || t.code == element_code::long_double)) {
    const int k = t.code == element_code::float32 ? 0 : t.code == element_code::float64 ? 1 : 2;
    const nan_propagating_handles& h = nan_propagating_ops();
    return o == op::max ? h.max[k] : h.min[k];
  }
  switch (o) {
    case op::sum: return MPI_SUM;
    case op::prod: return MPI_PROD;
    case op::min: return MPI_MIN;
    case op::max: return MPI_MAX;
    case op::avg: return MPI_SUM;
  }
  return MPI_OP_NULL;
}

/// A copy of the send buffer (ns elements of type t) when it overlaps recv (nr elements),
/// else null.
DEVMESH_DECL std::unique_ptr<unsigned char[]> copy_if_overlapping(const void* send, std::size_t ns, const void* recv,
                                                                  std::size_t nr, element_type t) {
  if (!devmesh::detail::bytes_overlap(send, ns * t.size, recv, nr * t.size)) return nullptr;
  auto copy = std::make_unique_for_overwrite<unsigned char[]>(ns * t.size);
  std::memcpy(copy.get(), send, ns * t.size);
  return copy;
}

DEVMESH_DECL void all_reduce(const comm_handle& h, const void* send, void* recv, std::size_t n, element_type t, op o,
                             const watched_call* watch) {
  const MPI_Comm comm = h.use("all_reduce");
  if (t.is_integer() && o == op::avg) return integer_avg(h, reduction::all, send, recv, n, n, t, 0, watch);
  const MPI_Datatype type = datatype_of(t);
  const MPI_Op mop = op_of(t, o);
  auto copy = send == recv ? nullptr : copy_if_overlapping(send, n, recv, n, t);
  const void* from = send == recv ? MPI_IN_PLACE : copy ? copy.get() : send;
  const int c = int_count("all_reduce", n);
  void* to = recv;
  staged stage(watch, from, n * t.size, to, n * t.size, from == MPI_IN_PLACE);
  issue(h, "MPI_Allreduce", "MPI_Iallreduce", watch, [&] { return MPI_Allreduce(from, to, c, type, mop, comm); },
        [&](MPI_Request* r) { return MPI_Iallreduce(from, to, c, type, mop, comm, r); }, stage);
  stage.finish();
  if (o == op::avg) divide(recv, n, t, h.size());
}

DEVMESH_DECL void reduce(const comm_handle& h, const void* send, void* recv, std::size_t n, element_type t, op o,
                         int root, const watched_call* watch) {
  const MPI_Comm comm = h.use("reduce");
  if (t.is_integer() && o == op::avg) return integer_avg(h, reduction::to_root, send, recv, n, n, t, root, watch);
  const MPI_Datatype type = datatype_of(t);
  const MPI_Op mop = op_of(t, o);
  const bool in_place = send == recv && h.rank() == root;
  auto copy = send == recv ? nullptr : copy_if_overlapping(send, n, recv, n, t);
  const void* from = in_place ? MPI_IN_PLACE : copy ? copy.get() : send;
  const int c = int_count("reduce", n);
  void* to = recv;  // read by MPI at the root only
  staged stage(watch, from, n * t.size, to, h.rank() == root ? n * t.size : 0, in_place);
  issue(h, "MPI_Reduce", "MPI_Ireduce", watch, [&] { return MPI_Reduce(from, to, c, type, mop, root, comm); },
        [&](MPI_Request* r) { return MPI_Ireduce(from, to, c, type, mop, root, comm, r); }, stage);
  stage.finish();
  if (o == op::avg && h.rank() == root) divide(recv, n, t, h.size());
}

DEVMESH_DECL void broadcast(const comm_handle& h, void* buf, std::size_t n, element_type t, int root,
                            const watched_call* watch) {
  const MPI_Comm comm = h.use("broadcast");
  const MPI_Datatype type = datatype_of(t);
  const int c = int_count("broadcast", n);
  const void* no_send = nullptr;
  void* data = buf;
  staged stage(watch, no_send, 0, data, n * t.size, true);
  issue(h, "MPI_Bcast", "MPI_Ibcast", watch, [&] { return MPI_Bcast(data, c, type, root, comm); },
        [&](MPI_Request* r) { return MPI_Ibcast(data, c, type, root, comm, r); }, stage);
  stage.finish();
}

DEVMESH_DECL void all_gather(const comm_handle& h, const void* send, void* recv, std::size_t send_count,
                             element_type t, const watched_call* watch) {
  const MPI_Comm comm = h.use("all_gather");
  const MPI_Datatype type = datatype_of(t);
  const int c = int_count("all_gather", send_count);
  const std::size_t recv_count = send_count * static_cast<std::size_t>(h.size());
  auto copy = copy_if_overlapping(send, send_count, recv, recv_count, t);
  const void* from = copy ? copy.get() : send;
  void* to = recv;
  staged stage(watch, from, send_count * t.size, to, recv_count * t.size, false);
  issue(h, "MPI_Allgather", "MPI_Iallgather", watch,
        [&] { return MPI_Allgather(from, c, type, to, c, type, comm); },
        [&](MPI_Request* r) { return MPI_Iallgather(from, c, type, to, c, type, comm, r); }, stage);
  stage.finish();
}

DEVMESH_DECL void reduce_scatter(const comm_handle& h, const void* send, void* recv, std::size_t recv_count,
                                 element_type t, op o, const watched_call* watch) {
  const MPI_Comm comm = h.use("reduce_scatter");
  const std::size_t send_count = recv_count * static_cast<std::size_t>(h.size());
  if (t.is_integer() && o == op::avg)
    return integer_avg(h, reduction::scatter, send, recv, send_count, recv_count, t, 0, watch);
  const MPI_Datatype type = datatype_of(t);
  const MPI_Op mop = op_of(t, o);
  auto copy = copy_if_overlapping(send, send_count, recv, recv_count, t);
  const void* from = copy ? copy.get() : send;
  const int c = int_count("reduce_scatter", recv_count);
  void* to = recv;
  staged stage(watch, from, send_count * t.size, to, recv_count * t.size, false);
  issue(h, "MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block", watch,
        [&] { return MPI_Reduce_scatter_block(from, to, c, type, mop, comm); },
        [&](MPI_Request* r) { return MPI_Ireduce_scatter_block(from, to, c, type, mop, comm, r); }, stage);
  stage.finish();
  if (o == op::avg) divide(recv, recv_count, t, h.size());
}

DEVMESH_DECL void all_to_all(const comm_handle& h, const void* send, void* recv, std::size_t count_per_rank,
                             element_type t, const watched_call* watch) {
  const MPI_Comm comm = h.use("all_to_all");
  const MPI_Datatype type = datatype_of(t);
  const int c = int_count("all_to_all", count_per_rank);
  const std::size_t total = count_per_rank * static_cast<std::size_t>(h.size());
  auto copy = copy_if_overlapping(send, total, recv, total, t);
  const void* from = copy ? copy.get() : send;
  void* to = recv;
  staged stage(watch, from, total * t.size, to, total * t.size, false);
  issue(h, "MPI_Alltoall", "MPI_Ialltoall", watch, [&] { return MPI_Alltoall(from, c, type, to, c, type, comm); },
        [&](MPI_Request* r) { return MPI_Ialltoall(from, c, type, to, c, type, comm, r); }, stage);
  stage.finish();
}

DEVMESH_DECL void barrier(const comm_handle& h, const watched_call* watch) {
  const MPI_Comm comm = h.use("barrier");
  int none = 0;
  issue(h, "MPI_Barrier", "MPI_Ibarrier", watch, [&] { return MPI_Barrier(comm); },
        [&](MPI_Request* r) { return MPI_Ibarrier(comm, r); }, none);
}

DEVMESH_DECL void sendrecv(const comm_handle& h, const void* send, std::size_t send_count, int dest, void* recv,
                           std::size_t recv_count, int source, element_type t, const watched_call* watch) {
  const MPI_Comm comm = h.use("sendrecv");
  constexpr int tag = 0x646d;  // "dm"
  const MPI_Datatype type = datatype_of(t);
  // MPI forbids overlapping send and receive buffers: shift(buf, buf) sends a copy.
  auto copy = dest < 0 || source < 0 ? nullptr : copy_if_overlapping(send, send_count, recv, recv_count, t);
  if (copy) send = copy.get();
  const int ns = int_count("sendrecv", send_count), nr = int_count("sendrecv", recv_count);
  const int to = dest < 0 ? MPI_PROC_NULL : dest, from = source < 0 ? MPI_PROC_NULL : source;
  if (!watch) [[likely]]
    return check(MPI_Sendrecv(send, ns, type, to, tag, recv, nr, type, from, tag, comm, MPI_STATUS_IGNORE),
                 "MPI_Sendrecv");
  staged stage(watch, send, to == MPI_PROC_NULL ? 0 : send_count * t.size, recv,
               from == MPI_PROC_NULL ? 0 : recv_count * t.size, false);
  MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  check(MPI_Irecv(recv, nr, type, from, tag, comm, &reqs[0]), "MPI_Irecv");
  check(MPI_Isend(send, ns, type, to, tag, comm, &reqs[1]), "MPI_Isend");
  wait_watched(h, "MPI_Isend/MPI_Irecv (sendrecv)", *watch, std::span<MPI_Request>(reqs), &stage,
               &park_keep<staged>);
  stage.finish();
}

}  // namespace devmesh::mpi::detail
