// devmesh/runtime/device_mesh.hpp: a mesh layout bound to one communicator per dim (PyTorch's
// DeviceMesh), generic over any backend that models devmesh::communicator.
//
//   auto mesh = dm::init_device_mesh<mesh3d>(world);   // collective over world
//   mesh.all_reduce<"dp">(std::span(grad), dm::op::sum);
//
// A device_mesh is a cheap copyable handle: its layout value (the core basic_mesh) plus a
// shared_ptr to the state of the root it came from: the world communicator and a cache of
// communicators keyed by a dim's *group function* (its coalesced layout, which two dims
// share exactly when they have the same groups in the same order).
// Slices share the cache and never create; flatten/unflatten create only the missing
// communicators (one split per new dim per rank, color and key from the core's
// comm_split), so flattening twice creates nothing. The communicators die with the last
// handle, in reverse creation order, the world last.
//
// This header uses only what backend.hpp specifies: no MPI or NCCL call lives here.
#pragma once
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "backend.hpp"
#include "collective_check.hpp"
#include "../core/config.hpp"
#include "consensus.hpp"
#include "deadline.hpp"
#include "../core/diagnostics.hpp"
#include "../core/dim.hpp"
#include "../core/fixed_string.hpp"
#include "../core/mesh.hpp"
#include "../core/print.hpp"
#include "topology.hpp"

namespace devmesh {

namespace detail {
/// One address per layout type: what device_mesh::root<M>() compares (no RTTI needed).
template <class Layout>
inline constexpr char layout_tag = 0;
template <communicator Comm>
struct mesh_state;
/// Init's topology step (node discovery, node-major placement, the intra_node check) for
/// `view`, the layout as plain data; returns the rank map to use.
template <communicator Comm>
using topology_step = std::vector<int> (*)(mesh_state<Comm>&, const layout_view& view, std::string_view step,
                                           const deadline&);
template <communicator Comm>
std::vector<int> settle_topology(mesh_state<Comm>&, const layout_view&, std::string_view, const deadline&);
}  // namespace detail

/// A topology option of device_mesh_options (topology, intra_node, node_major): a value of
/// type T, read as a T, that also carries init's topology step once it is set. So only a
/// file that sets one compiles node discovery and placement, not every file that calls
/// init_device_mesh (about 1 s of g++ each at -O0: docs/topology.md).
template <communicator Comm, class T>
class topology_option {
  T value_{};
  detail::topology_step<Comm> step_ = nullptr;

 public:
  /// Unset: T's default, no topology step.
  topology_option() = default;
  /// Set to v (options{.topology = true}).
  topology_option(T v) : value_(std::move(v)), step_(&detail::settle_topology<Comm>) {}  // NOLINT: implicit
  /// Sets it to v (options.intra_node = {"tp"}).
  topology_option& operator=(T v) {
    value_ = std::move(v);
    step_ = &detail::settle_topology<Comm>;
    return *this;
  }
  /// The value.
  const T& value() const { return value_; }
  /// The value, where a T is expected.
  operator const T&() const { return value_; }  // NOLINT: implicit by design
  /// Init's topology step, once the option was set (null before).
  detail::topology_step<Comm> step() const { return step_; }
};

/// How a device mesh creates its communicators, and the runtime contract's knobs.
///   options.per_dim["tp"] = ...;        // backend options of one dim (by name; aliases too)
///   options.lazy = true;                // create each dim's communicator on first use
///   options.timeout = 30s;              // bound of devmesh's own collective steps
///   options.check_collectives = true;   // every collective checks its arguments first
///   options.rank_map = {4, 5, 6, 7};    // position -> world rank (PyTorch's mesh tensor)
///   options.intra_node = {"tp"};        // every tp group within one node, checked at init
///   options.node_major = true;          // and a rank map that makes it so
template <communicator Comm>
struct device_mesh_options {
  using comm_options = typename Comm::options_type;
  /// Options of every dim that has no entry in per_dim.
  comm_options defaults{};
  /// Options by dim name (flattened aliases and unflattened dims included).
  std::map<std::string, comm_options, std::less<>> per_dim{};
  /// Opt-in: create a dim's communicator on its first use instead of at init. The first
  /// use is then collective over all the mesh's ranks (every member must make it, in the
  /// same order); the parent of these splits is a communicator of the whole mesh.
  bool lazy = false;
  /// Bound of every collective step devmesh takes on its own behalf (init, consistency
  /// check, communicator creation, flatten, unflatten, from_comms, the collective check).
  /// 0: DEVMESH_TIMEOUT (seconds) from the environment, else 600 s.
  std::chrono::milliseconds timeout{0};
  /// Every collective first agrees across its group on operation, element type, counts,
  /// root and op, and throws on every rank on a difference. Also on when the environment
  /// has DEVMESH_CHECK_COLLECTIVES=1. Off: one branch per collective.
  bool check_collectives = false;
  /// Opt-in: dims whose groups are identical (same ranks, same order) and whose options are
  /// equal share one communicator (on NCCL a communicator costs GPU memory). Collectives on
  /// dims that share one must then not run concurrently from two threads. Default: every
  /// dim has its own communicator, as in PyTorch.
  bool share_equal_groups = false;
  /// Which world rank sits at each position of the mesh (PyTorch's mesh tensor, flattened
  /// row-major; a position is a rank of the layout, [0, root_size())): rank_map[p] is the
  /// world rank at position p. Empty (the default): position p is world rank p, and no map
  /// is stored. Otherwise root_size() distinct world ranks, each in [0, world size); world
  /// ranks not in it are not members. Checked on every rank and part of the consistency
  /// check. A mesh at an offset: rank_range(4, 4), i.e. {4, 5, 6, 7}.
  std::vector<int> rank_map{};
  /// Find at init which node each rank is on (one more bounded collective step, only then),
  /// so that device_mesh::topology() can answer. Implied by intra_node and node_major.
  topology_option<Comm, bool> topology{};
  /// Dims (run-time names, aliases too) each of whose groups must lie within one node: at
  /// init, a group of one of them that spans nodes makes every rank throw mesh_error with
  /// the topology table and the fix. Implies topology.
  topology_option<Comm, std::vector<std::string>> intra_node{};
  /// Node-major placement: init builds rank_map from the discovered nodes (as
  /// node_major_rank_map) so that the intra_node dims lie within nodes whatever order the
  /// launcher gave the ranks, or throws on every rank when no order can. Needs intra_node;
  /// excludes rank_map. Implies topology.
  topology_option<Comm, bool> node_major{};

  /// True when init must discover the nodes (topology, intra_node or node_major).
  bool wants_topology() const { return topology.value() || node_major.value() || !intra_node.value().empty(); }
  /// Init's topology step: set with any topology option (null when none was).
  detail::topology_step<Comm> topology_step() const {
    for (auto step : {topology.step(), intra_node.step(), node_major.step()})
      if (step) return step;
    return nullptr;
  }

  /// The options dim `name` is created with.
  const comm_options& for_dim(std::string_view name) const {
    auto it = per_dim.find(name);
    return it == per_dim.end() ? defaults : it->second;
  }
};

/// The rank map of a mesh at an offset: `count` world ranks from `first`, in order
/// (rank_range(4, 4) is {4, 5, 6, 7}): options.rank_map = dm::rank_range(4, 4).
inline std::vector<int> rank_range(int first, int count) {
  std::vector<int> out;
  for (int i = 0; i < count; ++i) out.push_back(first + i);
  return out;
}

namespace detail {

/// How the parent of a split numbers the mesh's ranks: as the world does (the control
/// communicator, a duplicate of the world), or by position (lazy mode's members, split with
/// key = position). split_group takes ranks of its parent, so the two differ under a rank map.
enum class numbering { world, position };

/// True for {0, 1, ..., n-1}: row-major world order, which is stored as no map at all.
inline bool is_identity_map(const std::vector<int>& map) {
  for (std::size_t p = 0; p < map.size(); ++p)
    if (map[p] != static_cast<int>(p)) return false;
  return true;
}

/// A rank map as text for messages and the consistency check: runs of consecutive ranks
/// ("4-7", "0,2,4,6,1,3,5,7"); past 200 characters cut, with the digest of the whole.
[[gnu::cold, gnu::noinline]] inline std::string rank_map_string(const std::vector<int>& map) {
  if (map.empty()) return "row-major";
  const std::string all = rank_ranges(map);
  if (all.size() <= 200) return all;
  return all.substr(0, 200) + "... (" + std::to_string(map.size()) + " entries, sha256 " +
         std::to_string(sha256(all)[0]) + ")";
}

/// "" if `map` is a valid rank map of a mesh with n positions in a world of `world` ranks,
/// else why not.
[[gnu::cold, gnu::noinline]] inline std::string rank_map_error(const std::vector<int>& map, int n, int world) {
  if (map.empty()) return {};
  const std::string here = "devmesh: rank map: ";
  if (static_cast<int>(map.size()) != n)
    return here + "it has " + std::to_string(map.size()) + " entries, the mesh has " + std::to_string(n) +
           " positions (one world rank per position, options.rank_map[p] for position p)";
  std::vector<int> at(static_cast<std::size_t>(world), -1);  // world rank -> its position
  for (int p = 0; p < n; ++p) {
    const int w = map[static_cast<std::size_t>(p)];
    if (w < 0 || w >= world)
      return here + "rank_map[" + std::to_string(p) + "] = " + std::to_string(w) +
             " is not a world rank (the world has " + std::to_string(world) + ": [0, " + std::to_string(world) + "))";
    int& seen = at[static_cast<std::size_t>(w)];
    if (seen >= 0)
      return here + "rank_map[" + std::to_string(p) + "] = " + std::to_string(w) + " repeats rank_map[" +
             std::to_string(seen) + "] (each world rank holds at most one position)";
    seen = p;
  }
  return {};
}

/// A dim's group function: its coalesced layout (dim_layout::coalesce), as a list of
/// (shape, stride), most significant first. Two dims with the same key have the same
/// groups in the same order, whatever their names or history.
using group_key = std::vector<std::pair<int, int>>;

/// The group key of dim d of m.
template <class Layout>
group_key group_key_of(const Layout& m, int d) {
  const auto coalesced = m.dim_layout(d).coalesce();
  group_key k;
  for (int i = 0; i < coalesced.count; ++i) k.emplace_back(coalesced.shape[i], coalesced.stride[i]);
  return k;
}

/// "[4x2,2x1]": (size x stride) pairs, for messages and fingerprints.
inline std::string key_string(const group_key& k) {
  std::string s = "[";
  for (std::size_t i = 0; i < k.size(); ++i) {
    // Appends, not `"," + std::string`: that trips g++ 12's -Wrestrict false positive.
    if (i) s += ',';
    s += std::to_string(k[i].first);
    s += 'x';
    s += std::to_string(k[i].second);
  }
  s += ']';
  return s;
}

/// Optional backend hooks (documented in docs/runtime.md): options that can describe
/// themselves enter the consistency check; options with a `name` string get
/// "mesh:<dim>" when left empty (NCCL commName, MPI_Comm_set_name).
template <class O>
std::string describe_options(const O& o) {
  if constexpr (requires { { o.describe() } -> std::convertible_to<std::string>; })
    return o.describe();
  else
    return {};
}
template <class O>
O named_options(O o, std::string_view dim) {
  if constexpr (requires(O& x) { x.name = std::string(); x.name.empty(); })
    if (o.name.empty()) o.name = "mesh:" + std::string(dim);
  return o;
}
template <class O>
std::string options_name(const O& o) {
  if constexpr (requires { { o.name } -> std::convertible_to<std::string>; })
    return o.name;
  else
    return {};
}

/// Every dim's modes, as written in the type (static values, and slots for dynamic
/// ones): digested with the descriptor in case two layouts print alike.
template <class Layout>
std::string structure_string() {
  constexpr auto L = Layout::layout;
  std::string structure;
  for (int d = 0; d < L.ndims; ++d) {
    structure += std::to_string(L.count(d));
    structure += ':';
    for (int m = L.first[d]; m < L.first[d + 1]; ++m) {
      structure += std::to_string(L.shape[m]);
      structure += 'x';
      structure += std::to_string(L.stride[m]);
      structure += ',';
    }
  }
  return structure;
}

/// Every dim of m with its group key: what the ranks must agree on before creating.
template <class Layout>
descriptor layout_descriptor(const Layout& m, std::string details) {
  descriptor d{to_string(m), std::move(details)};
  // Appends, not operator+ chains: those trip g++ 12's -Wrestrict false positive at -O2.
  for (int i = 0; i < Layout::ndim_with_aliases; ++i) {
    d.details += ' ';
    d.details += Layout::name(i);
    d.details += key_string(group_key_of(m, i));
  }
  d.details += " structure ";
  d.details += structure_string<Layout>();
  return d;
}

/// The state shared by every handle derived from one init_device_mesh / from_comms call.
template <communicator Comm>
struct mesh_state {
  /// One dim's communicator: one per (name, groups). Several entries hold the same
  /// communicator only under options.share_equal_groups.
  struct entry {
    std::string name;
    group_key key;
    std::string options;  // the dim's options, described (sharing needs equal ones)
    std::shared_ptr<Comm> comm;
  };

  std::optional<Comm> owned_world;  // set when the mesh owns the world communicator
  const Comm* world = nullptr;
  std::optional<Comm> control;    // private duplicate of the world: devmesh's own steps
  std::optional<Comm> lazy_root;  // lazy mode: the mesh's members, parent of lazy splits
  int world_rank = 0;
  int world_size = 0;
  int root_size = 0;
  std::vector<int> rank_map;      // position -> world rank; empty: position p is world rank p
  int position = -1;              // this rank's position in the root; -1: not a member
  std::vector<int> node_of_rank;  // node of every world rank, when init discovered them
  // The root's layout (init's or from_comms'), for device_mesh::root<M>(): its value, its
  // type's tag and its description.
  std::shared_ptr<const void> root_layout;
  const void* root_tag = nullptr;
  std::string root_text;
  device_mesh_options<Comm> options;
  std::chrono::milliseconds timeout = default_timeout;
  bool check_collectives = false;
  std::vector<std::unique_ptr<entry>> cache;  // in creation order
  int created = 0;

  mesh_state() = default;
  mesh_state(const mesh_state&) = delete;
  mesh_state& operator=(const mesh_state&) = delete;
  // The dims' communicators in reverse creation order, then lazy_root, control and the
  // world (declared in that order).
  ~mesh_state() {
    while (!cache.empty()) cache.pop_back();
  }

  bool is_member() const { return position >= 0; }
  deadline start_step() const { return deadline::after(timeout); }

  /// Keeps the root's layout (init, from_comms) for device_mesh::root<M>().
  template <class Layout>
  void keep_root(const Layout& l) {
    root_layout = std::make_shared<const Layout>(l);
    root_tag = &layout_tag<Layout>;
    root_text = to_string(l);
  }

  /// Sets the root's size and rank map (valid: checked before), and this rank's position.
  void place(int n, std::vector<int> map) {
    root_size = n;
    rank_map = std::move(map);
    if (is_identity_map(rank_map)) rank_map.clear();  // the row-major path: no map
    position = -1;
    if (rank_map.empty()) {
      if (world_rank < n) position = world_rank;
      return;
    }
    for (int p = 0; p < n; ++p)
      if (rank_map[static_cast<std::size_t>(p)] == world_rank) position = p;
  }
  /// The world rank at position p.
  int world_rank_at(int p) const { return rank_map.empty() ? p : rank_map[static_cast<std::size_t>(p)]; }
  /// The world ranks at every position, in order (the identity without a map).
  std::vector<int> positions_to_world() const {
    if (!rank_map.empty()) return rank_map;
    return rank_range(0, root_size);
  }
  /// Which world ranks the mesh holds, for messages: "it spans world ranks [0, 4) of 8" or
  /// "its rank map holds world ranks 4-7 of 8".
  std::string members_phrase() const {
    if (rank_map.empty())
      return "it spans world ranks [0, " + std::to_string(root_size) + ") of " + std::to_string(world_size);
    std::vector<int> sorted = rank_map;
    std::sort(sorted.begin(), sorted.end());
    return "its rank map holds world ranks " + rank_ranges(sorted) + " of " + std::to_string(world_size);
  }

  /// Aborts every communicator devmesh made for this root (dims, lazy parent, control).
  void abort() noexcept {
    const auto stop = [](Comm& c) {
      if constexpr (requires { c.abort(); }) c.abort();
    };
    for (auto& e : cache) stop(*e->comm);
    if (lazy_root) stop(*lazy_root);
    if (control) stop(*control);
  }

  const entry* find(std::string_view name, const group_key& k) const {
    for (const auto& e : cache)
      if (e->name == name && e->key == k) return e.get();
    return nullptr;
  }
  /// Under share_equal_groups: a communicator with groups k made with equal options, among
  /// the cached ones and those `made` by the step under way.
  const entry* shareable(const group_key& k, const std::string& opts,
                         const std::vector<std::unique_ptr<entry>>& made = {}) const {
    if (!options.share_equal_groups) return nullptr;
    for (const auto* list : {&cache, &made})
      for (const auto& e : *list)
        if (e->key == k && e->options == opts) return e.get();
    return nullptr;
  }
  std::string options_of(std::string_view name) const {
    const auto& o = options.for_dim(name);
    return options_name(o) + "|" + describe_options(o);
  }

  /// Per-call backend options (flatten/unflatten, PyTorch's backend_override): the new dims
  /// `names` get `o`, as if given in options.per_dim at init (lazy mode then uses them on
  /// first use). A name with other options already (per_dim, an earlier call, or a
  /// communicator made with the defaults) throws mesh_error: never a communicator other than
  /// the one asked for. Returns the options' description, for the step's consistency check;
  /// `added` gets the names it added (forgotten again if the step fails).
  std::string set_call_options(std::span<const std::string_view> names, const typename Comm::options_type& o,
                               std::string_view step, std::vector<std::string>& added) {
    const std::string wanted = options_name(o) + "|" + describe_options(o);
    for (const std::string_view name : names) {
      const auto it = options.per_dim.find(name);
      const bool made = std::any_of(cache.begin(), cache.end(), [&](const auto& e) { return e->name == name; });
      if ((it != options.per_dim.end() || made) && options_of(name) != wanted)
        throw mesh_error("devmesh: " + std::string(step) + ": dim '" + std::string(name) + "' has other backend options "
                         "already (" + options_of(name) + ", asked " + wanted + "): give a dim's options once, at init "
                         "(options.per_dim) or at the call that makes it");
    }
    for (const std::string_view name : names)
      if (options.per_dim.emplace(std::string(name), o).second) added.emplace_back(name);
    return " with backend options " + wanted;
  }

  /// The ranks of `parent` in this rank's group of dim d, in the group's order (empty off
  /// the mesh): positions mapped to world ranks when the parent numbers ranks as the world
  /// (the control communicator), positions as they are for lazy mode's members.
  template <class Layout>
  std::vector<int> group_ranks(const Layout& m, int d, numbering parent) const {
    std::vector<int> ranks;
    if (!is_member()) return ranks;
    const split_args sa = m.comm_split(position, d);
    const auto group = m.dim_layout(d);
    for (int i = 0; i < m.dim_size(d); ++i)
      ranks.push_back(parent == numbering::world ? world_rank_at(sa.color + group(i)) : sa.color + group(i));
    return ranks;
  }

  /// This rank's part of creating dim d's communicator from `parent`: a split, or where the
  /// backend has one, a split whose groups are given (MPI: MPI_Comm_create_group, collective
  /// over the group only, so much cheaper than MPI_Comm_split over the whole parent).
  /// Returns "" or why it failed here.
  /// Split colors and keys come from positions: a color only names a group, and a key is
  /// the rank's index in its group, whatever the parent's numbering.
  template <class Layout>
  std::string split_one(const Comm& parent, numbering parent_numbering, const Layout& m, int d, entry& e) const {
    try {
      auto opts = named_options(options.for_dim(e.name), e.name);
      if constexpr (requires { parent.split_group(std::span<const int>(), opts); }) {
        const std::vector<int> ranks = group_ranks(m, d, parent_numbering);
        e.comm = std::make_shared<Comm>(parent.split_group(std::span<const int>(ranks), opts));
      } else {
        const split_args sa = is_member() ? m.comm_split(position, d) : split_args{no_color, 0};
        e.comm = std::make_shared<Comm>(parent.split(sa.color, sa.key, opts));
      }
    } catch (const std::exception& x) {
      // A backend that invalidated the parent (NCCL aborts it) agreed on the failure
      // over its own channel before doing so: every rank throws already.
      if (!parent.valid()) throw;
      return x.what();
    }
    return {};
  }

  /// Creates the communicators of dims [first, last) of m that are not cached yet, from
  /// `parent` (every rank of parent calls this), then agrees on every outcome in one step
  /// (one all-reduce, not one per dim): a split or hook that failed on some rank makes every
  /// rank throw, naming the first dim that failed (the dims after it were created, and
  /// their hooks called, before the agreement), and nothing this call made is cached.
  template <class Layout>
  void create(const Comm& parent, numbering parent_numbering, const Layout& m, int first, int last,
              std::string_view step, const deadline& dl) {
    std::vector<std::unique_ptr<entry>> made;
    std::vector<step_outcome> outcomes;
    std::string names;  // of the dims split, for a time-out's message
    for (int d = first; d < last; ++d) {
      group_key key = group_key_of(m, d);
      if (find(Layout::name(d), key)) continue;
      auto e = std::make_unique<entry>();
      e->name = std::string(Layout::name(d));
      e->key = std::move(key);
      e->options = options_of(e->name);
      if (const entry* same = shareable(e->key, e->options, made))
        e->comm = same->comm;
      else {
        outcomes.push_back({std::string(step) + ": creating the communicator of dim '" + e->name + "'",
                            split_one(parent, parent_numbering, m, d, *e)});
        names += (names.empty() ? "'" : ", '") + e->name + "'";
      }
      made.push_back(std::move(e));
    }
    if (outcomes.size() == 1) agree_all(parent, outcomes[0].step, outcomes, nullptr, {}, dl);
    if (outcomes.size() > 1)
      agree_all(parent, std::string(step) + ": creating the communicators of dims " + names, outcomes, nullptr, {}, dl);
    created += static_cast<int>(outcomes.size());
    for (auto& e : made) cache.push_back(std::move(e));
  }

  /// Lazy mode: dim d's communicator on its first use, collective over the mesh's members,
  /// which first check that they all create the same dim.
  template <class Layout>
  const entry& ensure_lazy(const Layout& m, int d) {
    const deadline dl = start_step();
    const std::string step = "creating the communicator of dim '" + std::string(Layout::name(d)) + "' (lazy)";
    check_same(*lazy_root, layout_descriptor(m, "dim " + std::string(Layout::name(d)) + " " + options_of(Layout::name(d))),
               step, dl);
    create(*lazy_root, numbering::position, m, d, d + 1, step, dl);
    return *find(Layout::name(d), group_key_of(m, d));
  }

  /// Eager mode: every dim of m (aliases included) gets its communicator now, collective
  /// over the world (members or not). Unless `verified`, the ranks first check that they
  /// derived the same mesh.
  template <class Layout>
  void ensure_all(const Layout& m, std::string_view step, bool verified = false) {
    if (options.lazy) return;
    const deadline dl = start_step();
    if (!verified) check_same(*control, layout_descriptor(m, std::string(step)), step, dl);
    create(*control, numbering::world, m, 0, Layout::ndim_with_aliases, step, dl);
  }
};

}  // namespace detail

template <class Layout, communicator Comm>
class device_mesh;

namespace detail {
template <class Layout, communicator Comm>
device_mesh<Layout, Comm> make_device_mesh(const Layout& l, std::shared_ptr<mesh_state<Comm>> s) {
  return device_mesh<Layout, Comm>(l, std::move(s));
}
}  // namespace detail

/// A mesh layout bound to communicators: one per dim, created collectively by
/// init_device_mesh or adopted by from_comms. Copies are handles to the same
/// communicators. Creating and deriving are collective and single-threaded; collectives on
/// different dims may run from different threads under MPI_THREAD_MULTIPLE (docs/reliability.md).
template <class Layout, communicator Comm>
class device_mesh {
  using state_type = detail::mesh_state<Comm>;
  template <class, communicator>
  friend class device_mesh;
  template <class L, communicator C>
  friend device_mesh<L, C> detail::make_device_mesh(const L&, std::shared_ptr<detail::mesh_state<C>>);

  Layout layout_;
  std::shared_ptr<state_type> state_;
  // Each dim's communicator, resolved once per handle (eager mode, members): comm<"tp">()
  // and every collective are then a load, not a cache search. Entries never move (the
  // cache holds unique_ptrs) and live as long as state_.
  std::array<const Comm*, Layout::ndim_with_aliases> comms_{};
  bool check_ = false;  // the collective check mode, copied here: off costs one branch

  device_mesh(const Layout& l, std::shared_ptr<state_type> s)
      : layout_(l), state_(std::move(s)), check_(state_->check_collectives) {
    if (state_->options.lazy || !state_->is_member()) return;
    for (int d = 0; d < Layout::ndim_with_aliases; ++d)
      if (const auto* e = state_->find(Layout::name(d), detail::group_key_of(layout_, d)))
        comms_[static_cast<std::size_t>(d)] = e->comm.get();
  }

  template <fixed_string N>
  static constexpr int index = Layout::template dim_index<N>();

 public:
  using layout_type = Layout;
  using communicator_type = Comm;
  using stream_type = typename Comm::stream_type;
  using options_type = device_mesh_options<Comm>;
  static constexpr int ndim = Layout::ndim;

  // ---- layout queries ------------------------------------------------------------------
  /// The layout (the core basic_mesh value): every constexpr query lives there.
  const Layout& layout() const { return layout_; }
  /// This process's rank in the world communicator.
  int rank() const { return state_->world_rank; }
  /// This rank's position in the root mesh: the rank every layout query takes (coordinate,
  /// local ranks, groups), i.e. the index of rank() in the rank map, or rank() itself
  /// without one. Throws on non-members.
  int position() const {
    require_member("position", 0);
    return state_->position;
  }
  /// The root's rank map, position -> world rank (options.rank_map, or the node-major map
  /// init built); empty when position p is world rank p. Shared by every derived mesh.
  const std::vector<int>& rank_map() const { return state_->rank_map; }
  /// The node of every world rank (node ids 0..n-1, numbered by the lowest rank on each
  /// node), as init discovered them; empty when the options did not ask (options.topology,
  /// intra_node, node_major).
  const std::vector<int>& node_of_rank() const { return state_->node_of_rank; }
  /// Number of ranks in the world communicator.
  int world_size() const { return state_->world_size; }
  /// False on world ranks outside the mesh (past a mesh smaller than the world, or not in
  /// its rank map): they have no communicator and every collective throws.
  bool is_member() const { return state_->is_member(); }
  /// Number of ranks of the mesh (PyTorch size()), of a named dim, or of dim d.
  int size() const { return layout_.size(); }
  /// Number of ranks along the named dim N.
  template <fixed_string N>
  int size() const {
    return layout_.template size<N>();
  }
  /// Number of ranks along dim d, 0 <= d < ndim (PyTorch size(mesh_dim)).
  int size(int d) const { return layout_.size(d); }
  /// The sizes of the mesh's dims (PyTorch mesh.shape).
  std::array<int, ndim> shape() const { return layout_.shape(); }
  /// This rank's coordinate in the (sub)mesh containing it; nullopt on non-members.
  std::optional<std::array<int, ndim>> coordinate() const {
    if (!is_member()) return std::nullopt;
    return layout_.coordinate(state_->position);
  }
  /// This rank's index along dim N (PyTorch get_local_rank). Throws on non-members.
  template <fixed_string N>
  int local_rank() const {
    require_member("local_rank", index<N>);
    return layout_.template local_rank<N>(state_->position);
  }
  /// This rank's index along the only dim of a 1-D mesh. Throws on non-members.
  int local_rank() const
    requires(ndim == 1)
  {
    require_member("local_rank", 0);
    return layout_.coordinate_unchecked(state_->position, 0);
  }

  // ---- run-time names and indices (config-driven code; PyTorch's string lookups) --------
  // Compile-time names (size<"tp">(), comm<"tp">()) stay the primary API: misspelling one is
  // a compile error. These take a name or index known only at run time; an unknown name or
  // an index out of range throws mesh_error listing the dims that exist.
  /// The mesh's dim names, in order (PyTorch mesh_dim_names); aliases are not included.
  std::array<std::string_view, ndim> names() const {
    std::array<std::string_view, ndim> out{};
    for (int d = 0; d < ndim; ++d) out[static_cast<std::size_t>(d)] = Layout::name(d);
    return out;
  }
  /// The index of dim `name`: 0 <= index < ndim for the mesh's dims, past them for its
  /// aliases (flattened dims), as the compile-time dim_index<"name">().
  int dim_index(std::string_view name) const {
    for (int d = 0; d < Layout::ndim_with_aliases; ++d)
      if (Layout::name(d) == name) return d;
    throw mesh_error("devmesh: unknown dim '" + std::string(name) + "': the dims of " + to_string(layout_) + " are " +
                     dim_list());
  }
  /// Size of dim `name` (aliases too; PyTorch size(mesh_dim)).
  int size(std::string_view name) const { return layout_.dim_size(dim_index(name)); }
  /// The communicator of dim `name` (PyTorch get_group("tp")).
  const Comm& comm(std::string_view name) const { return comm_on(dim_index(name), "comm"); }
  /// This rank's index along dim `name` (PyTorch get_local_rank("tp")).
  int local_rank(std::string_view name) const { return local_rank_on(dim_index(name)); }
  /// This rank's index along dim d, 0 <= d < ndim (PyTorch get_local_rank(1)).
  int local_rank(int d) const {
    if (d < 0 || d >= ndim)
      throw mesh_error("devmesh: local_rank(" + std::to_string(d) + "): dim index not in [0, " + std::to_string(ndim) +
                       ") (dims: " + dim_list() + ")");
    return local_rank_on(d);
  }

  // ---- communicators -------------------------------------------------------------------
  /// The communicator of dim N (.rank(), .size(), .native()). Throws on non-members. In
  /// lazy mode the first call for a dim creates it (collective over the mesh).
  template <fixed_string N>
  const Comm& comm() const {
    // The fast path inline: a load and a test (the handle resolved its dims when made).
    if (const Comm* c = comms_[static_cast<std::size_t>(index<N>)]) return *c;
    return comm_on(index<N>, "comm");
  }
  /// The communicator of the only dim of a 1-D mesh (PyTorch get_group() on a 1-D mesh).
  /// Throws on non-members.
  const Comm& comm() const
    requires(ndim == 1)
  {
    return comm_on(0, "comm");
  }
  /// The communicator of dim d by index, 0 <= d < ndim (PyTorch get_group(int); a loop over
  /// d is get_all_groups). Throws mesh_error for an index out of range.
  const Comm& comm(int d) const {
    if (d < 0 || d >= ndim)
      throw mesh_error("devmesh: comm(" + std::to_string(d) + "): dim index not in [0, " + std::to_string(ndim) + ")");
    return comm_on(d, "comm");
  }
  /// The world communicator this mesh was created over.
  const Comm& world() const { return *state_->world; }
  /// Number of communicators created so far by this mesh and everything derived from it:
  /// its private control communicator (a duplicate of the world), in lazy mode the
  /// members' communicator, and one per dim (adopted communicators are not counted).
  int communicator_count() const { return state_->created; }
  /// The options the mesh was created with (shared by everything derived from it).
  const options_type& options() const { return state_->options; }

  // ---- deriving meshes (share this mesh's communicators) -------------------------------
  /// The submesh of dims Ns... (any order, aliases too). Never creates a communicator.
  template <fixed_string... Ns>
  auto slice() const {
    return derive(layout_.template slice<Ns...>(), nullptr);
  }
  /// One dim as a 1-D device mesh: mesh["tp"_dim]. Never creates a communicator.
  template <class Tag>
    requires requires { typename Tag::devmesh_dim_name_tag; }
  auto operator[](Tag) const {
    return slice<Tag::value>();
  }
  /// This mesh plus alias Alias flattening Ns... (or, with no Ns, the whole mesh as one dim
  /// named Alias; with no Alias either, PyTorch's default name, the dims' names joined by
  /// '_'). Creates the alias's communicator unless an equal one is cached. Eager mode:
  /// collective over the world (every world rank calls it, members or not), which checks
  /// that all ranks flatten alike; lazy mode: local.
  template <fixed_string Alias = detail::default_flatten_name<typename Layout::names_type, Layout::ndim>,
            fixed_string... Ns>
  auto flatten() const {
    return derive(layout_.template flatten<Alias, Ns...>(), "flatten");
  }
  /// Dim N split into New... (PyTorch _unflatten). Creates communicators only for new
  /// groups; collective as flatten.
  template <fixed_string N, dim_spec... New>
  auto unflatten() const {
    return derive(layout_.template unflatten<N, New...>(), "unflatten");
  }
  /// This mesh's dims, then b's (PyTorch's _concatenate([a, b])): both derived from one
  /// init_device_mesh or from_comms (else mesh_error), their layouts as
  /// basic_mesh::concatenate checks them. Never creates a communicator: every dim has one.
  template <class L2>
  auto concatenate(const device_mesh<L2, Comm>& b) const {
    if (state_ != b.state_)
      throw mesh_error("devmesh: concatenate: " + to_string(layout_) + " and " + to_string(b.layout_) +
                       " come from different roots (two init_device_mesh or from_comms calls)");
    return derive(layout_.concatenate(b.layout_), nullptr);
  }
  /// flatten() with backend options for the new dim's communicator (PyTorch's
  /// backend_override on _flatten), as options.per_dim[Alias] at init would give. The ranks
  /// must pass equal options (part of the step's consistency check); a dim that has other
  /// options already throws mesh_error.
  template <fixed_string Alias = detail::default_flatten_name<typename Layout::names_type, Layout::ndim>,
            fixed_string... Ns>
  auto flatten(const typename Comm::options_type& backend_options) const {
    const std::string_view names[] = {Alias.view()};
    return derive(layout_.template flatten<Alias, Ns...>(), "flatten", names, &backend_options);
  }
  /// unflatten() with backend options for every new dim's communicator (PyTorch's
  /// backend_override on _unflatten); as flatten(backend_options).
  template <fixed_string N, dim_spec... New>
  auto unflatten(const typename Comm::options_type& backend_options) const {
    const std::string_view names[] = {New::name.view()...};
    return derive(layout_.template unflatten<N, New...>(), "unflatten", names, &backend_options);
  }

  // ---- typed collectives on a named dim (and on a 1-D mesh, unnamed) --------------------
  // Buffers are spans in the backend's memory space (host for MPI, device for NCCL).
  // Sizes that do not fit the dim throw mesh_error; backend failures throw comm_error.

  /// In place: buf becomes the reduction over dim N.
  template <fixed_string N, class T, std::size_t E>
  void all_reduce(std::span<T, E> buf, op o, stream_type s = {}) const {
    all_reduce_on(index<N>, buf.data(), buf.data(), buf.size(), buf.size(), o, s);
  }
  /// Out of place: recv becomes the reduction of every rank's send over dim N.
  template <fixed_string N, class T, std::size_t E>
  void all_reduce(std::span<const std::type_identity_t<T>> send, std::span<T, E> recv, op o, stream_type s = {}) const {
    all_reduce_on(index<N>, send.data(), recv.data(), send.size(), recv.size(), o, s);
  }
  /// In place, on a 1-D mesh (no dim name).
  template <class T, std::size_t E>
  void all_reduce(std::span<T, E> buf, op o, stream_type s = {}) const
    requires(ndim == 1)
  {
    all_reduce_on(0, buf.data(), buf.data(), buf.size(), buf.size(), o, s);
  }
  /// Out of place, on a 1-D mesh (no dim name).
  template <class T, std::size_t E>
  void all_reduce(std::span<const std::type_identity_t<T>> send, std::span<T, E> recv, op o, stream_type s = {}) const
    requires(ndim == 1)
  {
    all_reduce_on(0, send.data(), recv.data(), send.size(), recv.size(), o, s);
  }

  /// Reduction onto the rank with local rank `root` along dim N (in place on root).
  template <fixed_string N, class T, std::size_t E>
  void reduce(std::span<T, E> buf, op o, int root, stream_type s = {}) const {
    reduce_on(index<N>, buf.data(), buf.data(), buf.size(), buf.size(), o, root, s);
  }
  /// Out of place: recv on local rank `root` along dim N becomes the reduction of every
  /// rank's send (recv is not written elsewhere).
  template <fixed_string N, class T, std::size_t E>
  void reduce(std::span<const std::type_identity_t<T>> send, std::span<T, E> recv, op o, int root, stream_type s = {}) const {
    reduce_on(index<N>, send.data(), recv.data(), send.size(), recv.size(), o, root, s);
  }
  /// In place, on a 1-D mesh (no dim name).
  template <class T, std::size_t E>
  void reduce(std::span<T, E> buf, op o, int root, stream_type s = {}) const
    requires(ndim == 1)
  {
    reduce_on(0, buf.data(), buf.data(), buf.size(), buf.size(), o, root, s);
  }
  /// Out of place, on a 1-D mesh (no dim name).
  template <class T, std::size_t E>
  void reduce(std::span<const std::type_identity_t<T>> send, std::span<T, E> recv, op o, int root, stream_type s = {}) const
    requires(ndim == 1)
  {
    reduce_on(0, send.data(), recv.data(), send.size(), recv.size(), o, root, s);
  }

  /// buf on local rank `root` along dim N, copied to every rank of its group.
  template <fixed_string N, class T, std::size_t E>
  void broadcast(std::span<T, E> buf, int root, stream_type s = {}) const {
    broadcast_on(index<N>, buf.data(), buf.size(), root, s);
  }
  /// broadcast on a 1-D mesh (no dim name).
  template <class T, std::size_t E>
  void broadcast(std::span<T, E> buf, int root, stream_type s = {}) const
    requires(ndim == 1)
  {
    broadcast_on(0, buf.data(), buf.size(), root, s);
  }

  /// recv = the concatenation of every rank's send, in local-rank order along dim N.
  /// recv.size() must be send.size() * size<N>().
  template <fixed_string N, class T, std::size_t E>
  void all_gather(std::span<const std::type_identity_t<T>> send, std::span<T, E> recv, stream_type s = {}) const {
    all_gather_on(index<N>, send.data(), recv.data(), send.size(), recv.size(), s);
  }
  /// all_gather on a 1-D mesh (no dim name).
  template <class T, std::size_t E>
  void all_gather(std::span<const std::type_identity_t<T>> send, std::span<T, E> recv, stream_type s = {}) const
    requires(ndim == 1)
  {
    all_gather_on(0, send.data(), recv.data(), send.size(), recv.size(), s);
  }

  /// recv = block `local_rank<N>()` of the reduction of every rank's send.
  /// send.size() must be recv.size() * size<N>().
  template <fixed_string N, class T, std::size_t E>
  void reduce_scatter(std::span<const std::type_identity_t<T>> send, std::span<T, E> recv, op o, stream_type s = {}) const {
    reduce_scatter_on(index<N>, send.data(), recv.data(), send.size(), recv.size(), o, s);
  }
  /// reduce_scatter on a 1-D mesh (no dim name).
  template <class T, std::size_t E>
  void reduce_scatter(std::span<const std::type_identity_t<T>> send, std::span<T, E> recv, op o, stream_type s = {}) const
    requires(ndim == 1)
  {
    reduce_scatter_on(0, send.data(), recv.data(), send.size(), recv.size(), o, s);
  }

  /// Block j of send goes to local rank j; block i of recv comes from local rank i.
  /// send.size() == recv.size(), divisible by size<N>().
  template <fixed_string N, class T, std::size_t E>
  void all_to_all(std::span<const std::type_identity_t<T>> send, std::span<T, E> recv, stream_type s = {}) const {
    all_to_all_on(index<N>, send.data(), recv.data(), send.size(), recv.size(), s);
  }
  /// all_to_all on a 1-D mesh (no dim name).
  template <class T, std::size_t E>
  void all_to_all(std::span<const std::type_identity_t<T>> send, std::span<T, E> recv, stream_type s = {}) const
    requires(ndim == 1)
  {
    all_to_all_on(0, send.data(), recv.data(), send.size(), recv.size(), s);
  }

  /// Blocks until every rank of this rank's group along dim N has called it (NCCL: enqueued
  /// on the stream).
  template <fixed_string N>
  void barrier(stream_type s = {}) const {
    barrier_on(index<N>, s);
  }
  /// barrier on a 1-D mesh (no dim name).
  void barrier(stream_type s = {}) const
    requires(ndim == 1)
  {
    barrier_on(0, s);
  }

  /// The neighbours along dim N at `displacement`, as MPI_Cart_shift: {source, dest} local
  /// ranks (-1 past either end unless periodic). Throws on non-members.
  template <fixed_string N>
  std::pair<int, int> shift_peers(int displacement = 1, bool periodic = false) const {
    return shift_peers_on(index<N>, displacement, periodic);
  }
  /// Sends `send` to the rank `displacement` ahead along dim N and receives `recv` from the
  /// rank as far behind (MPI_Cart_shift + sendrecv). At the ends of a non-periodic dim the
  /// missing side is skipped (recv left untouched). send.size() must equal recv.size().
  template <fixed_string N, class T, std::size_t E>
  void shift(std::span<const std::type_identity_t<T>> send, std::span<T, E> recv, int displacement = 1,
             bool periodic = false, stream_type s = {}) const {
    shift_on(index<N>, send.data(), recv.data(), send.size(), recv.size(), displacement, periodic, s);
  }
  /// shift on a 1-D mesh (no dim name).
  template <class T, std::size_t E>
  void shift(std::span<const std::type_identity_t<T>> send, std::span<T, E> recv, int displacement = 1,
             bool periodic = false, stream_type s = {}) const
    requires(ndim == 1)
  {
    shift_on(0, send.data(), recv.data(), send.size(), recv.size(), displacement, periodic, s);
  }

  /// Pipeline helpers along dim N: send to local rank + 1 / receive from local rank - 1
  /// (no-ops at the ends unless periodic). Each matches the neighbour's opposite call, e.g.
  /// a forward step: recv_prev, compute, send_next.
  template <fixed_string N, class T, std::size_t E>
  void send_next(std::span<T, E> send, bool periodic = false, stream_type s = {}) const {
    using U = std::remove_const_t<T>;
    const Comm& c = comm_on(index<N>, "send_next");
    const int dest = shift_peers_on(index<N>, 1, periodic).second;
    c.sendrecv(static_cast<const U*>(send.data()), send.size(), dest, static_cast<U*>(nullptr), 0, -1, s);
  }
  /// Receives recv from local rank - 1 along dim N (the other half of send_next; a no-op on
  /// local rank 0 unless periodic).
  template <fixed_string N, class T, std::size_t E>
  void recv_prev(std::span<T, E> recv, bool periodic = false, stream_type s = {}) const {
    const Comm& c = comm_on(index<N>, "recv_prev");
    const int source = shift_peers_on(index<N>, 1, periodic).first;
    c.sendrecv(static_cast<const T*>(nullptr), 0, -1, recv.data(), recv.size(), source, s);
  }

  /// Aborts every communicator devmesh made for this mesh's root: every dim's (of this
  /// handle and of every mesh derived from the same init_device_mesh or from_comms), the
  /// lazy parent and the control duplicate; never the world you passed. NCCL:
  /// ncclCommAbort, which also ends work in flight; MPI: the communicators become unusable
  /// (MPI's calls here are blocking: nothing is in flight). Afterwards every collective,
  /// flatten or unflatten on any of those handles throws comm_error. Local, not collective:
  /// for a rank that gives up on its peers (a timeout, an error elsewhere). Not while
  /// another thread is inside a call on the same mesh (docs/runtime.md).
  void abort() const noexcept { state_->abort(); }

  /// The world ranks of the (sub)mesh that contains this rank, row-major, through the rank
  /// map: PyTorch's mesh.mesh, flattened (its shape is shape()). Throws on non-members.
  std::vector<int> ranks() const {
    require_member("ranks", 0);
    std::vector<int> out;
    for (int p : layout_.group(state_->position)) out.push_back(state_->world_rank_at(p));
    return out;
  }

  /// Where this mesh's groups lie on the nodes: dm::topology() of its layout over the root's
  /// rank map and the nodes init discovered (printable: os << mesh.topology()). Local; the
  /// same on every rank. Throws mesh_error when init did not discover the nodes
  /// (options.topology, intra_node or node_major).
  mesh_topology topology() const {
    if (state_->node_of_rank.empty())
      throw mesh_error("devmesh: topology() on " + to_string(layout_) +
                       ": the nodes were not discovered at init (set options.topology = true, or intra_node or "
                       "node_major, in the options of init_device_mesh or from_comms)");
    const std::vector<int> map = state_->positions_to_world();
    return devmesh::topology(layout_, state_->node_of_rank, map);
  }

  /// The root mesh this mesh was derived from (PyTorch _get_root_mesh): the mesh of
  /// init_device_mesh or from_comms, over the same communicators (a handle, not a copy; a
  /// root's root is itself). Root is its layout type, which C++ cannot recover from a derived
  /// type: a Root that is not that type throws mesh_error naming the root. Local.
  template <class Root>
  device_mesh<Root, Comm> root() const {
    if (state_->root_tag != &detail::layout_tag<Root>) {
      std::string dims;
      for (int d = 0; d < Root::ndim; ++d) (dims += d ? ", " : "") += Root::name(d);
      throw mesh_error("devmesh: root<M>() with M a mesh of dims (" + dims + ") on " + where(0) +
                       ": the root of this mesh is " + state_->root_text + ", of another type");
    }
    return device_mesh<Root, Comm>(*static_cast<const Root*>(state_->root_layout.get()), state_);
  }

  /// Equal when both are views of one mesh: equal layouts (basic_mesh ==) over the same
  /// communicators (one init_device_mesh or from_comms, and what was derived from it), hence
  /// the same rank map. Two inits over the same world give meshes that are never equal,
  /// though their groups coincide (or their rank maps do): their communicators differ, and
  /// so would a collective's matching.
  template <class L2>
  bool operator==(const device_mesh<L2, Comm>& o) const {
    return state_ == o.state_ && layout_ == o.layout_;
  }
  /// A hash that agrees with ==: the layout's and the communicators' identity.
  std::size_t hash() const {
    return detail::hash_mesh(layout_) ^ (std::hash<const void*>{}(state_.get()) * 0x9e3779b97f4a7c15ULL);
  }

  /// Prints device_mesh(<backend>, <the layout>, rank r), plus ", not a member" off the mesh
  /// and ", position p" under a rank map.
  friend std::ostream& operator<<(std::ostream& os, const device_mesh& m) {
    os << "device_mesh(" << Comm::backend_name() << ", " << m.layout_ << ", rank " << m.rank();
    if (!m.is_member()) os << ", not a member";
    else if (!m.state_->rank_map.empty()) os << ", position " << m.state_->position;
    return os << ')';
  }

 private:
  template <class L>
  device_mesh<L, Comm> derive(const L& l, const char* creating, std::span<const std::string_view> new_dims = {},
                              const typename Comm::options_type* backend_options = nullptr) const {
    if (!creating) return device_mesh<L, Comm>(l, state_);
    std::string step = creating;
    std::vector<std::string> added;
    if (backend_options) step += state_->set_call_options(new_dims, *backend_options, creating, added);
    try {
      state_->ensure_all(l, step);
    } catch (...) {
      for (const auto& name : added) state_->options.per_dim.erase(name);  // as before the call
      throw;
    }
    return device_mesh<L, Comm>(l, state_);
  }

  /// "dp, cp, tp (aliases: dp_cp)"
  static std::string dim_list() {
    std::string out;
    for (int d = 0; d < Layout::ndim_with_aliases; ++d) {
      if (d == ndim) out += " (aliases: ";
      else if (d) out += ", ";
      out += Layout::name(d);
    }
    return Layout::ndim_with_aliases > ndim ? out + ")" : out;
  }
  int local_rank_on(int d) const {
    require_member("local_rank", d);
    return layout_.coordinate_unchecked(state_->position, d);
  }

  std::string where(int d) const {
    return "dim '" + std::string(Layout::name(d)) + "' of " + to_string(layout_);
  }
  void require_member(const char* what, int d) const {
    if (!is_member())
      throw mesh_error("devmesh: " + std::string(what) + " on " + where(d) + ": world rank " +
                       std::to_string(rank()) + " is not a member of this mesh (" + state_->members_phrase() + ")");
  }
  const Comm& comm_on(int d, const char* what) const {
    if (const Comm* c = comms_[static_cast<std::size_t>(d)]) return *c;  // resolved at construction
    require_member(what, d);
    const auto k = detail::group_key_of(layout_, d);
    if (const auto* e = state_->find(Layout::name(d), k)) return *e->comm;
    if (state_->options.lazy) return *state_->ensure_lazy(layout_, d).comm;
    throw mesh_error("devmesh: " + std::string(what) + " on " + where(d) +
                     ": no communicator for this dim (internal error: eager meshes create every dim's)");
  }
  void check_root(const char* what, int d, int root) const {
    if (root < 0 || root >= layout_.dim_size(d))
      throw mesh_error("devmesh: " + std::string(what) + " on " + where(d) + ": root " + std::to_string(root) +
                       " is not in [0, " + std::to_string(layout_.dim_size(d)) + ")");
  }
  [[noreturn]] void size_error(const char* what, int d, const std::string& detail) const {
    throw mesh_error("devmesh: " + std::string(what) + " on " + where(d) + ": " + detail);
  }

  /// The collective check mode: the group agrees on the call before making it.
  template <class T>
  void check_on(int d, const Comm& c, detail::call what, std::size_t ns, std::size_t nr, long long root,
                int reduction) const {
    detail::check_call(c, detail::signature<T>(what, ns, nr, root, reduction), detail::type_name<T>(), where(d),
                       state_->start_step());
  }
  void barrier_on(int d, stream_type s) const {
    const Comm& c = comm_on(d, "barrier");
    if (check_) [[unlikely]]
      check_on<char>(d, c, detail::call::barrier, 0, 0, 0, 0);
    c.barrier(s);
  }

  template <class T>
  void all_reduce_on(int d, const T* send, T* recv, std::size_t ns, std::size_t nr, op o, stream_type s) const {
    const Comm& c = comm_on(d, "all_reduce");
    if (check_) [[unlikely]]
      check_on<T>(d, c, detail::call::all_reduce, ns, nr, 0, static_cast<int>(o) + 1);
    if (ns != nr)
      size_error("all_reduce", d, "send has " + std::to_string(ns) + " elements, recv " + std::to_string(nr));
    c.all_reduce(send, recv, ns, o, s);
  }
  template <class T>
  void reduce_on(int d, const T* send, T* recv, std::size_t ns, std::size_t nr, op o, int root, stream_type s) const {
    const Comm& c = comm_on(d, "reduce");
    if (check_) [[unlikely]]
      check_on<T>(d, c, detail::call::reduce, ns, nr, root, static_cast<int>(o) + 1);
    check_root("reduce", d, root);
    if (ns != nr) size_error("reduce", d, "send has " + std::to_string(ns) + " elements, recv " + std::to_string(nr));
    c.reduce(send, recv, ns, o, root, s);
  }
  template <class T>
  void broadcast_on(int d, T* buf, std::size_t n, int root, stream_type s) const {
    const Comm& c = comm_on(d, "broadcast");
    if (check_) [[unlikely]]
      check_on<T>(d, c, detail::call::broadcast, n, n, root, 0);
    check_root("broadcast", d, root);
    c.broadcast(buf, n, root, s);
  }
  template <class T>
  void all_gather_on(int d, const T* send, T* recv, std::size_t ns, std::size_t nr, stream_type s) const {
    const Comm& c = comm_on(d, "all_gather");
    if (check_) [[unlikely]]
      check_on<T>(d, c, detail::call::all_gather, ns, nr, 0, 0);
    const auto g = static_cast<std::size_t>(layout_.dim_size(d));
    if (nr != ns * g)
      size_error("all_gather", d, "recv has " + std::to_string(nr) + " elements; it needs send's " +
                                      std::to_string(ns) + " times the dim size " + std::to_string(g));
    c.all_gather(send, recv, ns, s);
  }
  template <class T>
  void reduce_scatter_on(int d, const T* send, T* recv, std::size_t ns, std::size_t nr, op o, stream_type s) const {
    const Comm& c = comm_on(d, "reduce_scatter");
    if (check_) [[unlikely]]
      check_on<T>(d, c, detail::call::reduce_scatter, ns, nr, 0, static_cast<int>(o) + 1);
    const auto g = static_cast<std::size_t>(layout_.dim_size(d));
    if (ns % g != 0)
      size_error("reduce_scatter", d, "send has " + std::to_string(ns) + " elements, not divisible by the dim size " +
                                          std::to_string(g));
    if (ns != nr * g)
      size_error("reduce_scatter", d, "send has " + std::to_string(ns) + " elements; it needs recv's " +
                                          std::to_string(nr) + " times the dim size " + std::to_string(g));
    c.reduce_scatter(send, recv, nr, o, s);
  }
  template <class T>
  void all_to_all_on(int d, const T* send, T* recv, std::size_t ns, std::size_t nr, stream_type s) const {
    const Comm& c = comm_on(d, "all_to_all");
    if (check_) [[unlikely]]
      check_on<T>(d, c, detail::call::all_to_all, ns, nr, 0, 0);
    const auto g = static_cast<std::size_t>(layout_.dim_size(d));
    if (ns % g != 0)
      size_error("all_to_all", d, "send has " + std::to_string(ns) + " elements, not divisible by the dim size " +
                                      std::to_string(g));
    if (ns != nr)
      size_error("all_to_all", d, "send has " + std::to_string(ns) + " elements, recv " + std::to_string(nr));
    c.all_to_all(send, recv, ns / g, s);
  }
  std::pair<int, int> shift_peers_on(int d, int displacement, bool periodic) const {
    require_member("shift", d);
    const int n = layout_.dim_size(d);
    const int me = layout_.coordinate_unchecked(state_->position, d);
    auto peer = [&](long long p) {
      if (periodic) return static_cast<int>(((p % n) + n) % n);
      return p < 0 || p >= n ? -1 : static_cast<int>(p);
    };
    return {peer(static_cast<long long>(me) - displacement), peer(static_cast<long long>(me) + displacement)};
  }
  template <class T>
  void shift_on(int d, const T* send, T* recv, std::size_t ns, std::size_t nr, int displacement, bool periodic,
                stream_type s) const {
    const Comm& c = comm_on(d, "shift");
    if (check_) [[unlikely]]
      check_on<T>(d, c, detail::call::shift, ns, nr, displacement, periodic ? 1 : 0);
    if (ns != nr) size_error("shift", d, "send has " + std::to_string(ns) + " elements, recv " + std::to_string(nr));
    const auto [source, dest] = shift_peers_on(d, displacement, periodic);
    c.sendrecv(send, ns, dest, recv, nr, source, s);
  }
};

namespace detail {

/// What every rank must agree on besides the layout: the backend, the mode, the contract
/// settings and the backend options that can describe themselves.
template <communicator Comm>
std::string options_descriptor(const mesh_state<Comm>& st, std::string_view how) {
  const auto& o = st.options;
  std::string s = "[" + std::string(Comm::backend_name()) + ", " + std::string(how) + (o.lazy ? ", lazy" : "") +
                  (st.check_collectives ? ", check_collectives" : "") + (o.share_equal_groups ? ", share_equal_groups" : "");
  const std::string def = describe_options(o.defaults);
  if (!def.empty()) s += ", options " + def;
  for (const auto& [name, opts] : o.per_dim) {
    const std::string d = describe_options(opts);
    s += ", " + name + (d.empty() ? std::string() : "{" + d + "}");
  }
  if (!is_identity_map(o.rank_map)) s += ", rank map " + rank_map_string(o.rank_map);
  if (o.topology.value()) s += ", topology";
  if (!o.intra_node.value().empty()) {
    s += ", intra_node";
    for (const auto& name : o.intra_node.value()) s += " '" + name + "'";
  }
  if (o.node_major.value()) s += ", node_major";
  return s + "]";
}

/// "" if the rank map and topology options fit layout l (how: "init_device_mesh" or
/// "from_comms"), else why not. Local: part of the checks every rank agrees on first.
template <class Layout, communicator C>
std::string placement_error(const mesh_state<C>& st, const Layout& l, std::string_view how) {
  const auto& o = st.options;
  const std::string here = "devmesh: " + std::string(how) + ": ";
  if (o.node_major.value() && !o.rank_map.empty())
    return here + "options.node_major and options.rank_map exclude each other (node-major placement builds the rank "
                  "map from the nodes): drop one";
  if (o.node_major.value() && o.intra_node.value().empty())
    return here + "options.node_major needs options.intra_node, the dims to keep within nodes (e.g. "
                  "options.intra_node = {\"tp\"})";
  if (o.node_major.value() && how == "from_comms")
    return here + "options.node_major cannot reorder adopted communicators: pass options.rank_map instead";
  return rank_map_error(o.rank_map, l.root_size(), st.world_size);
}

/// The state of a new mesh over `world`, with its private control communicator: the first
/// collective step, bounded like every other (a rank passing another communicator times
/// out everywhere instead of hanging). `meanwhile(state)` runs once, while the duplicate is
/// in flight when the backend can do that (MPI), else after it.
template <class C, class W, class Meanwhile>
std::shared_ptr<mesh_state<C>> new_state(W&& world, device_mesh_options<C> options, std::string_view step,
                                         Meanwhile&& meanwhile) {
  auto st = std::make_shared<mesh_state<C>>();
  if constexpr (std::is_lvalue_reference_v<W>) {
    st->world = &world;  // borrowed: the caller keeps it alive longer than every handle
  } else {
    st->owned_world.emplace(std::move(world));
    st->world = &*st->owned_world;
  }
  st->world_rank = st->world->rank();
  st->world_size = st->world->size();
  st->timeout = options.timeout.count() > 0 ? options.timeout : timeout_from_env();
  st->check_collectives = options.check_collectives || check_collectives_from_env();
  st->options = std::move(options);
  const deadline dl = st->start_step();
  auto run = [&, view = static_cast<const mesh_state<C>*>(st.get())] { meanwhile(*view); };
  bounded_step(step, dl, [&] {
    if constexpr (requires { st->world->duplicate(dl, run); }) {
      st->control.emplace(st->world->duplicate(dl, run));
    } else {
      st->control.emplace(st->world->duplicate(dl));
      run();
    }
  });
  ++st->created;
  return st;
}

/// What a rank knows before anything is created: its layout (unless building it failed),
/// why it cannot take part ("" if it can: the layout was built and fits the world) and its
/// mesh descriptor (empty when there is no layout).
template <class Layout>
struct local_checks {
  std::optional<Layout> layout;
  std::string error;
  descriptor mine;
};

/// The local half of the checks: builds the layout with `make` (an exception becomes this
/// rank's error), checks it against the world and describes it. Touches no communicator.
template <class Layout, communicator C, class Make>
local_checks<Layout> check_locally(const mesh_state<C>& st, Make&& make, std::string_view how) {
  local_checks<Layout> out;
  try {
    out.layout.emplace(make());
  } catch (const std::exception& e) {
    out.error = e.what();
    return out;
  }
  const Layout& l = *out.layout;
  if (l.root_size() > st.world_size)
    out.error = std::string(DEVMESH_MSG_WORLD_MISMATCH) + ": " + to_string(l) + " has " +
                std::to_string(l.root_size()) + " ranks, the world " + std::to_string(st.world_size);
  else
    out.error = placement_error(st, l, how);
  out.mine = layout_descriptor(l, options_descriptor(st, how));
  out.mine.seal();
  return out;
}

/// The checks every rank makes before anything is created, agreed over the control
/// communicator so that all ranks throw together, in one all-reduce: the local checks (the
/// layout could be built and fits the world), then the consistency check (every rank has
/// the same mesh descriptor), then `after` (checks of the caller's).
template <class Layout, communicator C>
void check_layout(const mesh_state<C>& st, const local_checks<Layout>& local, std::string_view how,
                  const deadline& dl, std::span<const step_outcome> after = {}) {
  // A rank whose layout failed has no descriptor: its flag decides before the digests count.
  const step_outcome first[] = {{std::string(how), local.error}};
  agree_all(*st.control, how, first, &local.mine, after, dl);
}

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
    check_same(c, descriptor{"nodes " + rank_ranges(nodes), {}}, std::string(step) + ": node discovery", dl);
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
template <class Layout, communicator C>
std::vector<int> settle_placement(mesh_state<C>& st, const Layout& l, std::string_view step, const deadline& dl) {
  const auto settle = st.options.topology_step();
  if (!st.options.wants_topology() || !settle) return st.options.rank_map;
  return settle(st, view_of(l), step, dl);
}

template <class Layout, class W, class C>
device_mesh<Layout, C> init_impl(W&& world, const std::function<Layout()>& make, device_mesh_options<C> options) {
  constexpr std::string_view step = "init_device_mesh";
  local_checks<Layout> local;  // made while the control communicator is being created
  auto st = new_state<C>(std::forward<W>(world), std::move(options), step,
                         [&](const mesh_state<C>& s) { local = check_locally<Layout>(s, make, step); });
  const deadline dl = st->start_step();
  check_layout(*st, local, step, dl);
  const std::optional<Layout>& layout = local.layout;
  st->place(layout->root_size(), settle_placement(*st, *layout, step, dl));
  st->keep_root(*layout);
  if (st->options.lazy) {
    // The parent of the lazy splits: the mesh's members, ranked by position (numbering::position).
    std::string failed;
    try {
      st->lazy_root.emplace(st->control->split(st->is_member() ? 0 : no_color, st->position, {}));
    } catch (const std::exception& e) {
      failed = e.what();
    }
    agree(*st->control, failed, "init_device_mesh: creating the lazy mesh's communicator", dl);
    ++st->created;
  }
  st->ensure_all(*layout, step, true);  // checked above
  return make_device_mesh(*layout, std::move(st));
}

}  // namespace detail

/// Collective over `world`: the device mesh of `layout`, one communicator per dim (eager)
/// created with one split per dim per rank. Pass world as an lvalue to borrow it (it must
/// outlive every handle) or as an rvalue to hand it over. Throws mesh_error on every rank
/// if the ranks disagree on the mesh, or if it does not fit in the world.
template <class Layout, class W, communicator C = std::remove_cvref_t<W>>
device_mesh<Layout, C> init_device_mesh(W&& world, Layout layout, device_mesh_options<C> options = {}) {
  return detail::init_impl<Layout>(std::forward<W>(world), [&] { return layout; }, std::move(options));
}

/// As above for a mesh type: static (it may be smaller than the world, as in PyTorch: the
/// ranks past its size are not members), or with one dynamic dim inferred from the world size.
template <class Layout, class W, communicator C = std::remove_cvref_t<W>>
device_mesh<Layout, C> init_device_mesh(W&& world, device_mesh_options<C> options = {}) {
  const int n = world.size();
  return detail::init_impl<Layout>(
      std::forward<W>(world),
      [n]() -> Layout {
        (void)n;  // unused for static layouts (clang's -Wunused-lambda-capture)
        if constexpr (Layout::is_static)
          return Layout{};
        else if constexpr (requires { Layout::for_world(n); })
          return Layout::for_world(n);
        else
          return Layout{};
      },
      std::move(options));
}

namespace detail {

/// from_comms step 1 (local): each adopted communicator's size and rank against the layout.
template <class Layout, communicator C>
std::string adopted_shape_error(const Layout& layout, const std::array<C, Layout::ndim>& comms,
                                const mesh_state<C>& st) {
  const bool member = st.is_member();
  const int me = st.world_rank;
  const int pos = st.position;
  for (int d = 0; d < Layout::ndim; ++d) {
    const std::string dim = "dim '" + std::string(Layout::name(d)) + "'";
    const C& c = comms[static_cast<std::size_t>(d)];
    if (!member) {
      if (c.valid()) return dim + ": world rank " + std::to_string(me) + " is not in the mesh but has a communicator";
      continue;
    }
    if (!c.valid()) return dim + ": no communicator on world rank " + std::to_string(me) + ", a member of the mesh";
    if (c.size() != layout.dim_size(d))
      return dim + ": the communicator has " + std::to_string(c.size()) + " ranks, the dim " +
             std::to_string(layout.dim_size(d));
    if (c.rank() != layout.comm_split(pos, d).key)
      return dim + ": world rank " + std::to_string(me) + " is rank " + std::to_string(c.rank()) +
             " of the communicator but has index " + std::to_string(layout.comm_split(pos, d).key) + " in its group";
  }
  return {};
}

/// from_comms step 2 (collective over each communicator, bounded): the world ranks of each
/// communicator, in its rank order, must be the layout's group of that dim, through the
/// rank map (rank_map[position]).
template <class Layout, communicator C>
std::string adopted_members_error(const Layout& layout, const std::array<C, Layout::ndim>& comms,
                                  const mesh_state<C>& st, const deadline& dl) {
  if (!st.is_member()) return {};
  const int me = st.world_rank;
  std::string error;
  for (int d = 0; d < Layout::ndim; ++d) {
    const C& c = comms[static_cast<std::size_t>(d)];
    std::vector<std::int32_t> ranks(static_cast<std::size_t>(c.size()));
    const std::int32_t mine = me;
    bounded_step("from_comms", dl, [&] { c.all_gather_bytes(&mine, ranks.data(), sizeof mine, dl); });
    const auto group = layout.dim_layout(d);
    const split_args sa = layout.comm_split(st.position, d);
    for (int i = 0; i < c.size() && error.empty(); ++i) {
      const int p = sa.color + group(i);  // the i-th position of this rank's group
      const int expected = st.world_rank_at(p);
      if (ranks[static_cast<std::size_t>(i)] != expected)
        error = "dim '" + std::string(Layout::name(d)) + "': rank " + std::to_string(i) +
                " of the communicator is world rank " + std::to_string(ranks[static_cast<std::size_t>(i)]) +
                ", the layout's group has world rank " + std::to_string(expected) + " there" +
                (st.rank_map.empty() ? std::string() : " (position " + std::to_string(p) + " of the rank map)");
    }
  }
  return error;
}

}  // namespace detail

/// Adopts existing communicators, one per dim of the layout in dim order (PyTorch
/// from_group). Each communicator keeps its own ownership (a backend's owning or borrowed
/// handle) and is moved into the mesh. Collective over `world`: validates on every rank
/// that each communicator's members are exactly the layout's group of that dim, in order
/// (by all-gathering world ranks over it), and throws mesh_error on every rank otherwise.
/// Non-members (mesh smaller than the world) pass invalid communicators. Aliases of the
/// layout get new communicators of their own. The communicators are used as given: two
/// from_comms calls passed the same handles share them (that is the caller's choice).
template <class Layout, class W, communicator C = std::remove_cvref_t<W>>
device_mesh<Layout, C> from_comms(W&& world, std::array<C, Layout::ndim> comms, Layout layout = {},
                                  device_mesh_options<C> options = {}) {
  options.lazy = false;  // adopted dims exist already; aliases are created now
  constexpr std::string_view step = "from_comms";
  detail::local_checks<Layout> local;
  auto st = detail::new_state<C>(std::forward<W>(world), std::move(options), step, [&](const detail::mesh_state<C>& s) {
    local = detail::check_locally<Layout>(s, [&] { return layout; }, step);
  });
  const deadline dl = st->start_step();
  // The rank map is placed only once checked here; elsewhere the local error decides first.
  if (local.error.empty()) st->place(layout.root_size(), st->options.rank_map);
  st->keep_root(layout);
  // The layout, the consistency check and 1. each communicator's size and rank against the
  // layout, in one agreement; then 2. each communicator's members; then the topology options.
  const detail::step_outcome shapes[] = {
      {std::string(step), local.error.empty() ? detail::adopted_shape_error(layout, comms, *st) : std::string()}};
  detail::check_layout(*st, local, step, dl, shapes);
  detail::agree(*st->control, detail::adopted_members_error(layout, comms, *st, dl), step, dl);
  detail::settle_placement(*st, layout, step, dl);
  for (int d = 0; d < Layout::ndim; ++d) {
    auto e = std::make_unique<typename detail::mesh_state<C>::entry>();
    e->name = std::string(Layout::name(d));
    e->key = detail::group_key_of(layout, d);
    e->options = st->options_of(e->name);
    e->comm = std::make_shared<C>(std::move(comms[static_cast<std::size_t>(d)]));
    st->cache.push_back(std::move(e));
  }
  st->ensure_all(layout, step, true);
  return detail::make_device_mesh(layout, std::move(st));
}

namespace detail {

/// from_comms with one communicator: the rank map that lists its members in its rank order,
/// from every world rank's (rank in it, its size, whether its options have a rank map),
/// all-gathered over a private duplicate of the world. Every rank computes the same map or
/// the same error from the same values, so all throw together.
template <communicator C>
std::vector<int> one_comm_map(const C& world, const C& comm, bool has_map, std::string_view step, const deadline& dl) {
  const std::int32_t mine[3] = {comm.valid() ? comm.rank() : -1, comm.valid() ? comm.size() : 0, has_map ? 1 : 0};
  std::vector<std::int32_t> all(3 * static_cast<std::size_t>(world.size()));
  bounded_step(step, dl, [&] {
    const C ctl = world.duplicate(dl);
    ctl.all_gather_bytes(mine, all.data(), sizeof mine, dl);
  });
  const std::string here = "devmesh: " + std::string(step) + ": ";
  int n = 0;
  for (std::size_t w = 0; w < all.size() / 3; ++w) {
    if (all[3 * w + 2]) throw mesh_error(here + "options.rank_map is set on world rank " + std::to_string(w) +
                                          ": with one communicator, its rank order is the map");
    if (all[3 * w] >= 0 && n == 0) n = all[3 * w + 1];
  }
  if (n == 0) throw mesh_error(here + "no world rank passed a valid communicator");
  std::vector<int> map(static_cast<std::size_t>(n), -1);
  for (std::size_t w = 0; w < all.size() / 3; ++w) {
    const int r = all[3 * w], size = all[3 * w + 1];
    if (r < 0) continue;
    if (size != n)
      throw mesh_error(here + "the communicators passed differ: world rank " + std::to_string(w) + "'s has " +
                       std::to_string(size) + " ranks, another's " + std::to_string(n));
    if (map[static_cast<std::size_t>(r)] >= 0)
      throw mesh_error(here + "world ranks " + std::to_string(map[static_cast<std::size_t>(r)]) + " and " +
                       std::to_string(w) + " are both rank " + std::to_string(r) +
                       " of the communicator they passed: pass one communicator, not one per group");
    map[static_cast<std::size_t>(r)] = static_cast<int>(w);
  }
  return map;  // n members with distinct ranks in [0, n): every entry was set
}

}  // namespace detail

/// PyTorch's DeviceMesh.from_group(group) without a mesh: the 1-D mesh named Name over one
/// existing communicator, its positions in the communicator's rank order (a rank map, so any
/// subset of the world in any order). Collective over `world`; world ranks outside it pass an
/// invalid communicator and are not members. Throws mesh_error on every rank when the ranks
/// passed different communicators (one per group, say) or set options.rank_map.
///   auto dp = dm::from_comms<"dp">(world, std::move(dp_comm));
template <fixed_string Name, class W, communicator C = std::remove_cvref_t<W>>
device_mesh<mesh<dim<Name>>, C> from_comms(W&& world, C comm, device_mesh_options<C> options = {}) {
  const std::string step = "from_comms<\"" + std::string(Name.view()) + "\">";
  const auto timeout = options.timeout.count() > 0 ? options.timeout : timeout_from_env();
  std::vector<int> map = detail::one_comm_map(std::as_const(world), comm, !options.rank_map.empty(), step,
                                              deadline::after(timeout));
  const int n = static_cast<int>(map.size());
  options.rank_map = std::move(map);
  std::array<C, 1> comms{std::move(comm)};
  return from_comms<mesh<dim<Name>>>(std::forward<W>(world), std::move(comms), mesh<dim<Name>>(n), std::move(options));
}

}  // namespace devmesh

namespace std {
/// Device meshes as keys of unordered containers (device_mesh::hash).
template <class Layout, class Comm>
struct hash<devmesh::device_mesh<Layout, Comm>> {
  /// The mesh's hash.
  std::size_t operator()(const devmesh::device_mesh<Layout, Comm>& m) const { return m.hash(); }
};
}  // namespace std
