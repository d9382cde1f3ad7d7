// devmesh/mpi/impl/environment.ipp: environment.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <string>

#include "../environment.hpp"
#include "../error.hpp"
#include "finalize_watch.ipp"

namespace devmesh::mpi {

DEVMESH_DECL environment::~environment() {
  if (initialized_here_ && !detail::mpi_finalized()) MPI_Finalize();
}

DEVMESH_DECL void environment::init(int* argc, char*** argv, int required) {
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

DEVMESH_DECL communicator world() {
  if (const char* why = detail::mpi_unusable()) throw comm_error(std::string("devmesh: mpi::world(): ") + why);
  return communicator::borrow(MPI_COMM_WORLD);
}

}  // namespace devmesh::mpi
