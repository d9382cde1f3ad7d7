// devmesh/nccl/impl/src.hpp: the NCCL backend's compiled part: its own calls, and the
// runtime's backend-generic code instantiated for dm::nccl::communicator (docs/design.md,
// "Compiled once"). Included by exactly one translation unit, compiled with
// DEVMESH_SEPARATE_COMPILATION and DEVMESH_WITH_NCCL: the CMake target devmesh::nccl builds
// it, and <devmesh/src.hpp> includes it for builds without CMake. (nccl/mpi_bootstrap.hpp
// stays header-only: it needs MPI, which this library does not link.)
#pragma once
#if !defined(DEVMESH_SEPARATE_COMPILATION)
#error "devmesh/nccl/impl/src.hpp is compiled with DEVMESH_SEPARATE_COMPILATION (docs/quickstart.md)"
#endif
#include "../../nccl.hpp"
// The backend's own calls.
#include "bootstrap.ipp"
#include "collectives.ipp"
#include "collectives_v.ipp"
#include "control.ipp"
#include "device.ipp"
#include "device_buffer.ipp"
#include "device_memory.ipp"
#include "enqueue.ipp"
#include "error.ipp"
#include "group.ipp"
#include "handle.ipp"
#include "host_channel.ipp"
#include "node.ipp"
#include "options.ipp"
#include "split.ipp"
#include "wait.ipp"
#include "watch.ipp"
// The runtime's backend-generic code, for this backend, and its stream watchdog.
#include "../../runtime/impl/stream_watchdog.hpp"
#include "../../runtime/impl/mesh_runtime.hpp"
DEVMESH_INSTANTIATE_RUNTIME(devmesh::nccl::communicator);
// redistribute's executor, for this backend.
#include "../../redistribute/impl/executor.hpp"
DEVMESH_INSTANTIATE_REDISTRIBUTE(devmesh::nccl::communicator);
