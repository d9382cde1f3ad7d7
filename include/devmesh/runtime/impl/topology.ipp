// devmesh/runtime/impl/topology.ipp: topology.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../../core/diagnostics.hpp"
#include "../../core/print.hpp"
#include "../topology.hpp"

namespace devmesh {

DEVMESH_DECL const dim_topology* mesh_topology::find(std::string_view name) const {
  for (const auto& d : dims)
    if (d.name == name) return &d;
  return nullptr;
}

DEVMESH_DECL const dim_topology& mesh_topology::operator[](std::string_view name) const {
  if (const auto* d = find(name)) return *d;
  std::string msg = "devmesh: topology: unknown dim '" + std::string(name) + "'; the dims are: ";
  for (const auto& d : dims) msg += (&d == &dims.front() ? "" : ", ") + d.name;
  throw mesh_error(msg);
}

namespace detail {

DEVMESH_DECL std::vector<int> node_at_positions(std::span<const int> node_of_rank, std::span<const int> rank_map,
                                                int n) {
  const auto nodes = static_cast<int>(node_of_rank.size());
  if (rank_map.empty()) {
    if (nodes != n)
      throw mesh_error("devmesh: topology: node_of_rank has " + std::to_string(nodes) +
                       " entries, the mesh's root has " + std::to_string(n) + " ranks (one node id per rank)");
    return {node_of_rank.begin(), node_of_rank.end()};
  }
  if (static_cast<int>(rank_map.size()) != n)
    throw mesh_error("devmesh: topology: the rank map has " + std::to_string(rank_map.size()) +
                     " entries, the mesh's root has " + std::to_string(n) + " positions");
  std::vector<char> seen(node_of_rank.size(), 0);
  std::vector<int> out(static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p) {
    const int w = rank_map[static_cast<std::size_t>(p)];
    if (w < 0 || w >= nodes || seen[static_cast<std::size_t>(w)])
      throw mesh_error("devmesh: topology: the rank map is not a list of distinct world ranks in [0, " +
                       std::to_string(nodes) + "): position " + std::to_string(p) + " has world rank " +
                       std::to_string(w) + (w >= 0 && w < nodes ? " again" : ""));
    seen[static_cast<std::size_t>(w)] = 1;
    out[static_cast<std::size_t>(p)] = node_of_rank[static_cast<std::size_t>(w)];
  }
  return out;
}

DEVMESH_DECL node_list nodes_of(std::span<const int> node_of_rank, std::span<const int> ranks) {
  std::vector<int> world(ranks.begin(), ranks.end());
  if (ranks.empty()) {
    world.resize(node_of_rank.size());
    for (std::size_t w = 0; w < world.size(); ++w) world[w] = static_cast<int>(w);
  }
  std::stable_sort(world.begin(), world.end());
  std::vector<int> ids(node_of_rank.begin(), node_of_rank.end());
  std::stable_sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<int> slot(ids.size(), -1);  // dense id -> index in the node_list
  node_list out;
  for (int w : world) {
    const int node = node_of_rank[static_cast<std::size_t>(w)];
    const auto k = static_cast<std::size_t>(std::lower_bound(ids.begin(), ids.end(), node) - ids.begin());
    if (slot[k] < 0) {
      slot[k] = static_cast<int>(out.id.size());
      out.id.push_back(node);
      out.ranks.emplace_back();
    }
    out.ranks[static_cast<std::size_t>(slot[k])].push_back(w);
  }
  return out;
}

DEVMESH_DECL std::vector<int> dense_node_ids(const std::vector<int>& node_at, int& count) {
  std::vector<int> ids = node_at;
  std::stable_sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  count = static_cast<int>(ids.size());
  std::vector<int> out(node_at.size());
  for (std::size_t p = 0; p < node_at.size(); ++p)
    out[p] = static_cast<int>(std::lower_bound(ids.begin(), ids.end(), node_at[p]) - ids.begin());
  return out;
}

DEVMESH_DECL dim_topology dim_on_nodes(const layout_view& v, int d, const std::vector<int>& dense, int nodes) {
  dim_topology t;
  t.name = v.names[static_cast<std::size_t>(d)];
  t.index = d;
  t.alias = d >= v.ndim;
  t.size = v.size(d);
  const mode_set group = modes_of(v, {d}, false);
  std::vector<int> stamp(static_cast<std::size_t>(nodes), -1);
  for (int first = 0; first < v.root_size; ++first) {
    if (group.base(first) != first) continue;
    int distinct = 0;
    for (int i = 0; i < t.size; ++i) {
      auto& seen = stamp[static_cast<std::size_t>(dense[static_cast<std::size_t>(first + group.offset(i))])];
      if (seen != t.groups) seen = t.groups, ++distinct;
    }
    ++t.groups;
    t.max_nodes = std::max(t.max_nodes, distinct);
    if (distinct > 1) ++t.crossing_groups;
  }
  return t;
}

DEVMESH_DECL int dim_index_of(const std::vector<std::string>& names, std::string_view name, std::string_view what) {
  for (std::size_t d = 0; d < names.size(); ++d)
    if (names[d] == name) return static_cast<int>(d);
  std::string msg = "devmesh: ";
  msg += what;
  msg += ": unknown dim '";
  msg += name;
  msg += "'; the mesh's dims are: ";
  for (std::size_t d = 0; d < names.size(); ++d) {
    if (d) msg += ", ";
    msg += names[d];
  }
  throw mesh_error(msg);
}

DEVMESH_DECL std::vector<int> unique_dims(const std::vector<int>& dims) {
  std::vector<int> out;
  for (int d : dims)
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  return out;
}

DEVMESH_DECL std::vector<int> dim_indices(const std::vector<std::string>& names, std::span<const std::string_view> dims,
                                          std::string_view what) {
  std::vector<int> out;
  for (std::string_view n : dims) out.push_back(dim_index_of(names, n, what));
  return unique_dims(out);
}

DEVMESH_DECL std::vector<int> dim_indices(const std::vector<std::string>& names, const std::vector<std::string>& dims,
                                          std::string_view what) {
  const std::vector<std::string_view> views(dims.begin(), dims.end());
  return dim_indices(names, views, what);
}

DEVMESH_DECL std::string quoted_dims(const layout_view& v, const std::vector<int>& dims) {
  std::string s;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) s += i + 1 == dims.size() ? " and " : ", ";
    // Appends, not "'" + std::string: that trips g++ 12's -Wrestrict false positive at -O2.
    s += '\'';
    s += v.names[static_cast<std::size_t>(dims[i])];
    s += '\'';
  }
  return s;
}

DEVMESH_DECL node_blocks blocks_of(const layout_view& v, const std::vector<int>& dims) {
  const mode_set modes = modes_of(v, dims, true);  // most significant first: ascending positions
  node_blocks out;
  out.block = modes.size();
  for (int first = 0; first < v.root_size; ++first) {
    if (modes.base(first) != first) continue;
    for (int i = 0; i < out.block; ++i) out.order.push_back(first + modes.offset(i));
  }
  for (int p = 0; p < v.root_size; ++p) out.contiguous = out.contiguous && out.order[static_cast<std::size_t>(p)] == p;
  return out;
}

DEVMESH_DECL std::string placement_obstacle(const node_list& nodes, int block, const std::string& dims, bool several) {
  std::size_t lo = nodes.ranks.front().size(), hi = lo;
  for (const auto& r : nodes.ranks) lo = std::min(lo, r.size()), hi = std::max(hi, r.size());
  const auto b = static_cast<std::size_t>(block);
  const std::string what = "the ranks that the groups of " + dims + " keep together come in blocks of " +
                           std::to_string(block);
  const std::string group = several ? "the groups of " + dims + " together link " : "a group of " + dims + " has ";
  if (lo == hi && hi % b != 0)
    return block > static_cast<int>(hi)
               ? group + std::to_string(block) + " ranks, more than the " + std::to_string(hi) + " ranks of a node"
               : what + ", which does not divide the " + std::to_string(hi) + " ranks per node";
  for (std::size_t k = 0; k < nodes.ranks.size(); ++k)
    if (nodes.ranks[k].size() % b != 0)
      return what + ", and the nodes have unequal rank counts (" + std::to_string(lo) + " to " + std::to_string(hi) +
             "): node " + std::to_string(nodes.id[k]) + " (world ranks " + rank_ranges(nodes.ranks[k]) +
             ") has " + std::to_string(nodes.ranks[k].size()) + ", not a multiple of " + std::to_string(block);
  return {};
}

DEVMESH_DECL std::vector<int> node_major_map(const layout_view& m, std::span<const int> node_of_rank,
                                             const std::vector<int>& dims, std::string_view what) {
  const int n = m.root_size;
  std::string here = "devmesh: ";  // appends: operator+ chains trip g++ 12's -Wrestrict at -O2
  here += what;
  here += ": ";
  if (static_cast<int>(node_of_rank.size()) != n)
    throw mesh_error(here + "node_of_rank has " + std::to_string(node_of_rank.size()) +
                     " entries, the mesh's root has " + std::to_string(n) + " ranks (one node id per world rank)");
  const node_blocks blocks = blocks_of(m, dims);
  const node_list nodes = nodes_of(node_of_rank);
  const std::string why = placement_obstacle(nodes, blocks.block, quoted_dims(m, dims), dims.size() > 1);
  if (!why.empty())
    throw mesh_error(here + "no placement of the ranks keeps " + quoted_dims(m, dims) + " within nodes: " + why);
  std::vector<int> map(static_cast<std::size_t>(n));
  std::size_t i = 0;
  for (const auto& ranks : nodes.ranks)
    for (int w : ranks) map[static_cast<std::size_t>(blocks.order[i++])] = w;
  return map;
}

DEVMESH_DECL mesh_topology topology_of(const layout_view& v, std::span<const int> node_of_rank,
                                       std::span<const int> rank_map) {
  const std::vector<int> node_at = node_at_positions(node_of_rank, rank_map, v.root_size);
  mesh_topology t;
  t.ranks = v.root_size;
  const std::vector<int> dense = dense_node_ids(node_at, t.nodes);
  std::vector<int> count(static_cast<std::size_t>(t.nodes), 0);
  for (int k : dense) ++count[static_cast<std::size_t>(k)];
  t.min_ranks_per_node = *std::min_element(count.begin(), count.end());
  t.max_ranks_per_node = *std::max_element(count.begin(), count.end());
  for (int d = 0; d < static_cast<int>(v.names.size()); ++d) t.dims.push_back(dim_on_nodes(v, d, dense, t.nodes));
  return t;
}

}  // namespace detail

DEVMESH_DECL std::string to_string(const mesh_topology& t) {
  // The cells row by row, in one vector<string>: cheaper to compile than rows of arrays.
  constexpr std::size_t columns = 6;
  std::vector<std::string> cells = {"dim", "size", "groups", "intra-node", "max nodes/group", "crossing groups"};
  for (const auto& d : t.dims) {
    cells.push_back(d.name + (d.alias ? " (alias)" : ""));
    cells.push_back(std::to_string(d.size));
    cells.push_back(std::to_string(d.groups));
    cells.push_back(d.intra_node() ? "yes" : "no");
    cells.push_back(std::to_string(d.max_nodes));
    cells.push_back(std::to_string(d.crossing_groups));
  }
  std::array<std::size_t, columns> width{};
  for (std::size_t i = 0; i < cells.size(); ++i) width[i % columns] = std::max(width[i % columns], cells[i].size());
  std::string s = std::to_string(t.ranks) + (t.ranks == 1 ? " rank on " : " ranks on ") + std::to_string(t.nodes) +
                  (t.nodes == 1 ? " node, " : " nodes, ") + std::to_string(t.min_ranks_per_node);
  if (t.max_ranks_per_node != t.min_ranks_per_node) s += " to " + std::to_string(t.max_ranks_per_node);
  s += t.max_ranks_per_node == 1 ? " rank per node\n" : " ranks per node\n";
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::size_t c = i % columns;
    s += cells[i];
    if (c + 1 < columns)
      s.append(width[c] - cells[i].size() + 2, ' ');
    else
      s += '\n';
  }
  return s;
}

namespace detail {

DEVMESH_DECL std::string intra_node_fix(const layout_view& m, std::span<const int> node_of_rank,
                                        std::span<const int> rank_map, const std::vector<int>& dims,
                                        std::string_view node_major_how) {
  const node_blocks blocks = blocks_of(m, dims);
  const std::string names = quoted_dims(m, dims);
  const std::string why = placement_obstacle(nodes_of(node_of_rank, rank_map), blocks.block, names, dims.size() > 1);
  if (!why.empty())
    return "No placement of the ranks can keep " + names + " within nodes: " + why +
           ". Make these dims smaller (their groups must fit in a node), or use nodes with more ranks.";
  std::string call = "devmesh::node_major_rank_map(mesh, node_of_rank, {";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    call += i ? ", \"" : "\"";
    call += m.names[static_cast<std::size_t>(dims[i])];
    call += '"';
  }
  call += "})";
  std::string node_major = "use node-major placement: ";
  if (node_major_how.empty())
    node_major += call + " gives a rank map (position -> world rank) that keeps these dims within nodes "
                         "whatever order the launcher gave the ranks";
  else
    node_major += node_major_how;
  if (blocks.contiguous)
    return "Fix: launch with the ranks grouped by node (block placement: consecutive world ranks on one node, e.g. "
           "mpirun --map-by slot or --map-by core, srun --distribution=block), or " +
           node_major + ".";
  return "Fix: " + node_major + ". Block placement alone is not enough with this layout: the groups of " + names +
         " are not runs of consecutive ranks (reorder the mesh's dims to make them the innermost, last ones, to "
         "get that).";
}

DEVMESH_DECL mesh_topology check_intra_node(const layout_view& m, std::span<const int> node_of_rank,
                                            const std::vector<int>& dims, std::span<const int> rank_map,
                                            std::string_view node_major_how) {
  mesh_topology t = topology_of(m, node_of_rank, rank_map);
  std::string bad;
  for (int d : dims) {
    const dim_topology& x = t.dims[static_cast<std::size_t>(d)];
    if (x.intra_node()) continue;
    bad += (bad.empty() ? "" : "; ") + std::string("the groups of '") + x.name + "' span up to " +
           std::to_string(x.max_nodes) + " nodes (" + std::to_string(x.crossing_groups) + " of " +
           std::to_string(x.groups) + (x.crossing_groups == 1 ? " groups crosses nodes)" : " groups cross nodes)");
  }
  if (bad.empty()) return t;
  throw mesh_error("devmesh: intra-node requirement not met: " + bad + ".\n" + to_string(t) +
                   intra_node_fix(m, node_of_rank, rank_map, dims, node_major_how));
}

DEVMESH_DECL node_override node_id_from_env() {
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

DEVMESH_DECL std::vector<int> number_nodes(const std::vector<node_key>& keys) {
  const int n = static_cast<int>(keys.size());
  std::vector<int> by_key(keys.size()), out(keys.size()), id(keys.size(), -1);
  for (int r = 0; r < n; ++r) by_key[static_cast<std::size_t>(r)] = r;
  const auto key = [&](int r) -> const node_key& { return keys[static_cast<std::size_t>(r)]; };
  std::stable_sort(by_key.begin(), by_key.end(), [&](int a, int b) { return key(a) < key(b); });
  for (std::size_t i = 0; i < by_key.size(); ++i) {
    const bool first = i == 0 || key(by_key[i - 1]) != key(by_key[i]);
    out[static_cast<std::size_t>(by_key[i])] = first ? by_key[i] : out[static_cast<std::size_t>(by_key[i - 1])];
  }
  int next = 0;
  for (int r = 0; r < n; ++r)
    if (out[static_cast<std::size_t>(r)] == r) id[static_cast<std::size_t>(r)] = next++;
  for (auto& o : out) o = id[static_cast<std::size_t>(o)];
  return out;
}

}  // namespace detail
}  // namespace devmesh
