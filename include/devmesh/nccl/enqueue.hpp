// devmesh/nccl/enqueue.hpp: when enqueued NCCL work settles, and NCCL groups.
//
// A call on a non-blocking communicator may answer ncclInProgress. Outside a group devmesh
// waits for it at once (bounded by options::timeout; abort on failure); inside a group the
// communicator settles only after the outermost ncclGroupEnd, so devmesh remembers it and
// group_end() waits for every such communicator together, aborting them all on failure.
// Compiled once (nccl/impl/enqueue.ipp).
#pragma once
#include <vector>

#include <nccl.h>

#include "../core/config.hpp"
#include "../runtime/text_ref.hpp"
#include "handle.hpp"

namespace devmesh::nccl::detail {

/// Per-thread mirror of the NCCL group depth, and the non-blocking communicators whose
/// calls inside the group may still be in progress: group_end() waits for them.
struct group_registry {
  int depth = 0;
  std::vector<comm_state*> pending;
};
/// This thread's group_registry.
DEVMESH_DECL group_registry& groups();

/// Remembers s for the outermost group_end() (once).
DEVMESH_DECL void add_pending(comm_state* s);

/// ncclGroupStart, counted.
DEVMESH_DECL void group_start();

/// The outermost group's communicators settle together, bounded by the longest of their
/// timeouts; on failure every one of them is aborted.
DEVMESH_DECL void settle_group(const std::vector<comm_state*>& pending);

/// ncclGroupEnd; the outermost one waits for the group's non-blocking communicators.
DEVMESH_DECL void group_end();

/// Runs enqueue() (NCCL calls) as one group; if it throws, the group still ends (quietly)
/// and the first error propagates.
DEVMESH_DECL void as_group(devmesh::detail::call_ref<void> enqueue);

/// The result r of an enqueueing call on s: errors throw; inside a group s settles at the
/// outermost group_end() (whatever this call answered); outside one, ncclInProgress is
/// waited for here (bounded; s is aborted on failure or timeout).
DEVMESH_DECL void enqueued(comm_state& s, const char* call, ncclResult_t r);

}  // namespace devmesh::nccl::detail

#if DEVMESH_HEADER_ONLY
#include "impl/enqueue.ipp"
#endif
