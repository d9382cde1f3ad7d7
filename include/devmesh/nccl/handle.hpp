// devmesh/nccl/handle.hpp: one ncclComm_t with RAII, and the check every call starts with.
//
// Ownership: a communicator made by world(), split() or adopt() owns its ncclComm_t and ends
// it with ncclCommFinalize then ncclCommDestroy; after a failure (abort(), a timeout, an async
// error) it has been ncclCommAbort'ed and nothing is freed twice. borrow() wraps a handle
// someone else ends. The state lives on the heap, so a moved-from communicator is simply
// empty (valid() == false) and pending group work (enqueue.hpp) keeps a stable address.
#pragma once
#include <memory>
#include <string>
#include <utility>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "../core/diagnostics.hpp"
#include "error.hpp"
#include "host_channel.hpp"
#include "options.hpp"
#include "wait.hpp"

namespace devmesh::nccl::detail {

/// A communicator's state: the ncclComm_t, its rank and size (read once), its options,
/// ownership, and the host channel of its control steps (nullptr: none).
struct comm_state {
  ncclComm_t comm = nullptr;
  int rank = -1;
  int size = 0;
  options opts;
  bool owned = true;
  bool aborted = false;
  std::string why;  // why it was aborted, for every later call's message ("" : abort())
  void* scratch = nullptr;  // one device int for barrier(), allocated on first use
  std::shared_ptr<const host_channel> channel;

  /// "'mesh:dp' (rank 1 of 4)", for messages.
  std::string label() const {
    std::string name = opts.name.empty() ? std::string("nccl communicator") : "'" + opts.name + "'";
    return name + " (rank " + std::to_string(rank) + " of " + std::to_string(size) + ")";
  }

  /// ncclCommAbort if owned; the state is invalid afterwards, and says it was aborted (and
  /// `reason`, when given: the text of every later call's comm_error).
  void abort(const char* reason = nullptr) noexcept {
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

  /// Finalize (flushes this rank's work), then destroy; abort when finalize fails or does
  /// not settle within the timeout.
  void end() noexcept {
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

  /// comm_error unless r (a root, dest or source named `what`) is a rank of this communicator.
  void check_rank(const char* call, const char* what, int r) const {
    if (r < 0 || r >= size)
      throw comm_error(std::string("devmesh: ") + call + " on " + label() + ": " + what + " " + std::to_string(r) +
                       " is not a rank of this communicator");
  }
};

/// Owns a comm_state: ended at destruction and before a move assignment takes another.
class comm_handle {
 public:
  comm_handle() = default;
  /// Wraps comm (owned: ended at destruction) and reads its rank and size; on failure
  /// comm is aborted (if owned) and comm_error is thrown.
  comm_handle(ncclComm_t comm, options opts, bool owned, std::shared_ptr<const host_channel> channel)
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
  comm_handle(comm_handle&&) noexcept = default;
  comm_handle& operator=(comm_handle&& o) noexcept {
    if (this != &o) {
      if (st_) st_->end();
      st_ = std::move(o.st_);
    }
    return *this;
  }
  ~comm_handle() {
    if (st_) st_->end();
  }

  bool valid() const noexcept { return st_ && st_->comm != nullptr; }
  bool aborted() const noexcept { return st_ && st_->aborted; }
  int rank() const noexcept { return st_ ? st_->rank : -1; }
  int size() const noexcept { return st_ ? st_->size : 0; }
  ncclComm_t native() const noexcept { return st_ ? st_->comm : nullptr; }
  const options& opts() const noexcept {
    static const options none{};
    return st_ ? st_->opts : none;
  }
  bool has_host_channel() const noexcept { return st_ && st_->channel; }
  /// The host channel, also after an abort (the watchdog's roll call); nullptr: none.
  const host_channel* channel() const noexcept { return st_ ? st_->channel.get() : nullptr; }
  void abort(const char* reason = nullptr) noexcept {
    if (st_) st_->abort(reason);
  }

  /// Every call starts here and gets the state: one test inline, the message out of line.
  /// (No MPI_Finalized here: NCCL calls do not touch MPI; the host channel's MPI steps
  /// check it themselves.)
  comm_state& use(const char* call) const {
    if (!valid()) [[unlikely]]
      invalid_error(call);
    return *st_;
  }

 private:
  [[noreturn, gnu::cold, gnu::noinline]] void invalid_error(const char* call) const {
    throw comm_error(std::string("devmesh: ") + call + " on an invalid nccl::communicator (" +
                     (!st_ ? std::string("empty: default-constructed, moved-from, or a split with dm::no_color")
                           : "aborted: " + (st_->why.empty() ? std::string("abort() or an earlier failure") : st_->why)) +
                     ")");
  }

  std::unique_ptr<comm_state> st_;
};

}  // namespace devmesh::nccl::detail
