// devmesh/src.hpp: devmesh's compiled part for builds without CMake: include it in exactly
// one source file of the program, compiled with the same flags as the others, which all
// define DEVMESH_SEPARATE_COMPILATION (and DEVMESH_WITH_MPI, DEVMESH_WITH_NCCL for the
// backends in use). CMake users link devmesh::mpi or devmesh::nccl instead, which build it.
//
//   // devmesh.cpp
//   #include <devmesh/src.hpp>
//
//   mpicxx -std=c++20 -DDEVMESH_SEPARATE_COMPILATION -DDEVMESH_WITH_MPI -c devmesh.cpp
#pragma once
#if !defined(DEVMESH_SEPARATE_COMPILATION)
#error "devmesh/src.hpp is compiled with DEVMESH_SEPARATE_COMPILATION, as every file that includes devmesh (docs/quickstart.md)"
#endif
#include "runtime/impl/src.hpp"
#if defined(DEVMESH_WITH_MPI)
#include "mpi/impl/src.hpp"
#endif
#if defined(DEVMESH_WITH_NCCL)
#include "nccl/impl/src.hpp"
#endif
