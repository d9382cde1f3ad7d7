// devmesh/mpi.hpp: the MPI backend (OpenMPI, MPICH): dm::mpi::environment, dm::mpi::world(),
// dm::mpi::communicator (models devmesh::communicator over host memory).
// Enabled by linking devmesh::mpi (which defines DEVMESH_WITH_MPI).
#pragma once
#include "mpi/native.hpp"
#include "mpi/communicator.hpp"
#include "mpi/datatype.hpp"
#include "mpi/environment.hpp"
#include "mpi/error.hpp"
