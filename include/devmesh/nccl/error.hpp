// devmesh/nccl/error.hpp: NCCL and CUDA runtime results -> dm::comm_error.
//
// Messages name the call, the communicator (commName, rank/size) and carry both
// ncclGetErrorString (what the code means) and ncclGetLastError (what NCCL saw).
#pragma once
#include <string>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "../core/diagnostics.hpp"

namespace devmesh::nccl {

/// Name of an ncclResult_t, e.g. "ncclInternalError".
constexpr const char* result_name(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    default: return "ncclResult_t(?)";
  }
}

namespace detail {

/// "ncclInternalError (internal error - ...); last NCCL error: ..." for a failed call.
inline std::string describe(ncclResult_t r, ncclComm_t comm) {
  std::string s = std::string(result_name(r)) + " (" + ncclGetErrorString(r) + ")";
  const char* last = ncclGetLastError(comm);
  if (last && *last) s += "; last NCCL error: " + std::string(last);
  return s;
}

/// Throws comm_error for a failed NCCL call. `where` names the call and communicator.
[[noreturn]] inline void throw_nccl(const std::string& where, ncclResult_t r, ncclComm_t comm) {
  throw comm_error("devmesh: " + where + " failed: " + describe(r, comm));
}

/// Throws comm_error when a CUDA runtime call failed.
inline void check_cuda(cudaError_t e, const char* call) {
  if (e != cudaSuccess)
    throw comm_error(std::string("devmesh: ") + call + " failed: " + cudaGetErrorName(e) + " (" +
                     cudaGetErrorString(e) + ")");
}

}  // namespace detail
}  // namespace devmesh::nccl
