// devmesh/nccl/device_memory.hpp: the NCCL backend's memory space for redistribute
// (redistribute/memory.hpp): blocks in device memory, every step on the caller's stream.
// Scratch is stream-ordered (cudaMallocAsync / cudaFreeAsync: no device-wide sync, the pool
// reuses it call after call); the steps' copies are cudaMemcpy2DAsync (device to device),
// one per run of equal rows; zeros are cudaMemsetAsync. Host compilers can build it: no kernel.
#pragma once
#include <cstddef>
#include <string>
#include <utility>

#include <cuda_runtime_api.h>

#include "../core/diagnostics.hpp"
#include "enqueue.hpp"
#include "error.hpp"

namespace devmesh::nccl::detail {

struct device_memory {
  using stream_type = cudaStream_t;
  static constexpr bool copies_at_once = false;

  /// Device scratch on one stream: allocated and freed in its order.
  template <class T>
  class scratch {
    T* p_ = nullptr;
    std::size_t size_ = 0, capacity_ = 0;
    cudaStream_t stream_;

   public:
    explicit scratch(cudaStream_t s) : stream_(s) {}
    scratch(const scratch&) = delete;
    scratch& operator=(const scratch&) = delete;
    ~scratch() {
      if (p_) cudaFreeAsync(p_, stream_);
    }
    void resize(std::size_t n) {
      if (n > capacity_) {
        void* p = nullptr;
        check_cuda(cudaMallocAsync(&p, n * sizeof(T), stream_), "cudaMallocAsync (redistribute's scratch)");
        if (p_) cudaFreeAsync(p_, stream_);
        p_ = static_cast<T*>(p), capacity_ = n;
      }
      size_ = n;
    }
    T* data() noexcept { return p_; }
    const T* data() const noexcept { return p_; }
    std::size_t size() const noexcept { return size_; }
    void swap(scratch& o) noexcept {
      std::swap(p_, o.p_), std::swap(size_, o.size_), std::swap(capacity_, o.capacity_), std::swap(stream_, o.stream_);
    }
    void release_large() noexcept {}  // freed with the call's scratch
  };

  template <class T>
  static void copy_rows(T* dst, std::size_t dst_pitch, const T* src, std::size_t src_pitch, std::size_t width,
                        std::size_t rows, cudaStream_t s) {
    check_cuda(rows == 1 ? cudaMemcpyAsync(dst, src, width * sizeof(T), cudaMemcpyDeviceToDevice, s)
                         : cudaMemcpy2DAsync(dst, dst_pitch * sizeof(T), src, src_pitch * sizeof(T), width * sizeof(T),
                                             rows, cudaMemcpyDeviceToDevice, s),
               rows == 1 ? "cudaMemcpyAsync (redistribute)" : "cudaMemcpy2DAsync (redistribute)");
  }
  template <class T>
  static void zero(T* p, std::size_t n, cudaStream_t s) {  // every type NCCL reduces: zero bits are 0
    if (n) check_cuda(cudaMemsetAsync(p, 0, n * sizeof(T), s), "cudaMemsetAsync (redistribute)");
  }
  /// Inside an NCCL group the collectives run at the group's end, after the steps' copies
  /// that depend on them: refused.
  static void check_usable(const char* call) {
    if (groups().depth > 0)
      throw comm_error(std::string("devmesh: ") + call +
                       " inside an NCCL group: its steps copy between collectives, which a group would run at its "
                       "end, after the copies (call it outside the group)");
  }
};

}  // namespace devmesh::nccl::detail
