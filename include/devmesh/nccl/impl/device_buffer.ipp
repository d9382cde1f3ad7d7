// devmesh/nccl/impl/device_buffer.ipp: device_buffer.hpp's definitions (compiled once, or inline
// in header-only mode: core/config.hpp).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include <cuda_runtime_api.h>

#include "../../core/diagnostics.hpp"
#include "../device_buffer.hpp"
#include "../enqueue.hpp"
#include "../error.hpp"

namespace devmesh::nccl::detail {

DEVMESH_DECL device_buffer::device_buffer(std::size_t n) {
  if (n) check_cuda(cudaMalloc(&ptr, n), "cudaMalloc");
}

DEVMESH_DECL device_buffer::~device_buffer() {
  if (ptr) cudaFree(ptr);
}

DEVMESH_DECL send_copy::send_copy(const void* s, std::size_t bytes, bool needed, cudaStream_t st, const char* call,
                                  const char* remedy)
    : send(s), buf(size(bytes, needed, call, remedy)) {
  if (!buf.ptr) return;
  check_cuda(cudaMemcpyAsync(buf.ptr, s, bytes, cudaMemcpyDeviceToDevice, st), "cudaMemcpyAsync (overlapping buffers)");
  send = buf.ptr;
}

DEVMESH_DECL void send_copy::settle(cudaStream_t st, watch* w) {
  if (!buf.ptr) return;
  if (w && !w->unwatched) {
    auto kept = std::make_shared<device_buffer>(0);
    std::swap(kept->ptr, buf.ptr);
    w->keep = std::move(kept);
    return;
  }
  check_cuda(cudaStreamSynchronize(st), "cudaStreamSynchronize (overlapping buffers)");
}

DEVMESH_DECL std::size_t send_copy::size(std::size_t bytes, bool needed, const char* call, const char* remedy) {
  if (!needed || bytes == 0) return 0;
  if (groups().depth > 0)
    throw comm_error(std::string("devmesh: ") + call +
                     ": overlapping send and recv buffers inside an NCCL group (the copy of send that they need "
                     "would be freed before the group runs): " +
                     remedy);
  return bytes;
}

}  // namespace devmesh::nccl::detail
