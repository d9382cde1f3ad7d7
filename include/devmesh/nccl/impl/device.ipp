// devmesh/nccl/impl/device.ipp: device.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>

#include <cuda_runtime_api.h>

#include "../../core/diagnostics.hpp"
#include "../device.hpp"
#include "../error.hpp"

namespace devmesh::nccl {

DEVMESH_DECL std::pair<int, const char*> local_rank_from_env() {
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

DEVMESH_DECL int select_device(device_choice choice) {
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
