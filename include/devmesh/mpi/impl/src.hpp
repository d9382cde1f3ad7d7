// devmesh/mpi/impl/src.hpp: the MPI backend's compiled part: its own calls, and the runtime's
// backend-generic code instantiated for dm::mpi::communicator (docs/design.md, "Compiled
// once"). Included by exactly one translation unit, compiled with
// DEVMESH_SEPARATE_COMPILATION and DEVMESH_WITH_MPI: the CMake target devmesh::mpi builds it,
// and <devmesh/src.hpp> includes it for builds without CMake.
#pragma once
#if !defined(DEVMESH_SEPARATE_COMPILATION)
#error "devmesh/mpi/impl/src.hpp is compiled with DEVMESH_SEPARATE_COMPILATION (docs/quickstart.md)"
#endif
#include "../../mpi.hpp"
// The backend's own calls.
#include "average.ipp"
#include "collectives.ipp"
#include "collectives_v.ipp"
#include "control.ipp"
#include "datatype.ipp"
#include "environment.ipp"
#include "error.ipp"
#include "finalize_watch.ipp"
#include "handle.ipp"
#include "node.ipp"
#include "options.ipp"
#include "split.ipp"
// The runtime's backend-generic code, for this backend.
#include "../../runtime/impl/mesh_runtime.hpp"
DEVMESH_INSTANTIATE_RUNTIME(devmesh::mpi::communicator);
// redistribute's executor, for this backend.
#include "../../redistribute/impl/executor.hpp"
DEVMESH_INSTANTIATE_REDISTRIBUTE(devmesh::mpi::communicator);
