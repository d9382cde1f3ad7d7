// devmesh/nccl/wait.hpp: bounded waiting on non-blocking NCCL communicators.
//
// A non-blocking communicator answers ncclInProgress until init, split, finalize or an
// enqueue is done. devmesh polls ncclCommGetAsyncError with a growing sleep (1 ms to
// 20 ms) until every communicator of the operation settles or the deadline passes: the
// caller then aborts them and throws, instead of hanging.
#pragma once
#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <thread>

#include <nccl.h>

namespace devmesh::nccl::detail {

struct wait_result {
  ncclResult_t result = ncclSuccess;  ///< first non-success result, or ncclInProgress on timeout
  ncclComm_t comm = nullptr;          ///< the communicator that reported it
  bool timed_out = false;
};

/// Polls the non-null communicators in `comms` until none is in progress, or `timeout`.
template <class Range>
wait_result wait_all(const Range& comms, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto nap = std::chrono::microseconds(1000);
  for (;;) {
    bool busy = false;
    for (ncclComm_t c : comms) {
      if (!c) continue;
      ncclResult_t state = ncclSuccess;
      ncclResult_t r = ncclCommGetAsyncError(c, &state);
      if (r != ncclSuccess) return {r, c, false};
      if (state == ncclInProgress)
        busy = true;
      else if (state != ncclSuccess)
        return {state, c, false};
    }
    if (!busy) return {};
    if (std::chrono::steady_clock::now() >= deadline) return {ncclInProgress, nullptr, true};
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(20000));
  }
}

inline wait_result wait_all(std::initializer_list<ncclComm_t> comms, std::chrono::milliseconds timeout) {
  return wait_all<std::initializer_list<ncclComm_t>>(comms, timeout);
}

}  // namespace devmesh::nccl::detail
