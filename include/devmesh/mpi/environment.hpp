// devmesh/mpi/environment.hpp: MPI_Init_thread / MPI_Finalize as RAII, and world().
#pragma once
#include <string>

#include "native.hpp"

#include "../core/config.hpp"
#include "communicator.hpp"

namespace devmesh::mpi {

/// Initializes MPI (requesting MPI_THREAD_MULTIPLE by default) and finalizes it at scope
/// exit. If MPI is already initialized, it does neither (the owner of MPI finalizes). After
/// MPI_Finalize it throws comm_error: MPI cannot be initialized twice in one process.
/// Sets MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF: MPI errors become
/// devmesh::mpi::error exceptions instead of aborting the job.
class environment {
 public:
  /// MPI_Init_thread(argc, argv, required), unless MPI is already initialized.
  environment(int& argc, char**& argv, int required = MPI_THREAD_MULTIPLE) { init(&argc, &argv, required); }
  /// The same without the command line (MPI_Init_thread(nullptr, nullptr, required)).
  explicit environment(int required = MPI_THREAD_MULTIPLE) { init(nullptr, nullptr, required); }
  environment(const environment&) = delete;
  environment& operator=(const environment&) = delete;
  /// MPI_Finalize, if this object initialized MPI and nobody finalized it yet.
  DEVMESH_DECL ~environment();

  /// The thread support level MPI provided (MPI_THREAD_SINGLE ... MPI_THREAD_MULTIPLE).
  int thread_level() const noexcept { return provided_; }
  /// False when MPI was initialized by someone else before this environment.
  bool initialized_here() const noexcept { return initialized_here_; }

 private:
  DEVMESH_DECL void init(int* argc, char*** argv, int required);

  bool initialized_here_ = false;
  int provided_ = 0;
};

/// MPI_COMM_WORLD, borrowed (never freed). Throws comm_error if MPI is not initialized.
DEVMESH_DECL communicator world();

namespace detail {
/// Why MPI cannot be called now (not initialized, finalized), or nullptr when it can.
DEVMESH_DECL const char* mpi_unusable() noexcept;
}  // namespace detail

}  // namespace devmesh::mpi

#if DEVMESH_INLINE_DEFINITIONS
#include "impl/environment.ipp"
#endif
