// devmesh/nccl/device_memory.hpp: the NCCL backend's memory space for redistribute
// (redistribute/memory.hpp): blocks in device memory, every step on the caller's stream.
// Scratch is stream-ordered (cudaMallocAsync / cudaFreeAsync: no device-wide sync, the pool
// reuses it call after call); the steps' copies are cudaMemcpy2DAsync (device to device),
// one per run of equal rows; zeros are cudaMemsetAsync. Host compilers can build it: no kernel.
// The typed members below turn elements into bytes; the CUDA calls are compiled once
// (nccl/impl/device_memory.ipp).
#pragma once
#include <cstddef>
#include <utility>

#include <cuda_runtime_api.h>

#include "../core/config.hpp"

namespace devmesh::nccl::detail {

struct device_memory {
  using stream_type = cudaStream_t;
  static constexpr bool copies_at_once = false;

  /// `bytes` of device memory in the order of stream s (cudaMallocAsync; comm_error on failure).
  DEVMESH_DECL static void* allocate(std::size_t bytes, cudaStream_t s);
  /// Frees p in the order of stream s (cudaFreeAsync).
  DEVMESH_DECL static void release(void* p, cudaStream_t s) noexcept;
  /// `rows` rows of `width` bytes from src to dst (pitches in bytes), device to device, on s.
  DEVMESH_DECL static void copy_bytes(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                                      std::size_t width, std::size_t rows, cudaStream_t s);
  /// `bytes` zero bytes at p, on s.
  DEVMESH_DECL static void zero_bytes(void* p, std::size_t bytes, cudaStream_t s);

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
      if (p_) release(p_, stream_);
    }
    void resize(std::size_t n) {
      if (n > capacity_) {
        void* p = allocate(n * sizeof(T), stream_);
        if (p_) release(p_, stream_);
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
    copy_bytes(dst, dst_pitch * sizeof(T), src, src_pitch * sizeof(T), width * sizeof(T), rows, s);
  }
  template <class T>
  static void zero(T* p, std::size_t n, cudaStream_t s) {  // every type NCCL reduces: zero bits are 0
    if (n) zero_bytes(p, n * sizeof(T), s);
  }
  /// Inside an NCCL group the collectives run at the group's end, after the steps' copies
  /// that depend on them: refused.
  DEVMESH_DECL static void check_usable(const char* call);
};

}  // namespace devmesh::nccl::detail

#if DEVMESH_HEADER_ONLY
#include "impl/device_memory.ipp"
#endif
