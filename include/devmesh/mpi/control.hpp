// devmesh/mpi/control.hpp: devmesh's control plane on MPI: the steps devmesh takes on its own
// behalf (consistency checks, agreements, a mesh's private duplicate), each a non-blocking
// MPI call polled until a deadline (runtime/deadline.hpp) instead of a call that can hang.
// Compiled once (mpi/impl/control.ipp, which also holds the machinery the backend's calls
// share: watched and bounded calls, and what a call that timed out leaves to MPI).
#pragma once
#include <cstddef>
#include <cstdint>

#include "native.hpp"

#include "../core/config.hpp"
#include "../runtime/deadline.hpp"
#include "../runtime/text_ref.hpp"
#include "handle.hpp"

namespace devmesh::mpi::detail {

/// n bytes from every rank of h, in rank order, into out (MPI_Iallgather, bounded).
DEVMESH_DECL void all_gather_bytes(const comm_handle& h, const void* in, void* out, std::size_t n,
                                   const deadline& d);

/// Element-wise maximum of n words over every rank of h, in place (MPI_Iallreduce, bounded).
DEVMESH_DECL void all_reduce_max(const comm_handle& h, std::uint64_t* words, std::size_t n, const deadline& d);

/// MPI_Comm_idup of h, bounded, running `meanwhile()` once while it is in flight: local work
/// hidden behind the communication. The copy owns its MPI_Comm and returns errors. An
/// exception from meanwhile is rethrown once the idup is done (the request is never left
/// behind), after the copy is adopted, so that it is freed.
DEVMESH_DECL comm_handle duplicate(const comm_handle& h, const deadline& d,
                                   devmesh::detail::call_ref<void> meanwhile);

}  // namespace devmesh::mpi::detail

#if DEVMESH_INLINE_DEFINITIONS
#include "impl/control.ipp"
#endif
