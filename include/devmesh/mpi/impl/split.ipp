// devmesh/mpi/impl/split.ipp: split.hpp's definitions (compiled once, or inline in header-only
// mode: core/config.hpp).
#pragma once
#include <span>

#include "../../runtime/backend.hpp"
#include "../error.hpp"
#include "../options.hpp"
#include "../split.hpp"

namespace devmesh::mpi::detail {

/// The communicator MPI just made (MPI_COMM_NULL: none, an invalid handle), owned, with
/// opts applied.
DEVMESH_DECL comm_handle adopt_new(MPI_Comm made, const comm_options& opts) {
  comm_handle c = comm_handle::adopt(made);
  if (made != MPI_COMM_NULL) apply(made, opts);
  return c;
}

/// MPI_Comm_split of h, collective over h; color == no_color gives an invalid handle.
DEVMESH_DECL comm_handle split(const comm_handle& h, int color, int key, const comm_options& opts) {
  const MPI_Comm comm = h.use("split");
  MPI_Comm out = MPI_COMM_NULL;
  check(MPI_Comm_split(comm, color == no_color ? MPI_UNDEFINED : color, key, &out), "MPI_Comm_split");
  return adopt_new(out, opts);
}

/// MPI_Comm_create_group of the ranks of h in `ranks` (in the new communicator's order),
/// collective over those ranks only; empty: no group, an invalid handle, and no call. Each
/// call on h gets the next tag (MPI_TAG_UB is at least 32767), so that calls never mix.
DEVMESH_DECL comm_handle split_group(const comm_handle& h, std::span<const int> ranks, const comm_options& opts) {
  const MPI_Comm comm = h.use("split_group");
  if (ranks.empty()) return comm_handle();
  const int n = int_count("split_group", ranks.size());
  const int tag = static_cast<int>(h.next_group_tag() & 0x7fffu);
  MPI_Group all = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
  check(MPI_Comm_group(comm, &all), "MPI_Comm_group");
  int rc = MPI_Group_incl(all, n, ranks.data(), &group);
  MPI_Group_free(&all);
  check(rc, "MPI_Group_incl");
  MPI_Comm out = MPI_COMM_NULL;
  rc = MPI_Comm_create_group(comm, group, tag, &out);
  MPI_Group_free(&group);
  check(rc, "MPI_Comm_create_group");
  return adopt_new(out, opts);
}

}  // namespace devmesh::mpi::detail
