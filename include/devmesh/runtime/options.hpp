// devmesh/runtime/options.hpp: device_mesh_options, how a device mesh creates its
// communicators and the runtime contract's knobs; the optional hooks a backend's options may
// have (describe(), a name).
#pragma once
#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/link_cost.hpp"
#include "backend.hpp"
#include "deadline.hpp"

namespace devmesh {

namespace detail {
template <communicator Comm>
struct mesh_state;
struct layout_view;
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

/// Backend options by dim name, in name order: std::map's interface as options.per_dim uses
/// it (operator[], find, count, contains, emplace, erase, iteration over (name, options)
/// pairs), with string_view look-ups. A sorted vector: a mesh names a handful of dims, and
/// std::map costs every TU that includes devmesh.hpp (docs/benchmarks.md, issue 21 item 5).
template <class Options>
class options_by_dim {
 public:
  using value_type = std::pair<std::string, Options>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  /// The options of `name`, default ones added first if it has none.
  Options& operator[](std::string_view name) {
    auto it = lower(entries_, name);
    if (it == entries_.end() || it->first != name) it = entries_.insert(it, value_type(std::string(name), Options{}));
    return it->second;
  }
  /// Adds (name, o) unless name has options; the entry, and whether it was added.
  std::pair<iterator, bool> emplace(std::string name, Options o) {
    auto it = lower(entries_, name);
    if (it != entries_.end() && it->first == name) return {it, false};
    return {entries_.insert(it, value_type(std::move(name), std::move(o))), true};
  }
  /// Removes name's options; the number removed (0 or 1).
  std::size_t erase(std::string_view name) {
    const auto it = find(name);
    if (it == entries_.end()) return 0;
    entries_.erase(it);
    return 1;
  }
  /// The entry of name, or end().
  iterator find(std::string_view name) { return found(entries_, name); }
  /// The entry of name, or end().
  const_iterator find(std::string_view name) const { return found(entries_, name); }
  /// 1 if name has options, else 0.
  std::size_t count(std::string_view name) const { return find(name) != end() ? 1 : 0; }
  /// True if name has options.
  bool contains(std::string_view name) const { return count(name) != 0; }
  /// The first entry, in name order.
  iterator begin() { return entries_.begin(); }
  /// Past the last entry.
  iterator end() { return entries_.end(); }
  /// The first entry, in name order.
  const_iterator begin() const { return entries_.begin(); }
  /// Past the last entry.
  const_iterator end() const { return entries_.end(); }
  /// The number of names with options.
  std::size_t size() const { return entries_.size(); }
  /// True if no name has options.
  bool empty() const { return entries_.empty(); }
  /// Removes every entry.
  void clear() { entries_.clear(); }

 private:
  // The first entry not before name (a walk: a mesh names a handful of dims), and name's
  // entry or end(): for entries_ const or not.
  template <class Entries>
  static auto lower(Entries& entries, std::string_view name) {
    auto it = entries.begin();
    while (it != entries.end() && std::string_view(it->first) < name) ++it;
    return it;
  }
  template <class Entries>
  static auto found(Entries& entries, std::string_view name) {
    const auto it = lower(entries, name);
    return it != entries.end() && it->first == name ? it : entries.end();
  }
  std::vector<value_type> entries_;
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
  options_by_dim<comm_options> per_dim{};
  /// Opt-in: create a dim's communicator on its first use instead of at init. The first
  /// use is then collective over all the mesh's ranks (every member must make it, in the
  /// same order); the parent of these splits is a communicator of the whole mesh.
  bool lazy = false;
  /// Bound of every collective step devmesh takes on its own behalf (init, consistency
  /// check, communicator creation, flatten, unflatten, from_comms, the collective check).
  /// 0: DEVMESH_TIMEOUT (seconds) from the environment, else 600 s. Negative: an error at init
  /// (as a malformed DEVMESH_TIMEOUT: one rule, deadline.hpp's parse_seconds).
  std::chrono::milliseconds timeout{0};
  /// Every collective first agrees across its group on operation, element type, counts,
  /// root and op, and throws on every rank on a difference. Also on when the environment
  /// has DEVMESH_CHECK_COLLECTIVES=1. Off: one branch per collective.
  bool check_collectives = false;
  /// redistribute, distribute and full_tensor first agree across the mesh on what the call
  /// is: both specs, the extents, the element type, the plan, every rank's buffers against
  /// the specs, and the call's number among those agreed on the mesh's group. A rank that
  /// differs makes every rank throw mesh_error naming it, before any data moves (PyTorch
  /// leaves this to the caller: from_local's run_check is off by default). One bounded
  /// all-reduce of 11 words per call (docs/reliability.md: its cost). Off: false, or
  /// DEVMESH_CHECK_SHARDING_CALLS=0 (0 or 1; it overrides this), or dm::no_call_check on one
  /// call. Every rank must give the same (init checks it).
  bool check_sharding_calls = true;
  /// The watchdog: every collective on the mesh's dims must complete within this bound, or
  /// the mesh's communicators are aborted and every rank that waited throws comm_error
  /// naming the dim, the call and its number on the dim (docs/reliability.md). 0:
  /// DEVMESH_WATCHDOG (seconds; 0 or unset: off). Off, it costs one branch per collective.
  /// Negative: an error at init, never silently off.
  std::chrono::milliseconds watchdog{0};
  /// Entries of the flight record (the last calls, for after the fact: flight_record()),
  /// rounded up to a power of two; -1: DEVMESH_FLIGHT_RECORD_ENTRIES, else 1024; 0: off. Below
  /// -1 or above 2^24 (max_flight_record_entries): an error at init naming the value.
  long flight_record_entries = -1;
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
  /// The α-β cost of each dim's links, by dim name, for redistribute's planner (docs/sharding.md,
  /// "The cost model"): a dim without an entry takes what dm::calibrate measured, else its
  /// topology's default (link_cost::shared_memory() or nvlink() within a node, network()
  /// across nodes). Every rank must give the same (DEVMESH_CHECK_COLLECTIVES checks the plans).
  options_by_dim<link_cost> links{};
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
  /// The bound of devmesh's own steps: timeout, else DEVMESH_TIMEOUT, else 600 s.
  std::chrono::milliseconds resolved_timeout() const { return timeout.count() > 0 ? timeout : timeout_from_env(); }
  /// The bound of a step taken before init has agreed on the options (from_comms's map of one
  /// communicator): resolved_timeout(), or 600 s where the option or DEVMESH_TIMEOUT breaks the
  /// rule. Never throws: one rank's bad value must not leave its peers waiting in that step;
  /// init then refuses it on every rank, naming the rank.
  std::chrono::milliseconds timeout_before_agreement() const noexcept {
    if (timeout.count() < 0 || timeout > max_bound) return default_timeout;
    try {
      return resolved_timeout();
    } catch (...) {
      return default_timeout;
    }
  }
  /// The watchdog's bound: watchdog, else DEVMESH_WATCHDOG; 0 ms: off.
  std::chrono::milliseconds resolved_watchdog() const {
    return watchdog.count() > 0 ? watchdog : seconds_from_env("DEVMESH_WATCHDOG", {}, true);
  }

  /// The options dim `name` is created with.
  const comm_options& for_dim(std::string_view name) const {
    auto it = per_dim.find(name);
    return it == per_dim.end() ? defaults : it->second;
  }
};

namespace detail {

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
/// What two dims' options are compared by (sharing a communicator, a per-call option that
/// must match the one a dim has): the name hook and the description.
template <class O>
std::string options_key(const O& o) {
  return options_name(o) + "|" + describe_options(o);
}

}  // namespace detail
}  // namespace devmesh
