// devmesh/nccl/impl/error.ipp: error.hpp's definitions (compiled once, or inline in header-only
// mode: core/config.hpp).
#pragma once
#include <string>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "../../core/diagnostics.hpp"
#include "../error.hpp"

namespace devmesh::nccl::detail {

DEVMESH_DECL std::string describe(ncclResult_t r, ncclComm_t comm) {
  std::string s = std::string(result_name(r)) + " (" + ncclGetErrorString(r) + ")";
  const char* last = ncclGetLastError(comm);
  if (last && *last) s += "; last NCCL error: " + std::string(last);
  return s;
}

DEVMESH_DECL void throw_nccl(const std::string& where, ncclResult_t r, ncclComm_t comm) {
  throw comm_error("devmesh: " + where + " failed: " + describe(r, comm));
}

DEVMESH_DECL void throw_cuda(cudaError_t e, const char* call) {
  throw comm_error(std::string("devmesh: ") + call + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                   ")");
}

}  // namespace devmesh::nccl::detail
