// devmesh/nccl/impl/collectives_v.ipp: collectives_v.hpp's definitions (compiled once, or
// inline in header-only mode: core/config.hpp).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include <nccl.h>

#include "../../runtime/block_starts.hpp"
#include "../collectives_v.hpp"
#include "../device_buffer.hpp"
#include "../enqueue.hpp"
#include "../types.hpp"
#include "collectives.ipp"

namespace devmesh::nccl::detail {

/// Each block's start (elements) into at_out, from counts and displacements (empty: packed);
/// returns the extent the blocks span (runtime/block_starts.hpp).
DEVMESH_DECL std::size_t block_starts(const comm_state& s, const char* call, std::span<const std::size_t> counts,
                                      std::span<const std::size_t> at, std::vector<std::size_t>& at_out) {
  return devmesh::detail::block_starts([&] { return "devmesh: " + std::string(call) + " on " + s.label(); },
                                       static_cast<std::size_t>(s.size), counts, at, at_out);
}

DEVMESH_DECL void all_to_allv(const comm_handle& h, const void* send, std::span<const std::size_t> send_counts,
                              std::span<const std::size_t> send_at, void* recv,
                              std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_at,
                              element_type t, cudaStream_t st, watch* w) {
  comm_state& s = h.use("all_to_allv");
  const ncclDataType_t d = nccl_type("all_to_allv", t);
  std::vector<std::size_t> sa, ra;
  const std::size_t ns = block_starts(s, "all_to_allv", send_counts, send_at, sa) * t.size;
  const std::size_t nr = block_starts(s, "all_to_allv", recv_counts, recv_at, ra) * t.size;
  send_copy copy(send, ns, devmesh::detail::bytes_overlap(send, ns, recv, nr), st, "all_to_allv",
                 "use disjoint buffers, or call it outside the group");
  as_group([&] {
    for (std::size_t p = 0; p < sa.size(); ++p) {
      const int peer = static_cast<int>(p);
      if (send_counts[p])
        enqueued(s, "ncclSend (all_to_allv)", ncclSend(copy.at(sa[p] * t.size), send_counts[p], d, peer, s.comm, st));
      if (recv_counts[p])
        enqueued(s, "ncclRecv (all_to_allv)",
                 ncclRecv(static_cast<char*>(recv) + ra[p] * t.size, recv_counts[p], d, peer, s.comm, st));
    }
  });
  record_watch(w, st);
  copy.settle(st, w);
}

DEVMESH_DECL void reduce_scatterv(const comm_handle& h, const void* send, void* recv,
                                  std::span<const std::size_t> recv_counts, element_type t, op o, cudaStream_t st,
                                  watch* w) {
  comm_state& s = h.use("reduce_scatterv");
  require_avg_type("reduce_scatterv", t, o);
  const ncclDataType_t d = nccl_type("reduce_scatterv", t);
  std::vector<std::size_t> at;
  const std::size_t ns = block_starts(s, "reduce_scatterv", recv_counts, {}, at) * t.size;
  const std::size_t mine = recv_counts[static_cast<std::size_t>(s.rank)] * t.size;
  send_copy copy(send, ns, devmesh::detail::bytes_overlap(send, ns, recv, mine), st, "reduce_scatterv",
                 "use disjoint buffers, or call it outside the group");
  as_group([&] {
    for (std::size_t r = 0; r < at.size(); ++r)
      if (recv_counts[r])
        enqueued(s, "ncclReduce (reduce_scatterv)",
                 ncclReduce(copy.at(at[r] * t.size), recv, recv_counts[r], d, redop_of(t, o), static_cast<int>(r),
                            s.comm, st));
  });
  record_watch(w, st);
  copy.settle(st, w);
}

}  // namespace devmesh::nccl::detail
