// devmesh/mpi/collectives.hpp: the typed collectives of dm::mpi::communicator over host
// memory (runtime/backend.hpp lists them), one MPI call each. Counts are elements; send ==
// recv is in place; any other overlap of send and recv sends a copy (MPI forbids aliasing
// outside MPI_IN_PLACE).
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "native.hpp"

#include "../runtime/backend.hpp"
#include "average.hpp"
#include "datatype.hpp"
#include "error.hpp"
#include "handle.hpp"

namespace devmesh::mpi::detail {

/// The MPI_Op of a reduction on T (op::avg: MPI_SUM, then divided by the size).
template <class T>
MPI_Op mpi_op(op o) {
  static_assert(!std::is_same_v<std::remove_cv_t<T>, std::byte>,
                "devmesh: mpi: std::byte has no arithmetic, so reductions (all_reduce, reduce, reduce_scatter) "
                "on it are errors; reduce std::uint8_t instead (std::byte is for moves: broadcast, all_gather, "
                "all_to_all, shift)");
  switch (o) {
    case op::sum: return MPI_SUM;
    case op::prod: return MPI_PROD;
    case op::min: return MPI_MIN;
    case op::max: return MPI_MAX;
    case op::avg: return MPI_SUM;
  }
  return MPI_OP_NULL;
}

/// A copy of the send buffer (ns elements) when it overlaps recv (nr elements), else empty.
template <class T>
std::vector<T> copy_if_overlapping(const T* send, std::size_t ns, const T* recv, std::size_t nr) {
  if (!devmesh::detail::buffers_overlap(send, ns, recv, nr)) return {};
  return std::vector<T>(send, send + ns);
}

/// MPI_Allreduce of n elements.
template <class T>
void all_reduce(const comm_handle& h, const T* send, T* recv, std::size_t n, op o) {
  const MPI_Comm comm = h.use("all_reduce");
  if constexpr (is_integer<T>)
    if (o == op::avg) return integer_avg(h, reduction::all, send, recv, n, n, 0);
  const std::vector<T> copy = send == recv ? std::vector<T>() : copy_if_overlapping(send, n, recv, n);
  check(MPI_Allreduce(send == recv ? MPI_IN_PLACE : copy.empty() ? send : copy.data(), recv,
                      int_count("all_reduce", n), datatype<T>(), mpi_op<T>(o), comm),
        "MPI_Allreduce");
  if (o == op::avg) divide(recv, n, h.size());
}

/// MPI_Reduce of n elements onto rank root.
template <class T>
void reduce(const comm_handle& h, const T* send, T* recv, std::size_t n, op o, int root) {
  const MPI_Comm comm = h.use("reduce");
  if constexpr (is_integer<T>)
    if (o == op::avg) return integer_avg(h, reduction::to_root, send, recv, n, n, root);
  const bool in_place = send == recv && h.rank() == root;
  const std::vector<T> copy = send == recv ? std::vector<T>() : copy_if_overlapping(send, n, recv, n);
  check(MPI_Reduce(in_place ? MPI_IN_PLACE : copy.empty() ? send : copy.data(), recv, int_count("reduce", n),
                   datatype<T>(), mpi_op<T>(o), root, comm),
        "MPI_Reduce");
  if (o == op::avg && h.rank() == root) divide(recv, n, h.size());
}

/// MPI_Bcast of n elements from rank root.
template <class T>
void broadcast(const comm_handle& h, T* buf, std::size_t n, int root) {
  const MPI_Comm comm = h.use("broadcast");
  check(MPI_Bcast(buf, int_count("broadcast", n), datatype<T>(), root, comm), "MPI_Bcast");
}

/// MPI_Allgather: send_count elements from each rank into recv, in rank order.
template <class T>
void all_gather(const comm_handle& h, const T* send, T* recv, std::size_t send_count) {
  const MPI_Comm comm = h.use("all_gather");
  const int c = int_count("all_gather", send_count);
  const std::size_t recv_count = send_count * static_cast<std::size_t>(h.size());
  const std::vector<T> copy = copy_if_overlapping(send, send_count, recv, recv_count);
  check(MPI_Allgather(copy.empty() ? send : copy.data(), c, datatype<T>(), recv, c, datatype<T>(), comm),
        "MPI_Allgather");
}

/// MPI_Reduce_scatter_block: block rank() of the reduction, recv_count elements.
template <class T>
void reduce_scatter(const comm_handle& h, const T* send, T* recv, std::size_t recv_count, op o) {
  const MPI_Comm comm = h.use("reduce_scatter");
  const std::size_t send_count = recv_count * static_cast<std::size_t>(h.size());
  if constexpr (is_integer<T>)
    if (o == op::avg) return integer_avg(h, reduction::scatter, send, recv, send_count, recv_count, 0);
  const std::vector<T> copy = copy_if_overlapping(send, send_count, recv, recv_count);
  check(MPI_Reduce_scatter_block(copy.empty() ? send : copy.data(), recv, int_count("reduce_scatter", recv_count),
                                 datatype<T>(), mpi_op<T>(o), comm),
        "MPI_Reduce_scatter_block");
  if (o == op::avg) divide(recv, recv_count, h.size());
}

/// MPI_Alltoall: block j of send to rank j, block i of recv from rank i.
template <class T>
void all_to_all(const comm_handle& h, const T* send, T* recv, std::size_t count_per_rank) {
  const MPI_Comm comm = h.use("all_to_all");
  const int c = int_count("all_to_all", count_per_rank);
  const std::size_t total = count_per_rank * static_cast<std::size_t>(h.size());
  const std::vector<T> copy = copy_if_overlapping(send, total, recv, total);
  check(MPI_Alltoall(copy.empty() ? send : copy.data(), c, datatype<T>(), recv, c, datatype<T>(), comm),
        "MPI_Alltoall");
}

/// MPI_Barrier.
template <class = void>
void barrier(const comm_handle& h) {
  const MPI_Comm comm = h.use("barrier");
  check(MPI_Barrier(comm), "MPI_Barrier");
}

/// MPI_Sendrecv; dest/source -1: no send/receive on that side (MPI_PROC_NULL).
template <class T>
void sendrecv(const comm_handle& h, const T* send, std::size_t send_count, int dest, T* recv, std::size_t recv_count,
              int source) {
  const MPI_Comm comm = h.use("sendrecv");
  constexpr int tag = 0x646d;  // "dm"
  // MPI forbids overlapping send and receive buffers: shift(buf, buf) sends a copy.
  const std::vector<T> copy = dest < 0 || source < 0 ? std::vector<T>()
                                                     : copy_if_overlapping(send, send_count, recv, recv_count);
  if (!copy.empty()) send = copy.data();
  check(MPI_Sendrecv(send, int_count("sendrecv", send_count), datatype<T>(), dest < 0 ? MPI_PROC_NULL : dest, tag,
                     recv, int_count("sendrecv", recv_count), datatype<T>(), source < 0 ? MPI_PROC_NULL : source, tag,
                     comm, MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
}

}  // namespace devmesh::mpi::detail
