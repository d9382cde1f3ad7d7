// devmesh/nccl/control.hpp: devmesh's control plane on NCCL: the host-memory steps devmesh
// takes on its own behalf (consistency checks, agreements, a mesh's private duplicate). Over
// the host channel when the communicator has one (the MPI world it was bootstrapped from:
// bounded, no device memory), else through a temporary device buffer on the default stream.
// Compiled once (nccl/impl/control.ipp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "../core/config.hpp"
#include "../runtime/deadline.hpp"
#include "handle.hpp"

namespace devmesh::nccl::detail {

/// n bytes from every rank, gathered in rank order into `out` (host memory): over the host
/// channel (bounded by d), else an ncclAllGather.
DEVMESH_DECL void all_gather_bytes(const comm_handle& h, const void* in, void* out, std::size_t n, const deadline& d);

/// Element-wise maximum of n words over every rank, in place: over the host channel
/// (bounded by d), else an ncclAllReduce (bounded by the options' timeout while enqueueing).
DEVMESH_DECL void all_reduce_max(const comm_handle& h, std::uint64_t* words, std::size_t n, const deadline& d);

/// The watchdog's roll call over h's host channel (host_channel.hpp): why it cannot be held
/// ("" when it can), a note to rank `to`, the next note received.
DEVMESH_DECL std::string notes_unavailable(const comm_handle& h);
DEVMESH_DECL bool post_note(const comm_handle& h, int to, const std::uint64_t (&words)[2]) noexcept;
DEVMESH_DECL bool take_note(const comm_handle& h, int& from, std::uint64_t (&words)[2]) noexcept;

/// A borrowed alias of h's ncclComm_t (a new NCCL communicator would cost GPU memory) with a
/// private copy of the host channel (bounded by d), so that each mesh's control steps are
/// its own. Without a host channel the alias shares h's NCCL traffic.
DEVMESH_DECL comm_handle duplicate(const comm_handle& h, const deadline& d);

}  // namespace devmesh::nccl::detail

#if DEVMESH_HEADER_ONLY
#include "impl/control.ipp"
#endif
