// devmesh/nccl/error.hpp: NCCL and CUDA runtime results -> dm::comm_error.
//
// Messages name the call, the communicator (commName, rank/size) and carry both
// ncclGetErrorString (what the code means) and ncclGetLastError (what NCCL saw). Compiled once
// (nccl/impl/error.ipp).
#pragma once
#include <string>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "../core/config.hpp"
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
DEVMESH_DECL std::string describe(ncclResult_t r, ncclComm_t comm);

/// Throws comm_error for a failed NCCL call. `where` names the call and communicator.
[[noreturn]] DEVMESH_DECL void throw_nccl(const std::string& where, ncclResult_t r, ncclComm_t comm);

/// Throws comm_error for the failed CUDA runtime call `call`.
[[noreturn]] DEVMESH_DECL void throw_cuda(cudaError_t e, const char* call);

/// Throws comm_error when a CUDA runtime call failed: the test inline, the message out of line.
inline void check_cuda(cudaError_t e, const char* call) {
  if (e != cudaSuccess) [[unlikely]]
    throw_cuda(e, call);
}

}  // namespace detail
}  // namespace devmesh::nccl

#if DEVMESH_HEADER_ONLY
#include "impl/error.ipp"
#endif
