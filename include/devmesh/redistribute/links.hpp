// devmesh/redistribute/links.hpp: the α-β cost of a device mesh's dims, as redistribute's
// planner reads them (sharding/plan_model.hpp): for each dim, options.links[name], else what
// dm::calibrate measured (calibrate.hpp), else the default of its link class: within a node
// (topology.hpp: every group of the dim on one node), shared memory on a host backend (MPI) or
// NVLink on a device one (NCCL); across nodes, a network. Without the nodes discovered
// (options.topology, intra_node or node_major), every dim is taken to stay within a node: the
// same link everywhere, so a uniform machine's plans are never hierarchical.
//
//   for (const auto& l : dm::mesh_links(mesh)) ...        // name, size, cost, where it came from
//   std::cout << dm::links_table(mesh);                    // one row per dim
#pragma once
#include <array>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "../core/link_cost.hpp"
#include "../runtime/device_mesh.hpp"
#include "../sharding/plan_model.hpp"
#include "memory.hpp"

namespace devmesh {

/// Where a dim's link cost comes from.
enum class link_source { option, measured, within_node, across_nodes };

/// The source's name as printed: "options.links", "calibrate", "default, within a node", ...
inline const char* link_source_name(link_source s) {
  switch (s) {
    case link_source::option: return "options.links";
    case link_source::measured: return "calibrate";
    case link_source::within_node: return "default, within a node";
    case link_source::across_nodes: return "default, across nodes";
  }
  return "";
}

/// One dim's links: its name, its size, their cost and where it came from.
struct dim_link {
  std::string name;
  int size = 0;
  link_cost cost;
  link_source source = link_source::within_node;
};

namespace detail {

/// The default cost of links within a node for backend Comm: shared memory where its blocks
/// are host memory (MPI), NVLink where they are device memory (NCCL).
template <class Comm>
constexpr link_cost within_node_link() {
  return std::is_same_v<memory_space_t<Comm>, host_memory> ? link_cost::shared_memory() : link_cost::nvlink();
}

}  // namespace detail

/// The links of every dim of mesh (its own dims, in order), as redistribute prices its plans.
/// Local, the same on every rank where the options are (calibrate's values are agreed).
template <class Layout, class Comm>
std::vector<dim_link> mesh_links(const device_mesh<Layout, Comm>& mesh) {
  const auto& options = mesh.options();
  const auto& measured = mesh.measured_links();
  const bool nodes_known = options.wants_topology();
  const mesh_topology topo = nodes_known ? mesh.topology() : mesh_topology{};
  std::vector<dim_link> out;
  for (int d = 0; d < Layout::ndim; ++d) {
    const std::string name(mesh.layout().name(d));
    dim_link l{name, mesh.layout().size(d), detail::within_node_link<Comm>(), link_source::within_node};
    if (const auto it = options.links.find(name); it != options.links.end()) l.cost = it->second, l.source = link_source::option;
    else if (const auto m = measured.find(name); m != measured.end()) l.cost = m->second, l.source = link_source::measured;
    else if (nodes_known && !topo.dims[static_cast<std::size_t>(d)].intra_node())
      l.cost = link_cost::network(), l.source = link_source::across_nodes;
    out.push_back(l);
  }
  return out;
}

/// The plan model of mesh for a tensor of extents ext whose elements have element_bytes bytes:
/// mesh_links' costs, and the tensor (plan_redistribute(from, to, model)).
template <class Layout, class Comm, class E>
plan_model<Layout::ndim_with_aliases> plan_model_of(const device_mesh<Layout, Comm>& mesh, const E& ext,
                                                    tensor_index element_bytes) {
  plan_model<Layout::ndim_with_aliases> model{};
  const auto links = mesh_links(mesh);
  for (int d = 0; d < Layout::ndim; ++d) model.links[d] = links[static_cast<std::size_t>(d)].cost;
  return model.tensor(ext, element_bytes);
}

/// mesh_links as a table, one row per dim: name, group size, latency, bandwidth, source.
template <class Layout, class Comm>
std::string links_table(const device_mesh<Layout, Comm>& mesh) {
  std::string out = "dim      size  latency (us)  bandwidth (GB/s)  from\n";
  char row[160];
  for (const auto& l : mesh_links(mesh)) {
    std::snprintf(row, sizeof row, "%-8s %4d  %12.2f  %16.2f  %s\n", l.name.c_str(), l.size, l.cost.latency_us,
                  l.cost.gbytes_per_s, link_source_name(l.source));
    out += row;
  }
  return out;
}

}  // namespace devmesh
