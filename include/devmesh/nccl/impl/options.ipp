// devmesh/nccl/impl/options.ipp: options.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <string>

#include <nccl.h>

#include "../options.hpp"

namespace devmesh::nccl {

DEVMESH_DECL std::string options::describe() const {
  auto opt = [](const auto& v) { return v ? std::to_string(static_cast<int>(*v)) : std::string("-"); };
  return "nccl{blocking=" + std::to_string(blocking ? 1 : 0) + ",timeout_ms=" + std::to_string(timeout.count()) +
         ",cgaClusterSize=" + opt(cga_cluster_size) + ",minCTAs=" + opt(min_ctas) + ",maxCTAs=" + opt(max_ctas) +
         ",netName=" + net_name + ",commName=" + name + ",splitShare=" + opt(split_share) + "}";
}

DEVMESH_DECL ncclConfig_t to_config(const options& o) {
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
