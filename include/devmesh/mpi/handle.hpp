// devmesh/mpi/handle.hpp: one MPI_Comm with RAII, and the checks every call starts with.
//
// The state of a dm::mpi::communicator: the MPI_Comm, whether it is freed here, its rank and
// size (read once), and why it became unusable. The communicator's rooms (control.hpp,
// split.hpp, collectives.hpp) take it and begin with use(), which returns the MPI_Comm.
#pragma once
#include <string>
#include <utility>

#include "native.hpp"

#include "../core/diagnostics.hpp"
#include "error.hpp"
#include "finalize_watch.hpp"

namespace devmesh::mpi::detail {

/// An MPI_Comm, owned (MPI_Comm_free at destruction, skipped once MPI is finalized) or
/// borrowed (never freed). Move-only; a moved-from handle is invalid.
class comm_handle {
 public:
  comm_handle() = default;
  /// Takes ownership of c (unless it is MPI_COMM_WORLD or MPI_COMM_SELF) and sets
  /// MPI_ERRORS_RETURN on it.
  static comm_handle adopt(MPI_Comm c) {
    if (c != MPI_COMM_NULL) check(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    return comm_handle(c, c != MPI_COMM_WORLD && c != MPI_COMM_SELF);
  }
  static comm_handle borrow(MPI_Comm c) { return comm_handle(c, false); }

  comm_handle(comm_handle&& o) noexcept { *this = std::move(o); }
  comm_handle& operator=(comm_handle&& o) noexcept {
    if (this != &o) {
      reset();
      comm_ = std::exchange(o.comm_, MPI_COMM_NULL);
      owned_ = std::exchange(o.owned_, false);
      rank_ = std::exchange(o.rank_, -1);
      size_ = std::exchange(o.size_, 0);
      broken_ = std::exchange(o.broken_, std::string());
      group_tag_ = std::exchange(o.group_tag_, 0u);
    }
    return *this;
  }
  ~comm_handle() { reset(); }

  bool valid() const noexcept { return comm_ != MPI_COMM_NULL; }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  MPI_Comm native() const noexcept { return comm_; }
  bool owns() const noexcept { return owned_; }

  /// Every call starts here and gets the MPI_Comm: an MPI call after MPI_Finalize (or before
  /// MPI_Init) would make MPI abort the job; a communicator whose control step timed out has
  /// a pending operation that would match the next call. Both throw instead. The common case
  /// costs two tests and one relaxed atomic load (finalize_watch.hpp).
  MPI_Comm use(const char* what) const {
    if (comm_ == MPI_COMM_NULL) [[unlikely]]
      invalid_error(what);
    if (!mpi_live()) [[unlikely]]
      require_mpi_usable(what);
    if (!broken_.empty()) [[unlikely]]
      broken_error(what);
    return comm_;
  }

  /// From now on every call throws comm_error saying `why` (the first reason stays). The
  /// MPI_Comm is still freed at destruction.
  void mark_unusable(std::string why) const {
    if (broken_.empty()) broken_ = std::move(why);
  }
  /// MPI has no abort of one communicator's pending work short of MPI_Abort, which kills
  /// the job; devmesh's MPI calls are blocking, so nothing is pending: marks it unusable.
  void abort() noexcept {
    try {
      mark_unusable("it was aborted (abort())");
    } catch (...) {  // no memory for the text: the communicator stays usable, as before
    }
  }
  /// The number of split_group calls made on this communicator so far, then one more.
  unsigned next_group_tag() const noexcept { return group_tag_++; }

 private:
  comm_handle(MPI_Comm c, bool owned) : comm_(c), owned_(owned) {
    if (c == MPI_COMM_NULL) return;
    watch_finalize();  // a communicator exists: from now on, calls check one flag
    if (!mpi_live()) [[unlikely]]
      require_mpi_usable("communicator");  // MPI_Comm_rank would abort the job
    check(MPI_Comm_rank(c, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(c, &size_), "MPI_Comm_size");
  }

  void reset() noexcept {
    if (owned_ && comm_ != MPI_COMM_NULL && !mpi_finalized()) MPI_Comm_free(&comm_);
    comm_ = MPI_COMM_NULL;
    owned_ = false;
    rank_ = -1;
    size_ = 0;
  }

  [[noreturn, gnu::cold, gnu::noinline]] static void invalid_error(const char* what) {
    throw comm_error("devmesh: mpi: " + std::string(what) + " on an invalid communicator (MPI_COMM_NULL)");
  }
  [[noreturn, gnu::cold, gnu::noinline]] void broken_error(const char* what) const {
    throw comm_error("devmesh: mpi: " + std::string(what) + " on a communicator that is unusable: " + broken_);
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owned_ = false;
  int rank_ = -1;
  int size_ = 0;
  mutable std::string broken_;      // why the communicator is unusable ("" when it is fine)
  mutable unsigned group_tag_ = 0;  // split_group calls made on it: the next one's tag
};

}  // namespace devmesh::mpi::detail
