// devmesh/mpi/handle.hpp: one MPI_Comm with RAII, and the checks every call starts with.
//
// The state of a dm::mpi::communicator: the MPI_Comm, whether it is freed here, its rank and
// size (read once), and why it became unusable. The communicator's rooms (control.hpp,
// split.hpp, collectives.hpp) take it and begin with use(), which returns the MPI_Comm.
// Compiled once (mpi/impl/handle.ipp).
#pragma once
#include <string>
#include <utility>

#include "native.hpp"

#include "../core/config.hpp"

namespace devmesh::mpi::detail {

/// An MPI_Comm, owned (MPI_Comm_free at destruction, skipped once MPI is finalized) or
/// borrowed (never freed). Move-only; a moved-from handle is invalid.
class comm_handle {
 public:
  comm_handle() = default;
  /// Takes ownership of c (unless it is MPI_COMM_WORLD or MPI_COMM_SELF) and sets
  /// MPI_ERRORS_RETURN on it.
  DEVMESH_DECL static comm_handle adopt(MPI_Comm c);
  /// Uses c without owning it.
  DEVMESH_DECL static comm_handle borrow(MPI_Comm c);

  comm_handle(comm_handle&& o) noexcept { *this = std::move(o); }
  DEVMESH_DECL comm_handle& operator=(comm_handle&& o) noexcept;
  ~comm_handle() { reset(); }

  bool valid() const noexcept { return comm_ != MPI_COMM_NULL; }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  MPI_Comm native() const noexcept { return comm_; }
  bool owns() const noexcept { return owned_; }

  /// Every call starts here and gets the MPI_Comm: an MPI call after MPI_Finalize (or before
  /// MPI_Init) would make MPI abort the job; a communicator whose control step timed out has
  /// a pending operation that would match the next call. Both throw instead. The common case
  /// costs two tests and one relaxed atomic load (impl/finalize_watch.ipp).
  DEVMESH_DECL MPI_Comm use(const char* what) const;

  /// From now on every call throws comm_error saying `why` (the first reason stays). The
  /// MPI_Comm is still freed at destruction.
  DEVMESH_DECL void mark_unusable(std::string why) const;
  /// MPI has no abort of one communicator's pending work short of MPI_Abort, which kills
  /// the job; devmesh's MPI calls are blocking, so nothing is pending: marks it unusable.
  DEVMESH_DECL void abort() noexcept;
  /// The number of split_group calls made on this communicator so far, then one more.
  unsigned next_group_tag() const noexcept { return group_tag_++; }

 private:
  DEVMESH_DECL comm_handle(MPI_Comm c, bool owned);
  DEVMESH_DECL void reset() noexcept;
  [[noreturn]] DEVMESH_DECL static void invalid_error(const char* what);
  [[noreturn]] DEVMESH_DECL void broken_error(const char* what) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owned_ = false;
  int rank_ = -1;
  int size_ = 0;
  mutable std::string broken_;      // why the communicator is unusable ("" when it is fine)
  mutable unsigned group_tag_ = 0;  // split_group calls made on it: the next one's tag
};

}  // namespace devmesh::mpi::detail

#if DEVMESH_INLINE_DEFINITIONS
#include "impl/handle.ipp"
#endif
