// devmesh/nccl/handle.hpp: one ncclComm_t with RAII, and the check every call starts with.
//
// Ownership: a communicator made by world(), split() or adopt() owns its ncclComm_t and ends
// it with ncclCommFinalize then ncclCommDestroy; after a failure (abort(), a timeout, an async
// error) it has been ncclCommAbort'ed and nothing is freed twice. borrow() wraps a handle
// someone else ends. The state lives on the heap, so a moved-from communicator is simply
// empty (valid() == false) and pending group work (enqueue.hpp) keeps a stable address.
// Compiled once (nccl/impl/handle.ipp).
#pragma once
#include <memory>
#include <string>

#include <nccl.h>

#include "../core/config.hpp"
#include "host_channel.hpp"
#include "options.hpp"

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
  DEVMESH_DECL std::string label() const;

  /// ncclCommAbort if owned; the state is invalid afterwards, and says it was aborted (and
  /// `reason`, when given: the text of every later call's comm_error).
  DEVMESH_DECL void abort(const char* reason = nullptr) noexcept;

  /// Finalize (flushes this rank's work), then destroy; abort when finalize fails or does
  /// not settle within the timeout.
  DEVMESH_DECL void end() noexcept;

  /// comm_error unless r (a root, dest or source named `what`) is a rank of this communicator.
  DEVMESH_DECL void check_rank(const char* call, const char* what, int r) const;
};

/// Owns a comm_state: ended at destruction and before a move assignment takes another.
class comm_handle {
 public:
  comm_handle() = default;
  /// Wraps comm (owned: ended at destruction) and reads its rank and size; on failure
  /// comm is aborted (if owned) and comm_error is thrown.
  DEVMESH_DECL comm_handle(ncclComm_t comm, options opts, bool owned, std::shared_ptr<const host_channel> channel);
  comm_handle(comm_handle&&) noexcept = default;
  DEVMESH_DECL comm_handle& operator=(comm_handle&& o) noexcept;
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
  [[noreturn, gnu::cold]] DEVMESH_DECL void invalid_error(const char* call) const;

  std::unique_ptr<comm_state> st_;
};

}  // namespace devmesh::nccl::detail

#if DEVMESH_HEADER_ONLY
#include "impl/handle.ipp"
#endif
