// devmesh/mpi/collectives.hpp: the typed collectives of dm::mpi::communicator over host
// memory (runtime/backend.hpp lists them), one MPI call each. Counts are elements; send ==
// recv is in place; any other overlap of send and recv sends a copy (MPI forbids aliasing
// outside MPI_IN_PLACE).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "native.hpp"

#include "../runtime/backend.hpp"
#include "../runtime/owned.hpp"
#include "average.hpp"
#include "control.hpp"
#include "datatype.hpp"
#include "error.hpp"
#include "handle.hpp"

namespace devmesh::mpi::detail {

/// The MPI_Op of a reduction on bool: MPI takes only the logical ops on MPI_CXX_BOOL, so sum
/// and max are MPI_LOR, prod and min MPI_LAND (what they give on bools, as in PyTorch);
/// op::avg throws comm_error (an average of truth values is not one).
inline MPI_Op bool_op(op o) {
  if (o == op::avg)
    throw comm_error("devmesh: mpi: op::avg on bool elements (an average of truth values is not one): use op::sum "
                     "or op::max for a logical or, op::prod or op::min for a logical and");
  return o == op::sum || o == op::max ? MPI_LOR : MPI_LAND;
}

/// The MPI_Op of a reduction on T (op::avg: MPI_SUM, then divided by the size).
template <class T>
MPI_Op mpi_op(op o) {
  static_assert(!std::is_same_v<std::remove_cv_t<T>, std::byte>,
                "devmesh: mpi: std::byte has no arithmetic, so reductions (all_reduce, reduce, reduce_scatter) "
                "on it are errors; reduce std::uint8_t instead (std::byte is for moves: broadcast, all_gather, "
                "all_to_all, shift)");
  if constexpr (std::is_same_v<std::remove_cv_t<T>, bool>) return bool_op(o);
  switch (o) {
    case op::sum: return MPI_SUM;
    case op::prod: return MPI_PROD;
    case op::min: return MPI_MIN;
    case op::max: return MPI_MAX;
    case op::avg: return MPI_SUM;
  }
  return MPI_OP_NULL;
}

/// A copy of the send buffer (ns elements) when it overlaps recv (nr elements), else null.
/// Not a std::vector<T>: std::vector<bool> packs bits and has no data().
template <class T>
devmesh::detail::owned<T[]> copy_if_overlapping(const T* send, std::size_t ns, const T* recv, std::size_t nr) {
  if (!devmesh::detail::buffers_overlap(send, ns, recv, nr)) return nullptr;
  auto copy = devmesh::detail::owned<T[]>::for_overwrite(ns);
  for (std::size_t i = 0; i < ns; ++i) copy[i] = send[i];
  return copy;
}

/// MPI_Allreduce of n elements.
template <class T>
void all_reduce(const comm_handle& h, const T* send, T* recv, std::size_t n, op o, const watched_call* watch = nullptr) {
  const MPI_Comm comm = h.use("all_reduce");
  if constexpr (is_integer<T>)
    if (o == op::avg) return integer_avg(h, reduction::all, send, recv, n, n, 0, watch);
  auto copy = send == recv ? nullptr : copy_if_overlapping(send, n, recv, n);
  const void* from = send == recv ? MPI_IN_PLACE : copy ? copy.get() : send;
  const int c = int_count("all_reduce", n);
  issue(h, "MPI_Allreduce", "MPI_Iallreduce", watch,
        [&] { return MPI_Allreduce(from, recv, c, datatype<T>(), mpi_op<T>(o), comm); },
        [&](MPI_Request* r) { return MPI_Iallreduce(from, recv, c, datatype<T>(), mpi_op<T>(o), comm, r); }, copy);
  if (o == op::avg) divide(recv, n, h.size());
}

/// MPI_Reduce of n elements onto rank root.
template <class T>
void reduce(const comm_handle& h, const T* send, T* recv, std::size_t n, op o, int root,
            const watched_call* watch = nullptr) {
  const MPI_Comm comm = h.use("reduce");
  if constexpr (is_integer<T>)
    if (o == op::avg) return integer_avg(h, reduction::to_root, send, recv, n, n, root, watch);
  const bool in_place = send == recv && h.rank() == root;
  auto copy = send == recv ? nullptr : copy_if_overlapping(send, n, recv, n);
  const void* from = in_place ? MPI_IN_PLACE : copy ? copy.get() : send;
  const int c = int_count("reduce", n);
  issue(h, "MPI_Reduce", "MPI_Ireduce", watch,
        [&] { return MPI_Reduce(from, recv, c, datatype<T>(), mpi_op<T>(o), root, comm); },
        [&](MPI_Request* r) { return MPI_Ireduce(from, recv, c, datatype<T>(), mpi_op<T>(o), root, comm, r); }, copy);
  if (o == op::avg && h.rank() == root) divide(recv, n, h.size());
}

/// MPI_Bcast of n elements from rank root.
template <class T>
void broadcast(const comm_handle& h, T* buf, std::size_t n, int root, const watched_call* watch = nullptr) {
  const MPI_Comm comm = h.use("broadcast");
  const int c = int_count("broadcast", n);
  int none = 0;
  issue(h, "MPI_Bcast", "MPI_Ibcast", watch, [&] { return MPI_Bcast(buf, c, datatype<T>(), root, comm); },
        [&](MPI_Request* r) { return MPI_Ibcast(buf, c, datatype<T>(), root, comm, r); }, none);
}

/// MPI_Allgather: send_count elements from each rank into recv, in rank order.
template <class T>
void all_gather(const comm_handle& h, const T* send, T* recv, std::size_t send_count,
                const watched_call* watch = nullptr) {
  const MPI_Comm comm = h.use("all_gather");
  const int c = int_count("all_gather", send_count);
  const std::size_t recv_count = send_count * static_cast<std::size_t>(h.size());
  auto copy = copy_if_overlapping(send, send_count, recv, recv_count);
  const T* from = copy ? copy.get() : send;
  issue(h, "MPI_Allgather", "MPI_Iallgather", watch,
        [&] { return MPI_Allgather(from, c, datatype<T>(), recv, c, datatype<T>(), comm); },
        [&](MPI_Request* r) { return MPI_Iallgather(from, c, datatype<T>(), recv, c, datatype<T>(), comm, r); }, copy);
}

/// MPI_Reduce_scatter_block: block rank() of the reduction, recv_count elements.
template <class T>
void reduce_scatter(const comm_handle& h, const T* send, T* recv, std::size_t recv_count, op o,
                    const watched_call* watch = nullptr) {
  const MPI_Comm comm = h.use("reduce_scatter");
  const std::size_t send_count = recv_count * static_cast<std::size_t>(h.size());
  if constexpr (is_integer<T>)
    if (o == op::avg) return integer_avg(h, reduction::scatter, send, recv, send_count, recv_count, 0, watch);
  auto copy = copy_if_overlapping(send, send_count, recv, recv_count);
  const T* from = copy ? copy.get() : send;
  const int c = int_count("reduce_scatter", recv_count);
  issue(h, "MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block", watch,
        [&] { return MPI_Reduce_scatter_block(from, recv, c, datatype<T>(), mpi_op<T>(o), comm); },
        [&](MPI_Request* r) {
          return MPI_Ireduce_scatter_block(from, recv, c, datatype<T>(), mpi_op<T>(o), comm, r);
        }, copy);
  if (o == op::avg) divide(recv, recv_count, h.size());
}

/// MPI_Alltoall: block j of send to rank j, block i of recv from rank i.
template <class T>
void all_to_all(const comm_handle& h, const T* send, T* recv, std::size_t count_per_rank,
                const watched_call* watch = nullptr) {
  const MPI_Comm comm = h.use("all_to_all");
  const int c = int_count("all_to_all", count_per_rank);
  const std::size_t total = count_per_rank * static_cast<std::size_t>(h.size());
  auto copy = copy_if_overlapping(send, total, recv, total);
  const T* from = copy ? copy.get() : send;
  issue(h, "MPI_Alltoall", "MPI_Ialltoall", watch,
        [&] { return MPI_Alltoall(from, c, datatype<T>(), recv, c, datatype<T>(), comm); },
        [&](MPI_Request* r) { return MPI_Ialltoall(from, c, datatype<T>(), recv, c, datatype<T>(), comm, r); }, copy);
}

/// MPI_Barrier.
template <class = void>
void barrier(const comm_handle& h, const watched_call* watch = nullptr) {
  const MPI_Comm comm = h.use("barrier");
  int none = 0;
  issue(h, "MPI_Barrier", "MPI_Ibarrier", watch, [&] { return MPI_Barrier(comm); },
        [&](MPI_Request* r) { return MPI_Ibarrier(comm, r); }, none);
}

/// MPI_Sendrecv; dest/source -1: no send/receive on that side (MPI_PROC_NULL). Watched: an
/// MPI_Isend and an MPI_Irecv, waited for together.
template <class T>
void sendrecv(const comm_handle& h, const T* send, std::size_t send_count, int dest, T* recv, std::size_t recv_count,
              int source, const watched_call* watch = nullptr) {
  const MPI_Comm comm = h.use("sendrecv");
  constexpr int tag = 0x646d;  // "dm"
  // MPI forbids overlapping send and receive buffers: shift(buf, buf) sends a copy.
  auto copy = dest < 0 || source < 0 ? nullptr : copy_if_overlapping(send, send_count, recv, recv_count);
  if (copy) send = copy.get();
  const int ns = int_count("sendrecv", send_count), nr = int_count("sendrecv", recv_count);
  const int to = dest < 0 ? MPI_PROC_NULL : dest, from = source < 0 ? MPI_PROC_NULL : source;
  if (!watch) [[likely]]
    return check(MPI_Sendrecv(send, ns, datatype<T>(), to, tag, recv, nr, datatype<T>(), from, tag, comm,
                              MPI_STATUS_IGNORE),
                 "MPI_Sendrecv");
  MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  check(MPI_Irecv(recv, nr, datatype<T>(), from, tag, comm, &reqs[0]), "MPI_Irecv");
  check(MPI_Isend(send, ns, datatype<T>(), to, tag, comm, &reqs[1]), "MPI_Isend");
  wait_watched(h, "MPI_Isend/MPI_Irecv (sendrecv)", *watch, std::span<MPI_Request>(reqs), &copy,
               &park_keep<decltype(copy)>);
}

}  // namespace devmesh::mpi::detail
