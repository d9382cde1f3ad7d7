// devmesh/nccl/watch.hpp: what an NCCL collective made under the watchdog leaves to it
// (runtime/stream_watchdog.hpp): an event recorded on its stream after its work, whether the
// call must also wait for that work (barrier), and what must live until it is done (a device
// copy of send). The watchdog polls the event from its own thread. Compiled once
// (nccl/impl/watch.ipp).
#pragma once
#include <memory>

#include <cuda_runtime_api.h>

#include "../core/config.hpp"

namespace devmesh::nccl {

/// A collective's part in the watchdog: the runtime passes one as the last argument of every
/// typed collective (nullptr: not watched, as without it).
struct watch {
  cudaEvent_t event = nullptr;  // in: a free event to record (null: one is made); out: recorded after the call's work
  bool wait = false;            // out: the call returns once its work is done (barrier): the runtime waits, watched
  bool unwatched = false;       // out: no event (inside a dm::nccl::group, whose work starts at its end)
  std::shared_ptr<void> keep;   // out: alive until the work is done (a device copy of send)
};

namespace detail {

/// Records w's event on st after the work enqueued so far; inside a group there is no such
/// work yet (it is enqueued at the outermost group end), and the call is not watched.
DEVMESH_DECL void record_watch(watch* w, cudaStream_t st);

}  // namespace detail
}  // namespace devmesh::nccl

#if DEVMESH_HEADER_ONLY
#include "impl/watch.ipp"
#endif
