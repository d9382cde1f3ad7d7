// devmesh/nccl/group.hpp: RAII batching of NCCL calls (ncclGroupStart/End).
//
//   { dm::nccl::group g;                        // ncclGroupStart
//     mesh.all_reduce<"dp">(a, dm::op::sum, s);
//     mesh.all_gather<"tp">(b, c, s);
//   }                                           // ncclGroupEnd: one launch for both dims
//
// end() ends the group early and reports failures as dm::comm_error. The destructor ends
// a group still open: it throws when no other exception is in flight, and otherwise ends
// the group quietly so the first error is the one that propagates. Compiled once
// (nccl/impl/group.ipp).
#pragma once
#include "../core/config.hpp"
#include "communicator.hpp"

namespace devmesh::nccl {

/// ncclGroupStart for the scope: the collectives enqueued meanwhile go out as one group.
class group {
 public:
  /// ncclGroupStart.
  DEVMESH_DECL group();
  group(const group&) = delete;
  group& operator=(const group&) = delete;

  /// ncclGroupEnd now (throws comm_error on failure); the destructor then does nothing.
  DEVMESH_DECL void end();

  /// ncclGroupEnd unless end() was called; quiet while an exception propagates.
  DEVMESH_DECL ~group() noexcept(false);

 private:
  int uncaught_;
  bool open_ = true;
};

}  // namespace devmesh::nccl

#if DEVMESH_HEADER_ONLY
#include "impl/group.ipp"
#endif
