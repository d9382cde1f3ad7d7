// devmesh/nccl/device.hpp: pick this process's GPU from the launcher's local rank.
//
// One process per GPU: the local rank (rank among the processes of this node) is the
// device index. It must be chosen before any other CUDA call, or the process creates a
// context on device 0 that every rank of the node then shares.
#pragma once
#include <cstdlib>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include <cuda_runtime_api.h>

#include "error.hpp"

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
inline std::pair<int, const char*> local_rank_from_env() {
  std::string looked;
  for (const char* var : local_rank_variables) {
    const char* v = std::getenv(var);
    if (!v) {
      looked += looked.empty() ? var : std::string(", ") + var;
      continue;
    }
    char* end = nullptr;
    long n = std::strtol(v, &end, 10);
    if (end == v || *end != '\0' || n < 0 || n > 1 << 20)
      throw comm_error(std::string("devmesh: cannot select a GPU: ") + var + "='" + v +
                       "' is not a local rank (an integer >= 0)");
    return {static_cast<int>(n), var};
  }
  throw comm_error("devmesh: cannot select a GPU: no launcher local-rank variable is set (missing: " + looked +
                   "); launch with mpirun, srun or torchrun, or pass nccl::device_choice{index}");
}

/// Makes the chosen device current and returns its index. The first CUDA calls of the
/// process: cudaGetDeviceCount (creates no context) then cudaSetDevice.
inline int select_device(device_choice choice = {}) {
  if (choice.index == device_choice::current) {
    int d = 0;
    detail::check_cuda(cudaGetDevice(&d), "cudaGetDevice");
    return d;
  }
  int index = choice.index;
  const char* source = "nccl::device_choice";
  if (index == device_choice::from_env) std::tie(index, source) = local_rank_from_env();
  if (index < 0) throw comm_error("devmesh: cannot select a GPU: negative device index " + std::to_string(index));
  int count = 0;
  detail::check_cuda(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (index >= count)
    throw comm_error("devmesh: cannot select a GPU: local rank " + std::to_string(index) + " (from " + source +
                     ") but this node has " + std::to_string(count) +
                     " visible device(s); run one process per GPU (check CUDA_VISIBLE_DEVICES)");
  detail::check_cuda(cudaSetDevice(index), "cudaSetDevice");
  return index;
}

}  // namespace devmesh::nccl
