// devmesh/nccl/split.hpp: ncclCommSplit, bounded, with every rank learning every rank's
// outcome over the host channel, so that a failure anywhere throws the same error on every
// rank instead of leaving some waiting. Compiled once (nccl/impl/split.ipp).
#pragma once
#include "../core/config.hpp"
#include "handle.hpp"
#include "options.hpp"

namespace devmesh::nccl::detail {

/// ncclCommSplit of h, collective over h: color >= 0 or dm::no_color (NCCL_SPLIT_NOCOLOR:
/// an invalid handle); key orders the ranks of the new communicator. On failure or timeout
/// anywhere, the new communicator and h are aborted and comm_error is thrown (on every rank
/// when a host channel lets the ranks agree). The new one's host channel is h's, split alike.
DEVMESH_DECL comm_handle split(const comm_handle& h, int color, int key, const options& o);

}  // namespace devmesh::nccl::detail

#if DEVMESH_HEADER_ONLY
#include "impl/split.ipp"
#endif
