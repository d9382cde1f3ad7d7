// devmesh/core/link_cost.hpp: what one collective over a mesh dim's links costs, in the α-β
// model: a latency per collective, then its bytes over a bandwidth. The vocabulary that the
// runtime's options (a cost per dim name) and the sharding planner (a cost per mesh dim) share;
// plain values, host and device, no runtime.
//
//   dm::link_cost::network()                 // a documented default: 20 µs, 20 GB/s
//   dm::link_cost{3.5, 8.2}.time_us(65536)   // 3.5 µs + 65,536 B at 8.2 GB/s
#pragma once
#include "config.hpp"

namespace devmesh {

/// A link class's α-β cost: a collective over a group on such links takes latency_us, plus
/// the bytes one rank sends over gbytes_per_s. A value of zero bandwidth is unknown.
struct link_cost {
  double latency_us = 0;    ///< α: microseconds a collective takes before its first byte counts
  double gbytes_per_s = 0;  ///< β: 10^9 bytes per second one rank sends over these links

  /// True when the bandwidth is known (a default-made link_cost is not).
  DEVMESH_HOST_DEVICE constexpr bool known() const { return gbytes_per_s > 0; }
  /// Microseconds for one collective in which a rank sends `bytes` (10^9 B/s = 10^3 B/µs).
  DEVMESH_HOST_DEVICE constexpr double time_us(double bytes) const {
    return latency_us + bytes / (gbytes_per_s * 1e3);
  }
  /// Equal latencies and bandwidths.
  friend constexpr bool operator==(const link_cost&, const link_cost&) = default;

  // The documented defaults (docs/sharding.md, "The cost model"): orders of magnitude from
  // published figures, not measured on this project's machine (which has no GPU and no network).
  /// MPI ranks of one node, through shared memory: 2 µs, 10 GB/s.
  static constexpr link_cost shared_memory() { return {2.0, 10.0}; }
  /// GPUs of one node over NVLink (NCCL): 10 µs, 150 GB/s.
  static constexpr link_cost nvlink() { return {10.0, 150.0}; }
  /// Ranks on different nodes, over a network (200 Gb/s InfiniBand per rank): 20 µs, 20 GB/s.
  static constexpr link_cost network() { return {20.0, 20.0}; }
};

/// The cost of a group over the links of a and b (a flattened dim): it waits for the slowest,
/// the larger latency and the smaller bandwidth.
DEVMESH_HOST_DEVICE constexpr link_cost slowest(const link_cost& a, const link_cost& b) {
  return {a.latency_us > b.latency_us ? a.latency_us : b.latency_us,
          a.gbytes_per_s < b.gbytes_per_s ? a.gbytes_per_s : b.gbytes_per_s};
}

}  // namespace devmesh
