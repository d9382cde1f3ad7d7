// devmesh/mpi/environment.hpp: MPI_Init_thread / MPI_Finalize as RAII, and world().
#pragma once
#include <string>

#include "native.hpp"

#include "../core/diagnostics.hpp"
#include "communicator.hpp"
#include "error.hpp"
#include "finalize_watch.hpp"

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
  ~environment() {
    if (initialized_here_ && !detail::mpi_finalized()) MPI_Finalize();
  }

  /// The thread support level MPI provided (MPI_THREAD_SINGLE ... MPI_THREAD_MULTIPLE).
  int thread_level() const noexcept { return provided_; }
  /// False when MPI was initialized by someone else before this environment.
  bool initialized_here() const noexcept { return initialized_here_; }

 private:
  void init(int* argc, char*** argv, int required) {
    if (detail::mpi_finalized())  // any other MPI call now would abort the job
      throw comm_error(
          "devmesh: mpi::environment: MPI was already finalized; MPI cannot be initialized twice in one process");
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) {
      MPI_Query_thread(&provided_);
    } else {
      const int rc = MPI_Init_thread(argc, argv, required, &provided_);
      if (rc != MPI_SUCCESS)
        throw error("devmesh: mpi: MPI_Init_thread failed (MPI error code " + std::to_string(rc) + ")", rc);
      initialized_here_ = true;
    }
    detail::check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler(MPI_COMM_WORLD)");
    detail::check(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler(MPI_COMM_SELF)");
  }

  bool initialized_here_ = false;
  int provided_ = 0;
};

/// MPI_COMM_WORLD, borrowed (never freed). Throws comm_error if MPI is not initialized.
inline communicator world() {
  if (const char* why = detail::mpi_unusable()) throw comm_error(std::string("devmesh: mpi::world(): ") + why);
  return communicator::borrow(MPI_COMM_WORLD);
}

}  // namespace devmesh::mpi
