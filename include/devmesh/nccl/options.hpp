// devmesh/nccl/options.hpp: per-communicator creation options, mapped to ncclConfig_t.
//
// Unset fields stay NCCL_CONFIG_UNDEF_* so NCCL applies its own defaults (and its NCCL_*
// environment variables). The one devmesh default that differs from NCCL's: blocking is
// false, so init and split can be bounded by `timeout` and aborted instead of hanging.
#pragma once
#include <chrono>
#include <optional>
#include <string>

#include <nccl.h>

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
  std::string describe() const {
    auto opt = [](const auto& v) { return v ? std::to_string(static_cast<int>(*v)) : std::string("-"); };
    return "nccl{blocking=" + std::to_string(blocking ? 1 : 0) + ",timeout_ms=" + std::to_string(timeout.count()) +
           ",cgaClusterSize=" + opt(cga_cluster_size) + ",minCTAs=" + opt(min_ctas) + ",maxCTAs=" + opt(max_ctas) +
           ",netName=" + net_name + ",commName=" + name + ",splitShare=" + opt(split_share) + "}";
  }

  /// Every field equal.
  friend bool operator==(const options&, const options&) = default;
};

/// The ncclConfig_t for `o`. Its string fields point into `o`: keep `o` alive for the call.
inline ncclConfig_t to_config(const options& o) {
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  c.blocking = o.blocking ? 1 : 0;
  if (o.cga_cluster_size) c.cgaClusterSize = *o.cga_cluster_size;
  if (o.min_ctas) c.minCTAs = *o.min_ctas;
  if (o.max_ctas) c.maxCTAs = *o.max_ctas;
  if (!o.net_name.empty()) c.netName = o.net_name.c_str();
  if (!o.name.empty()) c.commName = o.name.c_str();
  if (o.split_share) c.splitShare = *o.split_share ? 1 : 0;
  return c;
}

}  // namespace devmesh::nccl
