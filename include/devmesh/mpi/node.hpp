// devmesh/mpi/node.hpp: which node each rank of an MPI world is on, for topology.hpp.
//
//   auto nodes = dm::mpi::node_of_ranks(world);  // collective; the same vector on every rank
//   std::cout << dm::topology(mesh, nodes);
//
// A node is what MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups: the ranks that can share
// memory, i.e. one machine. DEVMESH_NODE_ID=<integer >= 0> in a rank's environment overrides
// its node: ranks with the same value are one node, whatever machine they run on (this is how
// tests simulate several nodes on one machine). A rank with the variable and one without are
// never on the same node; set it on every rank or on none. Empty counts as unset.
#pragma once
#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "native.hpp"

#include "../consensus.hpp"
#include "../deadline.hpp"
#include "../diagnostics.hpp"
#include "communicator.hpp"
#include "error.hpp"

namespace devmesh::mpi {

namespace detail {

/// DEVMESH_NODE_ID, read now: `id` -1 when unset or empty, else the node id (>= 0); a value
/// that is not a decimal integer in [0, INT_MAX] leaves `id` -1 and says why in `error`.
struct node_override {
  int id = -1;
  std::string error;
};
/// DEVMESH_NODE_ID of this process, parsed (see node_override).
inline node_override node_id_from_env() {
  const char* v = std::getenv("DEVMESH_NODE_ID");
  if (!v || !*v) return {};
  bool digits = std::strlen(v) <= 10;
  for (const char* c = v; *c && digits; ++c) digits = *c >= '0' && *c <= '9';
  errno = 0;
  const long long x = digits ? std::strtoll(v, nullptr, 10) : -1;
  if (!digits || errno == ERANGE || x > INT_MAX)
    return {-1, "devmesh: DEVMESH_NODE_ID='" + std::string(v) +
                    "' is not a node id (an integer >= 0, e.g. DEVMESH_NODE_ID=1; unset it to use the machine's)"};
  return {static_cast<int>(x), {}};
}

/// The lowest world rank on this rank's shared-memory node: MPI_Comm_split_type over
/// `ctl` (collective over every rank of ctl; blocking, as MPI has no non-blocking form), then
/// a bounded all-gather of world ranks over the node's communicator.
inline int lowest_rank_on_node(const communicator& ctl, const deadline& d) {
  MPI_Comm raw = MPI_COMM_NULL;
  check(MPI_Comm_split_type(ctl.native(), MPI_COMM_TYPE_SHARED, ctl.rank(), MPI_INFO_NULL, &raw),
        "MPI_Comm_split_type");
  const communicator node = communicator::adopt(raw);
  const std::int32_t me = ctl.rank();
  std::vector<std::int32_t> all(static_cast<std::size_t>(node.size()));
  node.all_gather_bytes(&me, all.data(), sizeof me, d);
  std::int32_t lowest = me;
  for (std::int32_t r : all) lowest = std::min(lowest, r);
  return lowest;
}

/// Every rank's node key, (0, lowest world rank of its machine) or (1, DEVMESH_NODE_ID),
/// renumbered 0..n-1 in order of each node's lowest world rank.
inline std::vector<int> number_nodes(const std::vector<std::array<std::int32_t, 2>>& keys) {
  std::map<std::array<std::int32_t, 2>, int> id;
  std::vector<int> out;
  out.reserve(keys.size());
  for (const auto& k : keys) out.push_back(id.try_emplace(k, static_cast<int>(id.size())).first->second);
  return out;
}

}  // namespace detail

/// Collective over `world`: the node of every rank of `world`, indexed by rank, identical on
/// every rank; node ids are 0..n-1, numbered by the lowest rank on each node (rank 0 is on
/// node 0). A node is a shared-memory domain (MPI_Comm_split_type with
/// MPI_COMM_TYPE_SHARED), unless DEVMESH_NODE_ID (an integer >= 0, read at this call) is set
/// on a rank: ranks with the same DEVMESH_NODE_ID are one node (see the header comment).
///
/// Steps (on a private duplicate of `world`, so the caller's traffic on `world` cannot mix
/// in): an all-reduce that agrees on every rank's DEVMESH_NODE_ID (a malformed value on any
/// rank makes every rank throw mesh_error naming the ranks and the value); the split, only if
/// some rank has no DEVMESH_NODE_ID; an all-gather of every rank's node. Every step but the
/// split polls until `d` and then throws timeout_error on every waiting rank (a rank that
/// never calls node_of_ranks); the split is a blocking MPI call (MPI has no non-blocking
/// split_type) that every rank enters only after the bounded agreement showed that every
/// rank reached this call, so it waits at most for MPI itself.
inline std::vector<int> node_of_ranks(const communicator& world, const deadline& d) {
  const communicator ctl = devmesh::detail::bounded_step("node_of_ranks", d, [&] { return world.duplicate(d); });
  const detail::node_override mine = detail::node_id_from_env();
  const bool has_override = mine.error.empty() && mine.id >= 0;
  return devmesh::detail::bounded_step("node_of_ranks", d, [&] {
    std::array<std::uint64_t, 2> w{mine.error.empty() ? 0U : 1U, has_override ? 0U : 1U};  // failed, needs split
    ctl.all_reduce_max(w.data(), w.size(), d);
    if (w[0]) devmesh::detail::throw_failed(ctl, mine.error, "node_of_ranks", d);
    std::array<std::int32_t, 2> key{1, mine.id};
    if (w[1]) {
      const int lowest = detail::lowest_rank_on_node(ctl, d);
      if (!has_override) key = {0, lowest};
    }
    std::vector<std::array<std::int32_t, 2>> keys(static_cast<std::size_t>(ctl.size()));
    ctl.all_gather_bytes(key.data(), keys.data(), sizeof key, d);
    return detail::number_nodes(keys);
  });
}

/// node_of_ranks bounded by DEVMESH_TIMEOUT (seconds; default 600), as init_device_mesh's
/// steps are. A malformed DEVMESH_TIMEOUT throws mesh_error before any communication.
inline std::vector<int> node_of_ranks(const communicator& world) {
  return node_of_ranks(world, deadline::after(timeout_from_env()));
}

}  // namespace devmesh::mpi
