// devmesh/nccl/device_buffer.hpp: temporary device memory: a buffer freed at scope exit, and
// the copy of a send buffer that overlaps the receive buffer (NCCL reads send while it
// writes recv, so an overlap other than NCCL's in-place forms needs a copy). Compiled once
// (nccl/impl/device_buffer.ipp).
#pragma once
#include <cstddef>

#include <cuda_runtime_api.h>

#include "../core/config.hpp"
#include "watch.hpp"

namespace devmesh::nccl::detail {

/// A device allocation freed on scope exit (n == 0: none).
struct device_buffer {
  void* ptr = nullptr;
  DEVMESH_DECL explicit device_buffer(std::size_t n);
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  DEVMESH_DECL ~device_buffer();
};

/// `send`, or a device copy of its count elements when `needed` (it overlaps the receive
/// buffer), made on stream st. The copy must outlive the kernels that read it: settle()
/// waits for the stream. Inside a group those kernels run at the outermost group end,
/// after the copy is freed, so a copy is refused there: comm_error naming `call`, with
/// `remedy`.
struct send_copy {
  const void* send;
  device_buffer buf;

  /// A copy of the `bytes` bytes at s when `needed` (send overlaps recv), made on st; else s.
  DEVMESH_DECL send_copy(const void* s, std::size_t bytes, bool needed, cudaStream_t st, const char* call,
                         const char* remedy);
  /// The copy (or s) from byte `offset` on.
  const void* at(std::size_t offset) const { return static_cast<const char*>(send) + offset; }
  /// Waits for the kernels that read the copy, if there is one; under the watchdog (w, with
  /// its event recorded) the copy is left to it instead, freed once the work is done: the
  /// call returns without waiting, and a peer that never comes is the watchdog's to end.
  DEVMESH_DECL void settle(cudaStream_t st, watch* w = nullptr);

 private:
  DEVMESH_DECL static std::size_t size(std::size_t bytes, bool needed, const char* call, const char* remedy);
};

}  // namespace devmesh::nccl::detail

#if DEVMESH_HEADER_ONLY
#include "impl/device_buffer.ipp"
#endif
