// devmesh/runtime/impl/topology_step.hpp: init's topology step (options.topology, intra_node,
// node_major): node discovery over the control communicator, node-major placement and the
// intra-node check. Compiled only in files that set a topology option: a topology_option
// carries a pointer to settle_topology (options.hpp).
#pragma once
#include <concepts>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../backend.hpp"
#include "consensus.hpp"
#include "../deadline.hpp"
#include "mesh_state.hpp"
#include "../topology.hpp"

namespace devmesh::detail {

/// Node discovery at init, over the control communicator: the backend's node_of_ranks hook
/// (found by argument-dependent lookup: mpi/node.hpp, nccl/node.hpp), then a digest check
/// that every rank found the same nodes. A backend without the hook throws on every rank.
template <communicator C>
std::vector<int> discover_nodes(const mesh_state<C>& st, std::string_view step, const deadline& dl) {
  const C& c = *st.control;
  if constexpr (requires {
                  { node_of_ranks(c, dl) } -> std::convertible_to<std::vector<int>>;
                }) {
    std::vector<int> nodes = bounded_step(step, dl, [&] { return std::vector<int>(node_of_ranks(c, dl)); });
    check_same(c, descriptor::of_text("nodes " + rank_ranges(nodes)), std::string(step) + ": node discovery", dl);
    return nodes;
  } else {
    throw mesh_error("devmesh: " + std::string(step) + ": the " + std::string(C::backend_name()) +
                     " backend cannot discover nodes (it has no node_of_ranks hook, docs/runtime.md): "
                     "options.topology, intra_node and node_major are not available on it");
  }
}

/// The topology options at init or from_comms (the step a topology_option carries): checks
/// the intra_node names, discovers the nodes, builds the node-major map (node_major) and
/// checks intra_node. All but the discovery are computed from inputs every rank was shown to
/// share (the options, the layout, then the nodes), so they throw alike on every rank with no
/// further step; an unknown name throws before the discovery's collective step. Returns the
/// rank map to use.
template <communicator C>
std::vector<int> settle_topology(mesh_state<C>& st, const layout_view& v, std::string_view step, const deadline& dl) {
  const auto& o = st.options;
  std::vector<int> map = o.rank_map;
  const std::vector<int> dims = dim_indices(v.names, o.intra_node.value(), std::string(step) + ": options.intra_node");
  st.node_of_rank = discover_nodes(st, step, dl);
  const std::span<const int> members = std::span<const int>(st.node_of_rank).first(static_cast<std::size_t>(v.root_size));
  if (o.node_major.value())
    map = node_major_map(v, members, dims, std::string(step) + ": node-major placement (options.node_major)");
  if (dims.empty()) return map;
  const std::vector<int> placed = map.empty() ? rank_range(0, v.root_size) : map;
  const char* how = step == "init_device_mesh"
                        ? "set options.node_major = true, and init_device_mesh builds a rank map (position -> world "
                          "rank) that keeps these dims within nodes whatever order the launcher gave the ranks"
                        : "";
  try {
    check_intra_node(v, st.node_of_rank, dims, placed, how);
  } catch (const mesh_error& e) {
    const std::string what = e.what();  // "devmesh: intra-node requirement not met: ..."
    throw mesh_error("devmesh: " + std::string(step) + " (options.intra_node): " + what.substr(what.find(' ') + 1));
  }
  return map;
}

/// The rank map of the mesh: options.rank_map, or what the topology step (set with any
/// topology option) makes of it. Without topology options, no topology code is compiled here.
template <communicator C>
std::vector<int> settle_placement(mesh_state<C>& st, const layout_view& v, std::string_view step, const deadline& dl) {
  const auto settle = st.options.topology_step();
  if (!st.options.wants_topology() || !settle) return st.options.rank_map;
  return settle(st, v, step, dl);
}

}  // namespace devmesh::detail
