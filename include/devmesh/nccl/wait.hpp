// devmesh/nccl/wait.hpp: bounded waiting on non-blocking NCCL communicators.
//
// A non-blocking communicator answers ncclInProgress until init, split, finalize or an
// enqueue is done. devmesh polls ncclCommGetAsyncError (deadline.hpp's policy) until
// every communicator of the operation settles or the deadline passes: the caller then
// aborts them and throws, instead of hanging. Compiled once (nccl/impl/wait.ipp).
#pragma once
#include <chrono>
#include <initializer_list>
#include <span>
#include <string>

#include <nccl.h>

#include "../core/config.hpp"

namespace devmesh::nccl::detail {

struct wait_result {
  ncclResult_t result = ncclSuccess;  ///< first non-success result, or ncclInProgress on timeout
  ncclComm_t comm = nullptr;          ///< the communicator that reported it
  bool timed_out = false;

  bool failed() const noexcept { return timed_out || result != ncclSuccess; }
  /// What went wrong, for messages ("" when nothing did): "timed out after N ms" (N from
  /// `timeout`, the bound waited for), or the result described with the communicator that
  /// reported it, else `fallback`.
  DEVMESH_DECL std::string what(std::chrono::milliseconds timeout, ncclComm_t fallback = nullptr) const;
};

/// True when a call that creates or ends a communicator may still be running: it answered
/// ncclInProgress, or ncclSuccess on a non-blocking communicator (which still initializes
/// in the background until ncclCommGetAsyncError says it is done).
constexpr bool may_be_in_progress(ncclResult_t r, bool blocking) {
  return r == ncclInProgress || (r == ncclSuccess && !blocking);
}

/// Polls the non-null communicators in `comms` until none is in progress, or `timeout`,
/// with devmesh's one polling policy (deadline.hpp: 2 ms of continuous polling, then naps
/// of 50 to 500 us), so a call that settles in microseconds is not charged a sleep.
DEVMESH_DECL wait_result wait_all(std::span<const ncclComm_t> comms, std::chrono::milliseconds timeout);

/// wait_all over a braced list: `wait_all({comm}, timeout)`.
inline wait_result wait_all(std::initializer_list<ncclComm_t> comms, std::chrono::milliseconds timeout) {
  return wait_all(std::span<const ncclComm_t>(comms.begin(), comms.size()), timeout);
}

}  // namespace devmesh::nccl::detail

#if DEVMESH_HEADER_ONLY
#include "impl/wait.ipp"
#endif
