// devmesh/mpi/impl/collectives_v.ipp: collectives_v.hpp's definitions (compiled once, or
// inline in header-only mode: core/config.hpp).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../../runtime/block_starts.hpp"
#include "average.ipp"
#include "collectives.ipp"
#include "../collectives_v.hpp"
#include "control.ipp"
#include "datatype.ipp"
#include "../error.hpp"

namespace devmesh::mpi::detail {

/// MPI's int counts and displacements from per-rank element counts and displacements (empty
/// displacements: packed in rank order; runtime/block_starts.hpp); throws mesh_error when the
/// sizes do not match h, comm_error when a count, a displacement or the extent does not fit an
/// int. Returns the extent of the buffer the blocks span.
DEVMESH_DECL std::size_t counts_at(const comm_handle& h, const char* what, std::span<const std::size_t> counts,
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

DEVMESH_DECL void all_to_allv(const comm_handle& h, const void* send, std::span<const std::size_t> send_counts,
                              std::span<const std::size_t> send_at, void* recv,
                              std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_at,
                              element_type t, const watched_call* watch) {
  const MPI_Comm comm = h.use("all_to_allv");
  const MPI_Datatype type = datatype_of(t);
  std::vector<int> sc, sd, rc, rd;
  const std::size_t ns = counts_at(h, "all_to_allv", send_counts, send_at, sc, sd);
  const std::size_t nr = counts_at(h, "all_to_allv", recv_counts, recv_at, rc, rd);
  struct buffers {  // what MPI reads until the call completes (kept if the watchdog fires)
    std::unique_ptr<unsigned char[]> copy;
    std::vector<int> sc, sd, rc, rd;
    staged stage;
  } b{copy_if_overlapping(send, ns, recv, nr, t), std::move(sc), std::move(sd), std::move(rc), std::move(rd), {}};
  const void* from = b.copy ? b.copy.get() : send;
  void* to = recv;
  b.stage = staged(watch, from, ns * t.size, to, nr * t.size, false);
  issue(h, "MPI_Alltoallv", "MPI_Ialltoallv", watch, [&] {
    return MPI_Alltoallv(from, b.sc.data(), b.sd.data(), type, to, b.rc.data(), b.rd.data(), type, comm);
  }, [&](MPI_Request* r) {
    return MPI_Ialltoallv(from, b.sc.data(), b.sd.data(), type, to, b.rc.data(), b.rd.data(), type, comm, r);
  }, b);
  b.stage.finish();
}

DEVMESH_DECL void reduce_scatterv(const comm_handle& h, const void* send, void* recv,
                                  std::span<const std::size_t> recv_counts, element_type t, op o,
                                  const watched_call* watch) {
  const MPI_Comm comm = h.use("reduce_scatterv");
  if (t.is_integer() && o == op::avg)
    throw mesh_error("devmesh: mpi: reduce_scatterv: op::avg on an integer type (use all_reduce, which rounds "
                     "as documented in average.hpp)");
  const MPI_Datatype type = datatype_of(t);
  const MPI_Op mop = op_of(t, o);
  std::vector<int> rc, rd;
  const std::size_t ns = counts_at(h, "reduce_scatterv", recv_counts, {}, rc, rd);
  const std::size_t mine = recv_counts[static_cast<std::size_t>(h.rank())];
  struct buffers {  // what MPI reads until the call completes (kept if the watchdog fires)
    std::unique_ptr<unsigned char[]> copy;
    std::vector<int> rc;
    staged stage;
  } b{copy_if_overlapping(send, ns, recv, mine, t), std::move(rc), {}};
  const void* from = b.copy ? b.copy.get() : send;
  void* to = recv;
  b.stage = staged(watch, from, ns * t.size, to, mine * t.size, false);
  issue(h, "MPI_Reduce_scatter", "MPI_Ireduce_scatter", watch,
        [&] { return MPI_Reduce_scatter(from, to, b.rc.data(), type, mop, comm); },
        [&](MPI_Request* r) { return MPI_Ireduce_scatter(from, to, b.rc.data(), type, mop, comm, r); }, b);
  b.stage.finish();
  if (o == op::avg) divide(recv, mine, t, h.size());
}

}  // namespace devmesh::mpi::detail
