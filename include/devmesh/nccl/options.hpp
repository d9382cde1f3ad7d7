// devmesh/nccl/options.hpp: per-communicator creation options, mapped to ncclConfig_t.
//
// Unset fields stay NCCL_CONFIG_UNDEF_* so NCCL applies its own defaults (and its NCCL_*
// environment variables). The one devmesh default that differs from NCCL's: blocking is
// false, so init and split can be bounded by `timeout` and aborted instead of hanging.
// Compiled once (nccl/impl/options.ipp).
#pragma once
#include <chrono>
#include <optional>
#include <string>

#include <nccl.h>

#include "../core/config.hpp"

namespace devmesh::nccl {

/// Creation options of one NCCL communicator, mapped to ncclConfig_t (unset fields: NCCL's
/// defaults).
struct options {
  /// ncclConfig_t::blocking. false (devmesh's default): init/split/collectives return
  /// ncclInProgress and devmesh polls ncclCommGetAsyncError until done or `timeout`.
  bool blocking = false;
  /// How long non-blocking init, split, finalize and enqueue may take before devmesh
  /// aborts the communicator and throws. Not used when blocking (NCCL then has no bound).
  std::chrono::milliseconds timeout = std::chrono::seconds(300);
  std::optional<int> cga_cluster_size;  ///< ncclConfig_t::cgaClusterSize
  std::optional<int> min_ctas;          ///< ncclConfig_t::minCTAs
  std::optional<int> max_ctas;          ///< ncclConfig_t::maxCTAs
  std::string net_name;                 ///< ncclConfig_t::netName ("" = NCCL's choice)
  std::string name;                     ///< ncclConfig_t::commName; device_mesh fills "mesh:<dim>" when empty
  std::optional<bool> split_share;      ///< ncclConfig_t::splitShare (child shares parent's resources)

  /// Every field as text, in a fixed order: device_mesh puts it in the consistency
  /// fingerprint, so ranks built with different NCCL options fail at init, not in a hang.
  DEVMESH_DECL std::string describe() const;

  /// Every field equal.
  friend bool operator==(const options&, const options&) = default;
};

/// The ncclConfig_t for `o`. Its string fields point into `o`: keep `o` alive for the call.
DEVMESH_DECL ncclConfig_t to_config(const options& o);

}  // namespace devmesh::nccl

#if DEVMESH_HEADER_ONLY
#include "impl/options.ipp"
#endif
