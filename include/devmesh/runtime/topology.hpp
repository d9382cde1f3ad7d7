// devmesh/runtime/topology.hpp: the mesh against the machine (host only, no MPI, no iostreams).
//
//   auto t = dm::topology(m, node_of_rank);        // per dim: groups, intra-node, nodes spanned
//   std::cout << t;                                 // an aligned table, one row per dim
//   dm::check_intra_node<"tp">(m, node_of_rank);    // throws mesh_error with the table and a fix
//   auto map = dm::node_major_rank_map(m, node_of_rank, {"tp"});  // position -> world rank
//
// `node_of_rank[w]` is the node of world rank w (any ints; equal ints: the same node). A rank
// map (position -> world rank: PyTorch's mesh tensor flattened row-major) says which world
// rank sits at each position of the root mesh; without one, position p is world rank p.
// Every group is counted over the whole root (every submesh of a slice), so the answer is
// the same on every rank. On MPI, devmesh::mpi::node_of_ranks (mpi/node.hpp) finds the nodes.
//
// Node-major placement (JAX's create_hybrid_device_mesh): positions that share a group of
// any listed dim must share a node; they form blocks of B positions (devmesh's modes are
// disjoint digit groups, so all blocks have one size, B = the product of the distinct modes
// of the listed dims: tp=4 and cp=2 give 8, tp and its alias cp_tp give the alias's size).
// World ranks, ordered by node (nodes in order of their lowest world rank) then by world
// rank, are dealt to the blocks in order (blocks by their lowest position, positions
// ascending within a block). Every block then lies in one node exactly when every node's
// rank count is a multiple of B; that is the condition, so any listed dims are supported,
// innermost or not, and nodes of unequal sizes too when each is a multiple of B. When the
// listed dims are the innermost modes (their blocks are runs of consecutive positions), the
// map for block placement is the identity, and block placement needs no map at all.
#pragma once
#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iosfwd>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/basic_mesh.hpp"
#include "../core/diagnostics.hpp"
#include "../core/fixed_string.hpp"
#include "../core/print.hpp"
#include "layout_view.hpp"

namespace devmesh {

/// How the groups of one dim lie on the nodes.
struct dim_topology {
  std::string name;         ///< the dim's name
  int index = 0;            ///< its index (aliases come after the mesh's own dims)
  bool alias = false;       ///< true for an alias (index >= ndim)
  int size = 0;             ///< ranks per group: the dim's size
  int groups = 0;           ///< number of groups over the root's ranks (root_size / size)
  int crossing_groups = 0;  ///< groups whose ranks are on more than one node
  int max_nodes = 0;        ///< the most distinct nodes one group spans (1: within a node)

  /// True when every group of the dim stays within one node.
  bool intra_node() const { return crossing_groups == 0; }
};

/// Where a mesh's groups lie on the nodes: one entry per dim (aliases included, by index),
/// plus totals over the ranks of the mesh's root.
struct mesh_topology {
  int ranks = 0;               ///< ranks of the root mesh
  int nodes = 0;               ///< distinct nodes among them
  int min_ranks_per_node = 0;  ///< fewest ranks on one node
  int max_ranks_per_node = 0;  ///< most ranks on one node
  std::vector<dim_topology> dims;  ///< dims[d] is dim d (aliases after the mesh's own dims)

  /// The dim named `name`, or nullptr.
  const dim_topology* find(std::string_view name) const {
    for (const auto& d : dims)
      if (d.name == name) return &d;
    return nullptr;
  }
  /// The dim named `name`; an unknown name throws mesh_error listing the dims.
  const dim_topology& operator[](std::string_view name) const {
    if (const auto* d = find(name)) return *d;
    std::string msg = "devmesh: topology: unknown dim '" + std::string(name) + "'; the dims are: ";
    for (const auto& d : dims) msg += (&d == &dims.front() ? "" : ", ") + d.name;
    throw mesh_error(msg);
  }
};

namespace detail {

// Every function here is a template with an unused parameter (`template <class = void>`),
// not an inline function: its body compiles only in the files that ask for topology, not in
// every file that includes a backend (parse.hpp says why; device_mesh.hpp's
// topology_option is the other half).

/// The node of every position: node_of_rank[rank_map[p]] (rank_map empty: the identity,
/// and node_of_rank then has one entry per position). Throws mesh_error on a bad size or a
/// rank map that is not distinct world ranks in [0, node_of_rank.size()).
template <class = void>
[[gnu::cold, gnu::noinline]] std::vector<int> node_at_positions(std::span<const int> node_of_rank, std::span<const int> rank_map, int n) {
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

/// The nodes of a set of world ranks, in order of their lowest world rank: each node's id
/// and its world ranks, ascending.
struct node_list {
  std::vector<int> id;
  std::vector<std::vector<int>> ranks;
};
/// The nodes of world ranks `ranks` (empty: all of node_of_rank), as a node_list.
template <class = void>
[[gnu::cold, gnu::noinline]] node_list nodes_of(std::span<const int> node_of_rank, std::span<const int> ranks = {}) {
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

/// Node ids renumbered 0..k-1 (k distinct ids, in increasing order).
template <class = void>
std::vector<int> dense_node_ids(const std::vector<int>& node_at, int& count) {
  std::vector<int> ids = node_at;
  std::stable_sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  count = static_cast<int>(ids.size());
  std::vector<int> out(node_at.size());
  for (std::size_t p = 0; p < node_at.size(); ++p)
    out[p] = static_cast<int>(std::lower_bound(ids.begin(), ids.end(), node_at[p]) - ids.begin());
  return out;
}

/// Dim d's groups on the nodes (`dense`: the dense node id of every position), computed from
/// its modes: each group visited once, from its first position.
template <class = void>
[[gnu::cold, gnu::noinline]] dim_topology dim_on_nodes(const layout_view& v, int d, const std::vector<int>& dense, int nodes) {
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

/// The index of the dim named `name` among `names`; an unknown name throws mesh_error
/// listing the dims.
template <class = void>
int dim_index_of(const std::vector<std::string>& names, std::string_view name, std::string_view what) {
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

/// `dims` without repeats, in their first order.
template <class = void>
std::vector<int> unique_dims(const std::vector<int>& dims) {
  std::vector<int> out;
  for (int d : dims)
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  return out;
}

/// Indices of the dims named in `dims` (a range of things convertible to string_view)
/// among `names` (a layout_view's).
template <class Range>
std::vector<int> dim_indices(const std::vector<std::string>& names, const Range& dims, std::string_view what) {
  std::vector<int> out;
  for (const auto& n : dims) out.push_back(dim_index_of(names, std::string_view(n), what));
  return unique_dims(out);
}

/// 'tp' / 'tp' and 'cp' / 'dp', 'cp' and 'tp'.
template <class = void>
std::string quoted_dims(const layout_view& v, const std::vector<int>& dims) {
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

/// The positions that must share a node: those linked by a group of any of the dims, i.e.
/// those that differ only in the dims' modes (distinct modes are disjoint digit groups, so
/// every block has one size, the product of those modes). Listed block after block (blocks
/// by their lowest position, positions ascending within). `contiguous`: every block is a run
/// of consecutive positions starting at a multiple of `block` (the dims are innermost).
struct node_blocks {
  std::vector<int> order;
  int block = 1;
  bool contiguous = true;
};
/// The node_blocks of dims `dims` of mesh v.
template <class = void>
[[gnu::cold, gnu::noinline]] node_blocks blocks_of(const layout_view& v, const std::vector<int>& dims) {
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

/// "" when world ranks can be dealt to blocks of `block` positions so that each block is on
/// one node (every node's rank count a multiple of `block`); else why not. `dims` names the
/// dims (quoted_dims); `several`: more than one.
template <class = void>
[[gnu::cold, gnu::noinline]] std::string placement_obstacle(const node_list& nodes, int block, const std::string& dims, bool several) {
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

/// node_major_rank_map over dim indices; `what` names the caller in messages.
template <class = void>
[[gnu::cold, gnu::noinline]] std::vector<int> node_major_map(const layout_view& m, std::span<const int> node_of_rank,
                                       const std::vector<int>& dims, std::string_view what = "node_major_rank_map") {
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

/// topology() of a layout_view.
template <class = void>
[[gnu::cold, gnu::noinline]] mesh_topology topology_of(const layout_view& v, std::span<const int> node_of_rank, std::span<const int> rank_map) {
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

/// A range of dim names given at run time: `std::vector<std::string>`,
/// `std::span<const std::string_view>`, ... (a braced list `{"tp", "cp"}` has overloads of its own).
template <class R>
concept dim_name_range = requires(R& r) { std::ranges::end(r); } &&  // std::ranges::input_range, without <ranges>
                         std::input_iterator<decltype(std::ranges::begin(std::declval<R&>()))> &&
                         std::convertible_to<std::iter_reference_t<decltype(std::ranges::begin(std::declval<R&>()))>,
                                             std::string_view>;

/// Where the groups of every dim of m (aliases included) lie on the nodes. node_of_rank[w]
/// is the node of world rank w (any ints); rank_map[p] the world rank at position p of the
/// root (empty: position p is world rank p, and node_of_rank has root_size() entries).
/// Throws mesh_error on sizes that do not match or a rank map with repeated or out-of-range
/// ranks. O(root_size() x dims), host only.
template <auto L, class Names>
mesh_topology topology(const basic_mesh<L, Names>& m, std::span<const int> node_of_rank,
                       std::span<const int> rank_map = {}) {
  return detail::topology_of(detail::view_of(m), node_of_rank, rank_map);
}

/// The topology as an aligned table, one row per dim, after a line of totals:
///   8 ranks on 2 nodes, 4 ranks per node
///   dim  size  groups  intra-node  max nodes/group  crossing groups
///   dp   2     4       no          2                4
///   tp   4     2       yes         1                0
template <class = void>
[[gnu::cold, gnu::noinline]] std::string to_string(const mesh_topology& t) {
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

/// Streams the topology table (to_string(t)).
template <class Char, class Traits>
std::basic_ostream<Char, Traits>& operator<<(std::basic_ostream<Char, Traits>& os, const mesh_topology& t) {
  return os << to_string(t);
}

/// Node-major placement (JAX's create_hybrid_device_mesh): a rank map, position -> world
/// rank (root_size() entries, a permutation of [0, root_size())), under which every group of
/// each dim in `intra_node_dims` lies within one node, whatever order the launcher gave the
/// ranks (block, round-robin, shuffled). node_of_rank has one node id per world rank (the
/// world is the root mesh). Identical inputs give the identical map on every rank. Throws
/// mesh_error when no placement exists: the blocks of ranks those dims keep together
/// (B ranks: the product of their distinct modes) do not fit the nodes, i.e. some node's
/// rank count is not a multiple of B (tp=8 on nodes of 4; nodes of 5 and 3 with tp=4).
/// See the header comment for the order used.
template <auto L, class Names, dim_name_range Range>
std::vector<int> node_major_rank_map(const basic_mesh<L, Names>& m, std::span<const int> node_of_rank,
                                     const Range& intra_node_dims) {
  const detail::layout_view v = detail::view_of(m);
  return detail::node_major_map(v, node_of_rank, detail::dim_indices(v.names, intra_node_dims, "node_major_rank_map"));
}
/// node_major_rank_map with the dims as a braced list: `node_major_rank_map(m, nodes, {"tp"})`.
template <auto L, class Names>
std::vector<int> node_major_rank_map(const basic_mesh<L, Names>& m, std::span<const int> node_of_rank,
                                     std::initializer_list<std::string_view> intra_node_dims) {
  const detail::layout_view v = detail::view_of(m);
  return detail::node_major_map(v, node_of_rank, detail::dim_indices(v.names, intra_node_dims, "node_major_rank_map"));
}
/// node_major_rank_map with compile-time names: `node_major_rank_map<"tp", "cp">(m, nodes)`.
template <fixed_string... Ns, auto L, class Names>
  requires(sizeof...(Ns) > 0)
std::vector<int> node_major_rank_map(const basic_mesh<L, Names>& m, std::span<const int> node_of_rank) {
  using M = basic_mesh<L, Names>;
  return detail::node_major_map(detail::view_of(m), node_of_rank, detail::unique_dims({M::template dim_index<Ns>()...}));
}

namespace detail {

/// What fixes a failed intra-node requirement on dims `dims`: block placement, node-major
/// placement, or nothing (and why). `node_major_how` says how to get node-major placement
/// (empty: call node_major_rank_map; init_device_mesh names its option instead).
template <class = void>
[[gnu::cold, gnu::noinline]] std::string intra_node_fix(const layout_view& m, std::span<const int> node_of_rank,
                                  std::span<const int> rank_map, const std::vector<int>& dims,
                                  std::string_view node_major_how = {}) {
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

/// check_intra_node over dim indices.
template <class = void>
[[gnu::cold, gnu::noinline]] mesh_topology check_intra_node(const layout_view& m, std::span<const int> node_of_rank,
                                      const std::vector<int>& dims, std::span<const int> rank_map,
                                      std::string_view node_major_how = {}) {
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

}  // namespace detail

/// Requires every group of each dim in `intra_node_dims` to lie within one node; returns the
/// topology. Otherwise throws mesh_error whose message names the offending dims, holds the
/// topology table and says what fixes it: block placement (when the dims are innermost),
/// node_major_rank_map, or, when no placement can, why not (e.g. tp=8 on nodes of 4 ranks).
/// An unknown name throws mesh_error listing the dims. Arguments as for topology().
template <auto L, class Names, dim_name_range Range>
mesh_topology check_intra_node(const basic_mesh<L, Names>& m, std::span<const int> node_of_rank,
                               const Range& intra_node_dims, std::span<const int> rank_map = {}) {
  const detail::layout_view v = detail::view_of(m);
  return detail::check_intra_node(v, node_of_rank, detail::dim_indices(v.names, intra_node_dims, "check_intra_node"),
                                  rank_map);
}
/// check_intra_node with the dims as a braced list: `check_intra_node(m, nodes, {"tp"})`.
template <auto L, class Names>
mesh_topology check_intra_node(const basic_mesh<L, Names>& m, std::span<const int> node_of_rank,
                               std::initializer_list<std::string_view> intra_node_dims,
                               std::span<const int> rank_map = {}) {
  const detail::layout_view v = detail::view_of(m);
  return detail::check_intra_node(v, node_of_rank, detail::dim_indices(v.names, intra_node_dims, "check_intra_node"),
                                  rank_map);
}
/// check_intra_node with compile-time names (an unknown name does not compile):
/// `check_intra_node<"tp">(m, nodes)` or `check_intra_node<"tp">(m, nodes, rank_map)`.
template <fixed_string... Ns, auto L, class Names>
  requires(sizeof...(Ns) > 0)
mesh_topology check_intra_node(const basic_mesh<L, Names>& m, std::span<const int> node_of_rank,
                               std::span<const int> rank_map = {}) {
  using M = basic_mesh<L, Names>;
  return detail::check_intra_node(detail::view_of(m), node_of_rank, detail::unique_dims({M::template dim_index<Ns>()...}),
                                  rank_map);
}

namespace detail {

/// DEVMESH_NODE_ID, read now: `id` -1 when unset or empty, else the node id (>= 0); a value
/// that is not a decimal integer in [0, INT_MAX] leaves `id` -1 and says why in `error`.
/// Backend-neutral: every backend's node discovery (mpi/node.hpp, nccl/node.hpp) uses it.
struct node_override {
  int id = -1;
  std::string error;
};
/// DEVMESH_NODE_ID of this process, parsed (see node_override).
template <class = void>
node_override node_id_from_env() {
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

/// One rank's node as a backend found it: (kind, value). Equal keys are one node. Kinds:
/// 0 the machine by the lowest rank on it (MPI), 1 DEVMESH_NODE_ID, 2 a host-name digest.
/// A rank with DEVMESH_NODE_ID and one without never share a node (their kinds differ).
using node_key = std::array<std::int64_t, 2>;

/// Every rank's node key, renumbered 0..n-1 in order of each node's lowest rank. O(n log n):
/// the ranks sorted by key (stably, so each node's first is its lowest rank), each rank
/// pointed at that rank, then the lowest ranks numbered in rank order.
template <class = void>
std::vector<int> number_nodes(const std::vector<node_key>& keys) {
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
