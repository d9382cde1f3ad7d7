// devmesh/mpi/split.hpp: new MPI communicators from an existing one, by color and key
// (MPI_Comm_split) or by groups every rank already knows (MPI_Comm_create_group). Each new
// communicator is owned, returns errors, and gets its comm_options. Compiled once
// (mpi/impl/split.ipp).
#pragma once
#include <span>

#include "native.hpp"

#include "../core/config.hpp"
#include "handle.hpp"
#include "options.hpp"

namespace devmesh::mpi::detail {

/// The communicator MPI just made (MPI_COMM_NULL: none, an invalid handle), owned, with
/// opts applied.
DEVMESH_DECL comm_handle adopt_new(MPI_Comm made, const comm_options& opts);

/// MPI_Comm_split of h, collective over h; color == no_color gives an invalid handle.
DEVMESH_DECL comm_handle split(const comm_handle& h, int color, int key, const comm_options& opts);

/// MPI_Comm_create_group of the ranks of h in `ranks` (in the new communicator's order),
/// collective over those ranks only; empty: no group, an invalid handle, and no call. Each
/// call on h gets the next tag (MPI_TAG_UB is at least 32767), so that calls never mix.
DEVMESH_DECL comm_handle split_group(const comm_handle& h, std::span<const int> ranks, const comm_options& opts);

}  // namespace devmesh::mpi::detail

#if DEVMESH_INLINE_DEFINITIONS
#include "impl/split.ipp"
#endif
