// devmesh/nccl/device.hpp: pick this process's GPU from the launcher's local rank.
//
// One process per GPU: the local rank (rank among the processes of this node) is the
// device index. It must be chosen before any other CUDA call, or the process creates a
// context on device 0 that every rank of the node then shares. Compiled once
// (nccl/impl/device.ipp).
#pragma once
#include <utility>

#include "../core/config.hpp"
#include "../core/diagnostics.hpp"  // comm_error, which select_device throws

namespace devmesh::nccl {

/// Local-rank variables, in the order they are consulted: OpenMPI's mpirun, Slurm's srun,
/// torchrun (and most other launchers).
inline constexpr const char* local_rank_variables[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
                                                       "LOCAL_RANK"};

/// Device selection for world()/world_from_env(): from the environment (default), a given
/// index, or the current device (the caller called cudaSetDevice already).
struct device_choice {
  static constexpr int from_env = -1;
  static constexpr int current = -2;
  int index = from_env;
};

/// The local rank from the first launcher variable that is set, and the variable's name.
/// Throws comm_error naming every variable it looked at when none is set or one is not an
/// integer >= 0.
DEVMESH_DECL std::pair<int, const char*> local_rank_from_env();

/// Makes the chosen device current and returns its index. The first CUDA calls of the
/// process: cudaGetDeviceCount (creates no context) then cudaSetDevice.
DEVMESH_DECL int select_device(device_choice choice = {});

}  // namespace devmesh::nccl

#if DEVMESH_HEADER_ONLY
#include "impl/device.ipp"
#endif
