// devmesh/nccl.hpp: the NCCL backend, dm::nccl.
//
//   auto world = dm::nccl::world(dm::mpi::world());          // MPI job: id over MPI
//   auto world = dm::nccl::world_from_env();                  // torchrun --no-python, srun
//   auto mesh  = dm::init_device_mesh<mesh3d>(world);
//
// communicator.hpp: RAII ncclComm_t (split, typed collectives, abort); group.hpp: RAII
// ncclGroupStart/End; options.hpp: ncclConfig_t; device.hpp: GPU from the local rank;
// bootstrap.hpp / mpi_bootstrap.hpp: world creation; node.hpp: node discovery over the host
// channel (device_mesh's topology options). See docs/nccl.md.
#pragma once
#include "core/diagnostics.hpp"
#include "nccl/bootstrap.hpp"
#include "nccl/communicator.hpp"
#include "nccl/device.hpp"
#include "nccl/error.hpp"
#include "nccl/group.hpp"
#include "nccl/node.hpp"
#include "nccl/options.hpp"
#include "nccl/types.hpp"
// The MPI bootstrap (nccl::world(mpi_world)) when MPI is in use: devmesh's MPI backend, or
// <mpi.h> included before this header.
#if defined(DEVMESH_WITH_MPI) || defined(MPI_VERSION)
#include "nccl/mpi_bootstrap.hpp"
#endif
// The stream watchdog (the backend's thread), which the runtime's state holds: header-only, its
// definition here (compiled, in the NCCL backend's library).
#if DEVMESH_HEADER_ONLY
#include "runtime/impl/stream_watchdog.hpp"
#endif
// Including this header alone is enough for device meshes over NCCL (no -D needed).
#include "runtime/init.hpp"
#include "runtime/from_comms.hpp"
