// devmesh/nccl/wait.hpp: bounded waiting on non-blocking NCCL communicators.
//
// A non-blocking communicator answers ncclInProgress until init, split, finalize or an
// enqueue is done. devmesh polls ncclCommGetAsyncError (deadline.hpp's policy) until
// every communicator of the operation settles or the deadline passes: the caller then
// aborts them and throws, instead of hanging.
#pragma once
#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <thread>

#include <nccl.h>

#include "../runtime/deadline.hpp"

namespace devmesh::nccl::detail {

struct wait_result {
  ncclResult_t result = ncclSuccess;  ///< first non-success result, or ncclInProgress on timeout
  ncclComm_t comm = nullptr;          ///< the communicator that reported it
  bool timed_out = false;
};

/// Polls the non-null communicators in `comms` until none is in progress, or `timeout`,
/// with devmesh's one polling policy (deadline.hpp: 2 ms of continuous polling, then naps
/// of 50 to 500 us), so a call that settles in microseconds is not charged a sleep.
template <class Range>
wait_result wait_all(const Range& comms, std::chrono::milliseconds timeout) {
  wait_result out{};
  const bool settled = devmesh::detail::poll_until(deadline::after(timeout), [&] {
    bool busy = false;
    for (ncclComm_t c : comms) {
      if (!c) continue;
      ncclResult_t state = ncclSuccess;
      ncclResult_t r = ncclCommGetAsyncError(c, &state);
      if (r != ncclSuccess || (state != ncclSuccess && state != ncclInProgress)) {
        out = {r != ncclSuccess ? r : state, c, false};
        return true;
      }
      busy = busy || state == ncclInProgress;
    }
    return !busy;
  });
  if (!settled) return {ncclInProgress, nullptr, true};
  return out;
}

inline wait_result wait_all(std::initializer_list<ncclComm_t> comms, std::chrono::milliseconds timeout) {
  return wait_all<std::initializer_list<ncclComm_t>>(comms, timeout);
}

}  // namespace devmesh::nccl::detail
