// devmesh/nccl/impl/device_memory.ipp: device_memory.hpp's definitions (compiled once, or inline
// in header-only mode: core/config.hpp).
#pragma once
#include <cstddef>
#include <string>

#include <cuda_runtime_api.h>

#include "../../core/diagnostics.hpp"
#include "../device_memory.hpp"
#include "../enqueue.hpp"
#include "../error.hpp"

namespace devmesh::nccl::detail {

DEVMESH_DECL void* device_memory::allocate(std::size_t bytes, cudaStream_t s) {
  void* p = nullptr;
  check_cuda(cudaMallocAsync(&p, bytes, s), "cudaMallocAsync (redistribute's scratch)");
  return p;
}

DEVMESH_DECL void device_memory::release(void* p, cudaStream_t s) noexcept { cudaFreeAsync(p, s); }

DEVMESH_DECL void device_memory::copy_bytes(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                                            std::size_t width, std::size_t rows, cudaStream_t s) {
  check_cuda(rows == 1 ? cudaMemcpyAsync(dst, src, width, cudaMemcpyDeviceToDevice, s)
                       : cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows, cudaMemcpyDeviceToDevice, s),
             rows == 1 ? "cudaMemcpyAsync (redistribute)" : "cudaMemcpy2DAsync (redistribute)");
}

DEVMESH_DECL void device_memory::zero_bytes(void* p, std::size_t bytes, cudaStream_t s) {
  check_cuda(cudaMemsetAsync(p, 0, bytes, s), "cudaMemsetAsync (redistribute)");
}

DEVMESH_DECL void device_memory::check_usable(const char* call) {
  if (groups().depth > 0)
    throw comm_error(std::string("devmesh: ") + call +
                     " inside an NCCL group: its steps copy between collectives, which a group would run at its "
                     "end, after the copies (call it outside the group)");
}

}  // namespace devmesh::nccl::detail
