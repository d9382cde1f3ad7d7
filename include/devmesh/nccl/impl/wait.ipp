// devmesh/nccl/impl/wait.ipp: wait.hpp's definitions (compiled once, or inline in header-only
// mode: core/config.hpp).
#pragma once
#include <chrono>
#include <span>
#include <string>

#include <nccl.h>

#include "../../runtime/deadline.hpp"
#include "../error.hpp"
#include "../wait.hpp"

namespace devmesh::nccl::detail {

DEVMESH_DECL std::string wait_result::what(std::chrono::milliseconds timeout, ncclComm_t fallback) const {
  if (timed_out) return "timed out after " + std::to_string(timeout.count()) + " ms";
  return result != ncclSuccess ? describe(result, comm ? comm : fallback) : std::string();
}

DEVMESH_DECL wait_result wait_all(std::span<const ncclComm_t> comms, std::chrono::milliseconds timeout) {
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

}  // namespace devmesh::nccl::detail
