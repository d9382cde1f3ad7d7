// devmesh/devmesh.hpp: the one header a user includes.
#pragma once
// devmesh is C++20: say so before the first C++20 construct fails somewhere inside.
#if !defined(__cplusplus) || (__cplusplus < 202002L && !(defined(_MSVC_LANG) && _MSVC_LANG >= 202002L))
#error "devmesh needs C++20: compile with -std=c++20 (g++, clang++; nvcc: -std=c++20 --expt-relaxed-constexpr)"
#endif
#if defined(__CUDACC__) && !defined(__CUDACC_RELAXED_CONSTEXPR__)
#error "devmesh under nvcc needs --expt-relaxed-constexpr (device code calls std::array's constexpr members)"
#endif
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
#include "core/queries.hpp"
#include "core/parse.hpp"
#include "core/print.hpp"
#include "core/shared_dims.hpp"

// Backends: pulled in when their CMake target (devmesh::mpi, devmesh::nccl) is linked, or
// when the user defines the macro.
#if defined(DEVMESH_WITH_MPI)
#include "mpi.hpp"
#endif
#if defined(DEVMESH_WITH_NCCL)
#include "nccl.hpp"
#endif
#if defined(DEVMESH_WITH_MPI) || defined(DEVMESH_WITH_NCCL)
#include "runtime/backend.hpp"  // the runtime's interface; <devmesh/runtime/backend.hpp> alone for backend-generic code
#include "runtime/init.hpp"
#include "runtime/from_comms.hpp"
#include "runtime/report.hpp"
#endif
