// devmesh/nccl/impl/node.ipp: node.hpp's definitions (compiled once, or inline in header-only
// mode: core/config.hpp).
#pragma once
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "../../core/diagnostics.hpp"
#include "../../runtime/impl/consensus.hpp"
#include "../../runtime/digest.hpp"
#include "../../runtime/topology.hpp"
#include "../node.hpp"

namespace devmesh::nccl {

namespace detail {

/// This rank's node key: (1, DEVMESH_NODE_ID) when set, else (2, the host name's digest);
/// `error` says why there is none (a malformed DEVMESH_NODE_ID, gethostname failing).
DEVMESH_DECL devmesh::detail::node_key local_node_key(std::string& error) {
  const devmesh::detail::node_override o = devmesh::detail::node_id_from_env();
  if (!o.error.empty()) {
    error = o.error;
    return {};
  }
  if (o.id >= 0) return {1, o.id};
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) {
    error = "devmesh: nccl: node_of_ranks: gethostname failed: " + std::string(std::strerror(errno));
    return {};
  }
  const digest h = sha256(std::string_view(host.data()));
  return {2, static_cast<std::int64_t>(h[0] >> 1)};
}

}  // namespace detail

DEVMESH_DECL std::vector<int> node_of_ranks(const communicator& c, const deadline& d) {
  if (!c.has_host_channel())
    throw mesh_error(
        "devmesh: nccl: node_of_ranks: this NCCL communicator has no host channel (a world made by "
        "nccl::world_from_env has none), so the nodes cannot be discovered: options.topology, intra_node and "
        "node_major need a world made by nccl::world(mpi_world)");
  std::string error;
  const devmesh::detail::node_key mine = detail::local_node_key(error);
  return devmesh::detail::bounded_step("node_of_ranks", d, [&] {
    devmesh::detail::agree(c, error, "node_of_ranks", d);
    std::vector<devmesh::detail::node_key> keys(static_cast<std::size_t>(c.size()));
    c.all_gather_bytes(mine.data(), keys.data(), sizeof mine, d);
    return devmesh::detail::number_nodes(keys);
  });
}

}  // namespace devmesh::nccl
