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
//
// Compiled once (runtime/impl/topology.ipp): the functions over a layout_view; the typed
// forms below turn a mesh into its view and the dims into indices, and call them.
#pragma once
#include <array>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../core/basic_mesh.hpp"
#include "../core/config.hpp"
#include "../core/fixed_string.hpp"
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
  DEVMESH_DECL const dim_topology* find(std::string_view name) const;
  /// The dim named `name`; an unknown name throws mesh_error listing the dims.
  DEVMESH_DECL const dim_topology& operator[](std::string_view name) const;
};

namespace detail {

/// The node of every position: node_of_rank[rank_map[p]] (rank_map empty: the identity,
/// and node_of_rank then has one entry per position). Throws mesh_error on a bad size or a
/// rank map that is not distinct world ranks in [0, node_of_rank.size()).
[[gnu::cold]] DEVMESH_DECL std::vector<int> node_at_positions(std::span<const int> node_of_rank,
                                                              std::span<const int> rank_map, int n);

/// The nodes of a set of world ranks, in order of their lowest world rank: each node's id
/// and its world ranks, ascending.
struct node_list {
  std::vector<int> id;
  std::vector<std::vector<int>> ranks;
};
/// The nodes of world ranks `ranks` (empty: all of node_of_rank), as a node_list.
[[gnu::cold]] DEVMESH_DECL node_list nodes_of(std::span<const int> node_of_rank, std::span<const int> ranks = {});

/// Node ids renumbered 0..k-1 (k distinct ids, in increasing order).
DEVMESH_DECL std::vector<int> dense_node_ids(const std::vector<int>& node_at, int& count);

/// Dim d's groups on the nodes (`dense`: the dense node id of every position), computed from
/// its modes: each group visited once, from its first position.
[[gnu::cold]] DEVMESH_DECL dim_topology dim_on_nodes(const layout_view& v, int d, const std::vector<int>& dense,
                                                     int nodes);

/// The index of the dim named `name` among `names`; an unknown name throws mesh_error
/// listing the dims.
DEVMESH_DECL int dim_index_of(const std::vector<std::string>& names, std::string_view name, std::string_view what);

/// `dims` without repeats, in their first order.
DEVMESH_DECL std::vector<int> unique_dims(const std::vector<int>& dims);

/// Indices of the dims named in `dims` among `names` (a layout_view's), without repeats;
/// `what` names the caller in the message of an unknown name.
DEVMESH_DECL std::vector<int> dim_indices(const std::vector<std::string>& names, std::span<const std::string_view> dims,
                                          std::string_view what);
/// The same, the names held as strings (options.intra_node).
DEVMESH_DECL std::vector<int> dim_indices(const std::vector<std::string>& names, const std::vector<std::string>& dims,
                                          std::string_view what);

/// 'tp' / 'tp' and 'cp' / 'dp', 'cp' and 'tp'.
DEVMESH_DECL std::string quoted_dims(const layout_view& v, const std::vector<int>& dims);

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
[[gnu::cold]] DEVMESH_DECL node_blocks blocks_of(const layout_view& v, const std::vector<int>& dims);

/// "" when world ranks can be dealt to blocks of `block` positions so that each block is on
/// one node (every node's rank count a multiple of `block`); else why not. `dims` names the
/// dims (quoted_dims); `several`: more than one.
[[gnu::cold]] DEVMESH_DECL std::string placement_obstacle(const node_list& nodes, int block, const std::string& dims,
                                                          bool several);

/// node_major_rank_map over dim indices; `what` names the caller in messages.
[[gnu::cold]] DEVMESH_DECL std::vector<int> node_major_map(const layout_view& m, std::span<const int> node_of_rank,
                                                           const std::vector<int>& dims,
                                                           std::string_view what = "node_major_rank_map");

/// topology() of a layout_view.
[[gnu::cold]] DEVMESH_DECL mesh_topology topology_of(const layout_view& v, std::span<const int> node_of_rank,
                                                     std::span<const int> rank_map);

}  // namespace detail

/// A range of dim names given at run time: `std::vector<std::string>`,
/// `std::span<const std::string_view>`, ... (a braced list `{"tp", "cp"}` has overloads of its own).
template <class R>
concept dim_name_range = requires(R& r) { std::ranges::end(r); } &&  // std::ranges::input_range, without <ranges>
                         std::input_iterator<decltype(std::ranges::begin(std::declval<R&>()))> &&
                         std::convertible_to<std::iter_reference_t<decltype(std::ranges::begin(std::declval<R&>()))>,
                                             std::string_view>;

namespace detail {
/// The dims of a dim_name_range as views, for dim_indices.
template <dim_name_range Range>
std::vector<std::string_view> dim_names_of(const Range& dims) {
  std::vector<std::string_view> out;
  for (const auto& n : dims) out.emplace_back(n);
  return out;
}
}  // namespace detail

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
[[gnu::cold]] DEVMESH_DECL std::string to_string(const mesh_topology& t);

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
  return detail::node_major_map(
      v, node_of_rank, detail::dim_indices(v.names, detail::dim_names_of(intra_node_dims), "node_major_rank_map"));
}
/// node_major_rank_map with the dims as a braced list: `node_major_rank_map(m, nodes, {"tp"})`.
template <auto L, class Names>
std::vector<int> node_major_rank_map(const basic_mesh<L, Names>& m, std::span<const int> node_of_rank,
                                     std::initializer_list<std::string_view> intra_node_dims) {
  const detail::layout_view v = detail::view_of(m);
  return detail::node_major_map(
      v, node_of_rank,
      detail::dim_indices(v.names, {intra_node_dims.begin(), intra_node_dims.size()}, "node_major_rank_map"));
}
/// node_major_rank_map with compile-time names: `node_major_rank_map<"tp", "cp">(m, nodes)`.
template <fixed_string... Ns, auto L, class Names>
  requires(sizeof...(Ns) > 0)
std::vector<int> node_major_rank_map(const basic_mesh<L, Names>& m, std::span<const int> node_of_rank) {
  using M = basic_mesh<L, Names>;
  return detail::node_major_map(detail::view_of(m), node_of_rank,
                                detail::unique_dims({M::template dim_index<Ns>()...}));
  }

namespace detail {

/// What fixes a failed intra-node requirement on dims `dims`: block placement, node-major
/// placement, or nothing (and why). `node_major_how` says how to get node-major placement
/// (empty: call node_major_rank_map; init_device_mesh names its option instead).
[[gnu::cold]] DEVMESH_DECL std::string intra_node_fix(const layout_view& m, std::span<const int> node_of_rank,
                                                      std::span<const int> rank_map, const std::vector<int>& dims,
                                                      std::string_view node_major_how = {});

/// check_intra_node over dim indices.
[[gnu::cold]] DEVMESH_DECL mesh_topology check_intra_node(const layout_view& m, std::span<const int> node_of_rank,
                                                          const std::vector<int>& dims, std::span<const int> rank_map,
                                                          std::string_view node_major_how = {});

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
  return detail::check_intra_node(
      v, node_of_rank, detail::dim_indices(v.names, detail::dim_names_of(intra_node_dims), "check_intra_node"),
      rank_map);
}
/// check_intra_node with the dims as a braced list: `check_intra_node(m, nodes, {"tp"})`.
template <auto L, class Names>
mesh_topology check_intra_node(const basic_mesh<L, Names>& m, std::span<const int> node_of_rank,
                               std::initializer_list<std::string_view> intra_node_dims,
                               std::span<const int> rank_map = {}) {
  const detail::layout_view v = detail::view_of(m);
  return detail::check_intra_node(
      v, node_of_rank,
      detail::dim_indices(v.names, {intra_node_dims.begin(), intra_node_dims.size()}, "check_intra_node"), rank_map);
}
/// check_intra_node with compile-time names (an unknown name does not compile):
/// `check_intra_node<"tp">(m, nodes)` or `check_intra_node<"tp">(m, nodes, rank_map)`.
template <fixed_string... Ns, auto L, class Names>
  requires(sizeof...(Ns) > 0)
mesh_topology check_intra_node(const basic_mesh<L, Names>& m, std::span<const int> node_of_rank,
                               std::span<const int> rank_map = {}) {
  using M = basic_mesh<L, Names>;
  return detail::check_intra_node(detail::view_of(m), node_of_rank,
                                  detail::unique_dims({M::template dim_index<Ns>()...}), rank_map);
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
DEVMESH_DECL node_override node_id_from_env();

/// One rank's node as a backend found it: (kind, value). Equal keys are one node. Kinds:
/// 0 the machine by the lowest rank on it (MPI), 1 DEVMESH_NODE_ID, 2 a host-name digest.
/// A rank with DEVMESH_NODE_ID and one without never share a node (their kinds differ).
using node_key = std::array<std::int64_t, 2>;

/// Every rank's node key, renumbered 0..n-1 in order of each node's lowest rank. O(n log n):
/// the ranks sorted by key (stably, so each node's first is its lowest rank), each rank
/// pointed at that rank, then the lowest ranks numbered in rank order.
DEVMESH_DECL std::vector<int> number_nodes(const std::vector<node_key>& keys);

}  // namespace detail

}  // namespace devmesh

#if DEVMESH_HEADER_ONLY
#include "impl/topology.ipp"
#endif
