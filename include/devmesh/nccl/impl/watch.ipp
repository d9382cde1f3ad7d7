// devmesh/nccl/impl/watch.ipp: watch.hpp's definitions (compiled once, or inline in header-only
// mode: core/config.hpp).
#pragma once
#include <cuda_runtime_api.h>

#include "../enqueue.hpp"
#include "../error.hpp"
#include "../watch.hpp"

namespace devmesh::nccl::detail {

DEVMESH_DECL void record_watch(watch* w, cudaStream_t st) {
  if (!w) return;
  if (groups().depth > 0) {
    w->unwatched = true;
    return;
  }
  if (!w->event)
    check_cuda(cudaEventCreateWithFlags(&w->event, cudaEventDisableTiming), "cudaEventCreateWithFlags (watchdog)");
  check_cuda(cudaEventRecord(w->event, st), "cudaEventRecord (watchdog)");
}

}  // namespace devmesh::nccl::detail
