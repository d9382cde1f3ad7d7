// devmesh/mpi/comm_hook.hpp: the type of comm_options::on_create, a copyable callable of
// void(MPI_Comm) or empty: std::function<void(MPI_Comm)>.
#pragma once
#include <functional>

#include "native.hpp"

namespace devmesh::mpi {

/// A copy of a callable of void(MPI_Comm) (a lambda, a function), or empty.
using comm_hook = std::function<void(MPI_Comm)>;

}  // namespace devmesh::mpi
