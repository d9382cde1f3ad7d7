// devmesh/devmesh.hpp: the one header a user includes.
#pragma once
#include "config.hpp"
#include "backend.hpp"
#include "diagnostics.hpp"
#include "dim.hpp"
#include "fixed_string.hpp"
#include "group.hpp"
#include "mesh.hpp"
#include "names.hpp"
#include "parse.hpp"
#include "print.hpp"
#include "structure.hpp"

// Backends: pulled in when their CMake target (devmesh::mpi, devmesh::nccl) is linked, or
// when the user defines the macro.
#if defined(DEVMESH_WITH_MPI)
#include "mpi.hpp"
#endif
#if defined(DEVMESH_WITH_NCCL)
#include "nccl.hpp"
#endif
#if defined(DEVMESH_WITH_MPI) || defined(DEVMESH_WITH_NCCL)
#include "device_mesh.hpp"
#endif
