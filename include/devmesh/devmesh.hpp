// devmesh/devmesh.hpp: the one header a user includes.
#pragma once
#include "config.hpp"
// The core: names, the layout and its algebra, meshes (constexpr, host and device).
#include "diagnostics.hpp"
#include "fixed_string.hpp"
#include "names.hpp"
#include "dim.hpp"
#include "layout.hpp"
#include "algebra.hpp"
#include "group.hpp"
#include "mesh_checks.hpp"
#include "basic_mesh.hpp"
#include "mesh.hpp"
#include "parse.hpp"
#include "print.hpp"

// Backends: pulled in when their CMake target (devmesh::mpi, devmesh::nccl) is linked, or
// when the user defines the macro.
#if defined(DEVMESH_WITH_MPI)
#include "mpi.hpp"
#endif
#if defined(DEVMESH_WITH_NCCL)
#include "nccl.hpp"
#endif
#if defined(DEVMESH_WITH_MPI) || defined(DEVMESH_WITH_NCCL)
#include "backend.hpp"  // the runtime's interface; <devmesh/backend.hpp> alone for backend-generic code
#include "device_mesh.hpp"
#endif
