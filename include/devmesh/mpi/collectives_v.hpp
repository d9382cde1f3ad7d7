// devmesh/mpi/collectives_v.hpp: the v-collectives of dm::mpi::communicator (a count per
// rank; blocks packed in rank order, or for all_to_allv at given displacements): what
// redistribute runs on uneven and empty shards instead of padding. Optional members of the
// communicator concept (runtime/backend.hpp).
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "native.hpp"

#include "../runtime/backend.hpp"
#include "../runtime/block_starts.hpp"
#include "collectives.hpp"
#include "control.hpp"
#include "datatype.hpp"
#include "error.hpp"
#include "handle.hpp"

namespace devmesh::mpi::detail {

/// MPI's int counts and displacements from per-rank element counts and displacements (empty
/// displacements: packed in rank order; runtime/block_starts.hpp); throws mesh_error when the
/// sizes do not match h, comm_error when a count, a displacement or the extent does not fit an
/// int. Returns the extent of the buffer the blocks span.
template <class = void>
std::size_t counts_at(const comm_handle& h, const char* what, std::span<const std::size_t> counts,
                      std::span<const std::size_t> at, std::vector<int>& c, std::vector<int>& displs) {
  std::vector<std::size_t> starts;
  const std::size_t extent = devmesh::detail::block_starts([&] { return "devmesh: mpi: " + std::string(what); },
                                                           static_cast<std::size_t>(h.size()), counts, at, starts);
  c.resize(counts.size());
  displs.resize(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) c[i] = int_count(what, counts[i]), displs[i] = int_count(what, starts[i]);
  int_count(what, extent);
  return extent;
}

/// MPI_Alltoallv: send_counts[j] elements to rank j from send + send_at[j], recv_counts[i]
/// from rank i to recv + recv_at[i] (empty displacements: packed in rank order).
template <class T>
void all_to_allv(const comm_handle& h, const T* send, std::span<const std::size_t> send_counts,
                 std::span<const std::size_t> send_at, T* recv, std::span<const std::size_t> recv_counts,
                 std::span<const std::size_t> recv_at, const watched_call* watch = nullptr) {
  const MPI_Comm comm = h.use("all_to_allv");
  std::vector<int> sc, sd, rc, rd;
  const std::size_t ns = counts_at(h, "all_to_allv", send_counts, send_at, sc, sd);
  const std::size_t nr = counts_at(h, "all_to_allv", recv_counts, recv_at, rc, rd);
  struct buffers {  // what MPI reads until the call completes (kept if the watchdog fires)
    devmesh::detail::owned<T[]> copy;
    std::vector<int> sc, sd, rc, rd;
  } b{copy_if_overlapping(send, ns, recv, nr), std::move(sc), std::move(sd), std::move(rc), std::move(rd)};
  const T* from = b.copy ? b.copy.get() : send;
  issue(h, "MPI_Alltoallv", "MPI_Ialltoallv", watch, [&] {
    return MPI_Alltoallv(from, b.sc.data(), b.sd.data(), datatype<T>(), recv, b.rc.data(), b.rd.data(), datatype<T>(), comm);
  }, [&](MPI_Request* r) {
    return MPI_Ialltoallv(from, b.sc.data(), b.sd.data(), datatype<T>(), recv, b.rc.data(), b.rd.data(), datatype<T>(),
                          comm, r);
  }, b);
}

/// MPI_Reduce_scatter: the reduction of every rank's send (the blocks of all ranks, packed in
/// rank order, recv_counts[i] elements for rank i); rank() receives its block. op::avg on
/// floating types sums, then divides; integer averages are refused (mesh_error).
template <class T>
void reduce_scatterv(const comm_handle& h, const T* send, T* recv, std::span<const std::size_t> recv_counts, op o,
                     const watched_call* watch = nullptr) {
  const MPI_Comm comm = h.use("reduce_scatterv");
  if constexpr (is_integer<T>)
    if (o == op::avg)
      throw mesh_error("devmesh: mpi: reduce_scatterv: op::avg on an integer type (use all_reduce, which rounds "
                       "as documented in average.hpp)");
  std::vector<int> rc, rd;
  const std::size_t ns = counts_at(h, "reduce_scatterv", recv_counts, {}, rc, rd);
  const std::size_t mine = recv_counts[static_cast<std::size_t>(h.rank())];
  struct buffers {  // what MPI reads until the call completes (kept if the watchdog fires)
    devmesh::detail::owned<T[]> copy;
    std::vector<int> rc;
  } b{copy_if_overlapping(send, ns, recv, mine), std::move(rc)};
  const T* from = b.copy ? b.copy.get() : send;
  issue(h, "MPI_Reduce_scatter", "MPI_Ireduce_scatter", watch,
        [&] { return MPI_Reduce_scatter(from, recv, b.rc.data(), datatype<T>(), mpi_op<T>(o), comm); },
        [&](MPI_Request* r) { return MPI_Ireduce_scatter(from, recv, b.rc.data(), datatype<T>(), mpi_op<T>(o), comm, r); },
        b);
  if (o == op::avg) divide(recv, mine, h.size());
}

}  // namespace devmesh::mpi::detail
