// devmesh/devmesh.hpp: the one header a user includes.
#pragma once
#include "core/config.hpp"
// The core: names, the layout and its algebra, meshes (constexpr, host and device).
#include "core/diagnostics.hpp"
#include "core/fixed_string.hpp"
#include "core/names.hpp"
#include "core/dim.hpp"
#include "core/layout.hpp"
#include "core/algebra.hpp"
#include "core/group.hpp"
#include "core/mesh_checks.hpp"
#include "core/basic_mesh.hpp"
#include "core/mesh.hpp"
#include "core/group_list.hpp"
#include "core/parse.hpp"
#include "core/print.hpp"

// Backends: pulled in when their CMake target (devmesh::mpi, devmesh::nccl) is linked, or
// when the user defines the macro.
#if defined(DEVMESH_WITH_MPI)
#include "mpi.hpp"
#endif
#if defined(DEVMESH_WITH_NCCL)
#include "nccl.hpp"
#endif
#if defined(DEVMESH_WITH_MPI) || defined(DEVMESH_WITH_NCCL)
#include "runtime/backend.hpp"  // the runtime's interface; <devmesh/backend.hpp> alone for backend-generic code
#include "runtime/device_mesh.hpp"
#endif
