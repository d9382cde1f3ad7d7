// devmesh/nccl/impl/handle.ipp: handle.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <memory>
#include <string>
#include <utility>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "../../core/diagnostics.hpp"
#include "../error.hpp"
#include "../handle.hpp"
#include "../wait.hpp"

namespace devmesh::nccl::detail {

DEVMESH_DECL std::string comm_state::label() const {
  std::string name = opts.name.empty() ? std::string("nccl communicator") : "'" + opts.name + "'";
  return name + " (rank " + std::to_string(rank) + " of " + std::to_string(size) + ")";
}

DEVMESH_DECL void comm_state::abort(const char* reason) noexcept {
  if (comm && owned) ncclCommAbort(comm);
  if (comm) {
    aborted = true;
    if (reason) try {
        why = reason;
      } catch (...) {
      }
  }
  comm = nullptr;
}

DEVMESH_DECL void comm_state::end() noexcept {
  if (comm && owned) {
    ncclResult_t r = ncclCommFinalize(comm);
    if (may_be_in_progress(r, opts.blocking)) r = wait_all({comm}, opts.timeout).result;
    if (r == ncclSuccess)
      ncclCommDestroy(comm);
    else
      ncclCommAbort(comm);
  }
  comm = nullptr;
  if (scratch) cudaFree(scratch);
  scratch = nullptr;
}

DEVMESH_DECL void comm_state::check_rank(const char* call, const char* what, int r) const {
  if (r < 0 || r >= size)
    throw comm_error(std::string("devmesh: ") + call + " on " + label() + ": " + what + " " + std::to_string(r) +
                     " is not a rank of this communicator");
}

DEVMESH_DECL comm_handle::comm_handle(ncclComm_t comm, options opts, bool owned,
                                      std::shared_ptr<const host_channel> channel)
    : st_(std::make_unique<comm_state>()) {
  st_->comm = comm;
  st_->opts = std::move(opts);
  st_->owned = owned;
  st_->channel = std::move(channel);
  if (!comm) throw comm_error("devmesh: nccl::communicator: null ncclComm_t");
  ncclResult_t r = ncclCommUserRank(comm, &st_->rank);
  if (r == ncclSuccess) r = ncclCommCount(comm, &st_->size);
  if (r != ncclSuccess) {
    std::string what = describe(r, comm);
    st_->abort();
    throw comm_error("devmesh: ncclCommUserRank/ncclCommCount failed: " + what);
  }
}

DEVMESH_DECL comm_handle& comm_handle::operator=(comm_handle&& o) noexcept {
  if (this != &o) {
    if (st_) st_->end();
    st_ = std::move(o.st_);
  }
  return *this;
}

DEVMESH_DECL void comm_handle::invalid_error(const char* call) const {
  throw comm_error(std::string("devmesh: ") + call + " on an invalid nccl::communicator (" +
                   (!st_ ? std::string("empty: default-constructed, moved-from, or a split with dm::no_color")
                         : "aborted: " + (st_->why.empty() ? std::string("abort() or an earlier failure") : st_->why)) +
                   ")");
}

}  // namespace devmesh::nccl::detail
