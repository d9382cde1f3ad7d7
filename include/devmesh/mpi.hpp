// devmesh/mpi.hpp: the MPI backend (OpenMPI, MPICH): dm::mpi::environment, dm::mpi::world(),
// dm::mpi::communicator (models devmesh::communicator over host memory).
// Include it directly, or include devmesh.hpp and link devmesh::mpi (which defines
// DEVMESH_WITH_MPI).
#pragma once
#include "mpi/native.hpp"
#include "mpi/communicator.hpp"
#include "mpi/datatype.hpp"
#include "mpi/environment.hpp"
#include "mpi/error.hpp"
#include "mpi/node.hpp"  // node_of_ranks: device_mesh's node-discovery hook (topology options)
// Including this header alone is enough for device meshes over MPI (no -D needed).
#include "runtime/init.hpp"
#include "runtime/from_comms.hpp"
