// devmesh/runtime/device_mesh.hpp: device_mesh, a mesh layout bound to one communicator per
// dim (PyTorch's DeviceMesh), generic over any backend that models devmesh::communicator.
//
//   auto mesh = dm::init_device_mesh<mesh3d>(world);   // init.hpp: collective over world
//   mesh.all_reduce<"dp">(grad, dm::op::sum);          // collectives.hpp
//
// A device_mesh is a cheap copyable handle: its layout value (the core basic_mesh) plus a
// std::shared_ptr to the state of the root it came from (root_state.hpp: what the handle
// reads; the rest, the world, the private control communicator, the communicator cache, is
// the compiled runtime's: mesh_runtime.hpp). Slices share the cache and never create;
// flatten/unflatten create only the missing communicators. The communicators die with the
// last handle, in reverse creation order, the world last.
//
// The handle is the typed layer: it turns names into dim indices and its layout into plain
// data, and calls mesh_runtime<Comm>, compiled once per backend. The runtime uses only what
// backend.hpp specifies: no MPI or NCCL call lives here.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/diagnostics.hpp"
#include "../core/dim.hpp"
#include "../core/fixed_string.hpp"
#include "../core/mesh.hpp"
#include "../core/print.hpp"
#include "../core/queries.hpp"
#include "backend.hpp"
#include "collectives.hpp"
#include "comm_entry.hpp"
#include "derivations.hpp"
#include "dim_select.hpp"
#include "flight_recorder.hpp"
#include "mesh_runtime.hpp"
#include "options.hpp"
#include "root_state.hpp"
#include "topology.hpp"

namespace devmesh {

namespace detail {
// Declared with device_mesh in derivations.hpp.
template <class Layout, communicator Comm>
device_mesh<Layout, Comm> make_device_mesh(const Layout& l, std::shared_ptr<root_state<Comm>> s) {
  return device_mesh<Layout, Comm>(l, std::move(s));
}

/// Every dim of a mesh, as the bits flattened_comm and redistribute's steps take.
template <class Layout>
constexpr unsigned all_dims_of() {
  static_assert(Layout::ndim < 32, "devmesh: a group of dims is a bit set of at most 31 dims");
  return (1u << Layout::ndim) - 1u;
}

/// The one dim that `bits` names (bit d: dim d of m), or -1 if it names several; throws
/// mesh_error, naming `caller`, if it names none or a dim m does not have.
template <class Layout>
int single_dim(const Layout& m, unsigned bits, const char* caller) {
  if (bits == 0 || (Layout::ndim < 32 && (bits >> Layout::ndim) != 0))
    throw mesh_error("devmesh: " + std::string(caller) + "(" + std::to_string(bits) + ") on " + to_string(m) +
                     ": the bits must name some of its " + std::to_string(Layout::ndim) + " dims");
  if ((bits & (bits - 1)) != 0) return -1;
  int d = 0;
  while (!((bits >> d) & 1u)) ++d;
  return d;
}

/// What code compiled once per backend reads of a device mesh to run collectives over its groups
/// (redistribute's executor): the root's state, the check mode, the watchdog, and the entry
/// of a set of dims (bit d: dim d; several: made on first use, collectively, as flattened_comm).
template <communicator Comm>
struct group_site {
  root_state<Comm>& state;
  bool check;
  bool watch;
  const void* mesh;
  const comm_entry<Comm>& (*entry_of)(const void* mesh, unsigned dims);
  /// The communicator and channel of the dims `dims`.
  const comm_entry<Comm>& entry(unsigned dims) const { return entry_of(mesh, dims); }
};
template <class Layout, communicator Comm>
group_site<Comm> group_site_of(const device_mesh<Layout, Comm>& mesh);
}  // namespace detail

/// A mesh layout bound to communicators: one per dim, created collectively by
/// init_device_mesh or adopted by from_comms. Copies are handles to the same
/// communicators; a moved-from handle keeps its layout and holds no communicators: every
/// member that needs them, or this rank, throws mesh_error until a mesh is assigned to it.
/// Creating and deriving are collective and single-threaded; collectives on different dims
/// may run from different threads under MPI_THREAD_MULTIPLE (docs/reliability.md).
/// The typed collectives (all_reduce, reduce, broadcast, all_gather, reduce_scatter,
/// all_to_all, barrier, shift, send_next, recv_prev) are members of collectives_of.
template <class Layout, communicator Comm>
class device_mesh : public collectives_of<device_mesh<Layout, Comm>, Layout, Comm>,
                    public derivations_of<device_mesh<Layout, Comm>, Layout, Comm> {
  using state_type = detail::root_state<Comm>;
  using runtime = detail::mesh_runtime<Comm>;
  template <class, communicator>
  friend class device_mesh;
  friend class collectives_of<device_mesh, Layout, Comm>;
  template <class, class, communicator>
  friend class derivations_of;
  template <class L, communicator C>
  friend detail::group_site<C> detail::group_site_of(const device_mesh<L, C>&);
  template <class L, communicator C>
  friend device_mesh<L, C> detail::make_device_mesh(const L&, std::shared_ptr<detail::root_state<C>>);

  Layout layout_;
  std::shared_ptr<state_type> state_;
  // Each dim's communicator, resolved once per handle (eager mode, members): comm<"tp">()
  // and every collective are then a load, not a cache search. Entries never move (the
  // cache owns each one) and live as long as state_.
  std::array<const detail::comm_entry<Comm>*, Layout::ndim_with_aliases> comms_{};
  bool check_ = false;  // the collective check mode, copied here: off costs one branch
  bool watch_ = false;  // the watchdog, likewise

  device_mesh(const Layout& l, std::shared_ptr<state_type> s)
      : layout_(l), state_(std::move(s)), check_(state_->check_collectives), watch_(state_->watchdog.count() > 0) {
    if (state_->options.lazy || !state_->is_member()) return;
    runtime::find_entries(*state_, detail::gathered_layout<Layout>(layout_).values(), comms_);
  }

  template <fixed_string N>
  static constexpr int dim = detail::select_dim<Layout, N>();

 public:
  using layout_type = Layout;
  using communicator_type = Comm;
  using stream_type = typename Comm::stream_type;
  using options_type = device_mesh_options<Comm>;
  static constexpr int ndim = Layout::ndim;

  /// A handle to the same communicators.
  device_mesh(const device_mesh&) = default;
  /// Now a handle to o's communicators.
  device_mesh& operator=(const device_mesh&) = default;
  /// Takes o's communicators: o is left moved-from (its layout, no communicators).
  device_mesh(device_mesh&& o) noexcept
      : layout_(o.layout_),
        state_(std::move(o.state_)),
        comms_(std::exchange(o.comms_, {})),
        check_(o.check_),
        watch_(o.watch_) {}
  /// Takes o's communicators: o is left moved-from (its layout, no communicators).
  device_mesh& operator=(device_mesh&& o) noexcept {
    layout_ = o.layout_;
    state_ = std::move(o.state_);
    comms_ = std::exchange(o.comms_, {});  // o's collectives must not find them
    check_ = o.check_;
    watch_ = o.watch_;
    return *this;
  }

  // ---- where this rank is ----------------------------------------------------------------
  /// The layout (the core basic_mesh value): every constexpr query lives there.
  const Layout& layout() const { return layout_; }
  /// This process's rank in the world communicator.
  int rank() const { return state("rank").world_rank; }
  /// This rank's position in the root mesh: the rank every layout query takes (coordinate,
  /// local ranks, groups), i.e. the index of rank() in the rank map, or rank() itself
  /// without one. Throws on non-members.
  int position() const {
    require_member("position", 0);
    return state_->position;
  }
  /// The root's rank map, position -> world rank (options.rank_map, or the node-major map
  /// init built); empty when position p is world rank p. Shared by every derived mesh.
  const std::vector<int>& rank_map() const { return state("rank_map").rank_map; }
  /// The node of every world rank (node ids 0..n-1, numbered by the lowest rank on each
  /// node), as init discovered them; empty when the options did not ask (options.topology,
  /// intra_node, node_major).
  const std::vector<int>& node_of_rank() const { return state("node_of_rank").node_of_rank; }
  /// Number of ranks in the world communicator.
  int world_size() const { return state("world_size").world_size; }
  /// False on world ranks outside the mesh (past a mesh smaller than the world, or not in
  /// its rank map): they have no communicator and every collective throws.
  bool is_member() const { return state("is_member").is_member(); }
  /// This rank's coordinate in the (sub)mesh containing it; nullopt on non-members.
  std::optional<std::array<int, ndim>> coordinate() const {
    if (!state("coordinate").is_member()) return std::nullopt;
    return layout_.coordinate(state_->position);
  }
  /// `mesh.local_rank<"tp">()`: this rank's index along dim N (PyTorch get_local_rank("tp"));
  /// with no name, along the only dim of a 1-D mesh. Throws on non-members.
  template <fixed_string N = "">
  int local_rank() const {
    return coordinate_on(dim<N>, "local_rank");
  }
  /// This rank's index along a dim chosen at run time, by name or index (PyTorch
  /// get_local_rank("tp") / get_local_rank(1)).
  int local_rank(dim_ref d) const { return coordinate_on(select(d, "local_rank"), "local_rank"); }

  // ---- sizes and names --------------------------------------------------------------------
  /// Number of ranks of the mesh (PyTorch size()).
  int size() const { return layout_.size(); }
  /// `mesh.size<"tp">()`: the number of ranks along dim N (aliases too).
  template <fixed_string N>
  int size() const {
    return layout_.dim_size(dim<N>);
  }
  /// Number of ranks along a dim chosen at run time, by name or index (PyTorch size(mesh_dim)).
  int size(dim_ref d) const { return layout_.dim_size(select(d, "size")); }
  /// The sizes of the mesh's dims (PyTorch mesh.shape).
  std::array<int, ndim> shape() const { return layout_.shape(); }
  /// The mesh's dim names, in order (PyTorch mesh_dim_names); aliases are not included.
  std::array<std::string_view, ndim> names() const {
    std::array<std::string_view, ndim> out{};
    for (int d = 0; d < ndim; ++d) out[static_cast<std::size_t>(d)] = Layout::name(d);
    return out;
  }
  /// The index of dim `name`: 0 <= index < ndim for the mesh's dims, past them for its
  /// aliases (flattened dims), as the compile-time dim_index<"name">().
  int dim_index(std::string_view name) const { return select(name, "dim_index"); }

  // ---- communicators ------------------------------------------------------------------------
  /// `mesh.comm<"tp">()`: the communicator of dim N (.rank(), .size(), .native()); with no
  /// name, of the only dim of a 1-D mesh (PyTorch get_group()). Throws on non-members. In lazy mode the first call
  /// for a dim creates it (collective over the mesh).
  template <fixed_string N = "">
  const Comm& comm() const {
    // The fast path inline: a load and a test (the handle resolved its dims when made).
    if (const auto* e = comms_[static_cast<std::size_t>(dim<N>)]) return *e->comm;
    return comm_on(dim<N>, "comm");
  }
  /// The communicator of a dim chosen at run time, by name or index (PyTorch get_group("tp"),
  /// get_group(1); a loop over [0, ndim) is get_all_groups).
  const Comm& comm(dim_ref d) const { return comm_on(select(d, "comm"), "comm"); }
  /// The communicator of several dims flattened (bit d of `dim_bits`: dim d; one bit: comm(d)),
  /// PyTorch's _flatten without a new mesh: made on first use, collectively as flatten(), and
  /// cached under the default flatten name ("dp_tp"), which flatten<>() finds too.
  const Comm& flattened_comm(unsigned dim_bits) const {
    return *dims_entry(dim_bits, "flattened_comm").comm;
  }
  /// The world communicator this mesh was created over.
  const Comm& world() const { return *state("world").world; }
  /// Number of communicators created so far by this mesh and everything derived from it:
  /// its private control communicator (a duplicate of the world), in lazy mode the
  /// members' communicator, and one per dim (adopted communicators are not counted).
  int communicator_count() const { return state("communicator_count").created; }
  /// The options the mesh was created with (shared by everything derived from it).
  const options_type& options() const { return state("options").options; }

  // ---- the whole mesh ----------------------------------------------------------------------
  /// Aborts every communicator devmesh made for this mesh's root: every dim's (of this
  /// handle and of every mesh derived from the same init_device_mesh or from_comms), the
  /// lazy parent and the control duplicate; never the world you passed. NCCL:
  /// ncclCommAbort, which also ends work in flight; MPI: the communicators become unusable
  /// (MPI's calls here are blocking: nothing is in flight). Afterwards every collective,
  /// flatten or unflatten on any of those handles throws comm_error. Local, not collective:
  /// for a rank that gives up on its peers (a timeout, an error elsewhere). Not while
  /// another thread is inside a call on the same mesh (docs/runtime.md). A no-op on a
  /// moved-from handle.
  void abort() const noexcept {
    if (state_) runtime::abort(*state_);
  }
  /// This rank's flight record of the root mesh: its last collectives (and devmesh's own
  /// steps) on every dim, oldest first, with their numbers on the dim, times and states
  /// (docs/reliability.md). Printable. Local; not while another thread is inside a call on
  /// the same root (the entries are read as they are). Its entries name their dims through
  /// the root's channels: read and print it while a handle of the root lives.
  devmesh::flight_record flight_record() const { return runtime::record(state("flight_record")); }
  /// Writes flight_record() to DIR/devmesh-fr.meshI.rankR.txt (what a watchdog time-out
  /// writes with DEVMESH_FLIGHT_RECORD=DIR) and returns the file's path; throws comm_error
  /// when it cannot.
  std::string dump_flight_record(const std::string& dir) const {
    const std::string path = runtime::write_record(state("dump_flight_record"), dir);
    if (path.empty()) throw comm_error("devmesh: dump_flight_record: cannot write a file into '" + dir + "'");
    return path;
  }
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
    if (state("topology").node_of_rank.empty())
      throw mesh_error("devmesh: topology() on " + to_string(layout_) +
                       ": the nodes were not discovered at init (set options.topology = true, or intra_node or "
                       "node_major, in the options of init_device_mesh or from_comms)");
    const std::vector<int> map = state_->positions_to_world();
    return devmesh::topology(layout_, state_->node_of_rank, map);
  }
  /// The link costs dm::calibrate measured on this mesh's root, by dim name (empty before any).
  const options_by_dim<link_cost>& measured_links() const { return state("measured_links").measured_links; }
  /// Keeps `links` as measured, by dim name, for every handle of this root (dm::calibrate
  /// calls it on every rank with the same values). Local; a creation step, as flatten is: not
  /// while another thread redistributes on this root.
  void keep_measured_links(const options_by_dim<link_cost>& links) const {
    auto& st = state("keep_measured_links");
    for (const auto& [name, cost] : links) st.measured_links[name] = cost;
    ++st.links_version;
  }
  /// What identifies the link costs this mesh's dims have now: its root (this process's n-th)
  /// and the times calibrate changed them. Equal keys, equal links (redistribute keeps plans by it).
  std::pair<int, int> links_key() const {
    const auto& st = state("links_key");
    return {st.index, st.links_version};
  }
  /// The root mesh this mesh was derived from (PyTorch _get_root_mesh): the mesh of
  /// init_device_mesh or from_comms, over the same communicators (a handle, not a copy; a
  /// root's root is itself). Root is a mesh type of the root's names and layout (C++ cannot
  /// recover the type from a derived one): the root's own type, or its static or dynamic
  /// twin, converted as std::extents are. Another type, or a static size that differs,
  /// throws mesh_error naming the root. Local.
  template <class Root>
  device_mesh<Root, Comm> root() const {
    state("root");
    std::string dims;
    for (int d = 0; d < Root::ndim; ++d) (dims += d ? ", " : "") += Root::name(d);
    const std::string what = "devmesh: root<M>() with M a mesh of dims (" + dims + ") on " + where(0) +
                             ": the root of this mesh is ";
    return device_mesh<Root, Comm>(detail::mesh_of_view<Root>(state_->root, what), state_);
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
    return detail::hash_mesh(layout_) ^ (reinterpret_cast<std::uintptr_t>(state_.get()) * 0x9e3779b97f4a7c15ULL);
  }
  /// device_mesh(<backend>, <the layout>, rank r), plus ", not a member" off the mesh and
  /// ", position p" under a rank map; ", moved from" instead of the rank on a moved-from handle.
  friend std::string to_string(const device_mesh& m) {
    std::string s = "device_mesh(" + std::string(Comm::backend_name()) + ", " + to_string(m.layout_);
    if (!m.state_) return s + ", moved from)";
    s += ", rank " + std::to_string(m.rank());
    if (!m.is_member()) s += ", not a member";
    else if (!m.state_->rank_map.empty()) s += ", position " + std::to_string(m.state_->position);
    return s + ')';
  }
  /// Streams to_string(m). A template over the stream, as the core's printers: no
  /// `<ostream>` for files that never stream a mesh.
  template <class Char, class Traits>
  friend std::basic_ostream<Char, Traits>& operator<<(std::basic_ostream<Char, Traits>& os, const device_mesh& m) {
    return os << to_string(m);
  }

 private:
  int select(dim_ref d, const char* what) const { return detail::select_dim<Layout>(d, what, to_string(layout_)); }
  std::string where(int d) const { return detail::dim_where(detail::gathered_layout<Layout>(layout_).values(), d); }
  /// The root's state; mesh_error naming `what` on a moved-from handle (one test, cold).
  state_type& state(const char* what) const {
    if (!state_) [[unlikely]]
      moved_from(what);
    return *state_;
  }
  [[noreturn, gnu::cold, gnu::noinline]] void moved_from(const char* what) const {
    detail::throw_moved_from(what, detail::gathered_layout<Layout>(layout_).values());
  }
  void require_member(const char* what, int d) const {
    if (!state(what).is_member()) [[unlikely]]
      detail::throw_not_member(what, detail::gathered_layout<Layout>(layout_).values(), d, *state_);
  }
  /// This rank's coordinate along dim d (aliases too). Throws on non-members.
  int coordinate_on(int d, const char* what) const {
    require_member(what, d);
    return layout_.coordinate_unchecked(state_->position, d);
  }
  /// Dim d's communicator and its channel (what the flight recorder counts).
  const detail::comm_entry<Comm>& entry_on(int d, const char* what) const {
    if (const auto* e = comms_[static_cast<std::size_t>(d)]) [[likely]]
      return *e;  // resolved at construction
    require_member(what, d);
    return runtime::dim_entry(*state_, detail::gathered_layout<Layout>(layout_).ref(), d, what,
                              [&] { return where(d); });
  }
  const Comm& comm_on(int d, const char* what) const { return *entry_on(d, what).comm; }
  /// The communicator and channel of the dims `bits` (one, or several flattened).
  const detail::comm_entry<Comm>& dims_entry(unsigned bits, const char* what) const {
    if (const int d = detail::single_dim(layout_, bits, what); d >= 0) return entry_on(d, what);
    require_member(what, 0);
    return runtime::dims_entry(*state_, detail::gathered_layout<Layout>(layout_).ref(), bits, what);
  }
};

namespace detail {
/// The mesh's group_site (a member's handle: not moved from).
template <class Layout, communicator Comm>
group_site<Comm> group_site_of(const device_mesh<Layout, Comm>& mesh) {
  const auto entry = [](const void* m, unsigned dims) -> const comm_entry<Comm>& {
    return static_cast<const device_mesh<Layout, Comm>*>(m)->dims_entry(dims, "flattened_comm");
  };
  return {*mesh.state_, mesh.check_, mesh.watch_, &mesh, entry};
}
}  // namespace detail

/// This rank's (sub)mesh as PyTorch prints its mesh tensor, in world ranks (ranks(), through
/// the rank map), nested by dim: "[[0, 1, 2, 3], [4, 5, 6, 7]]". Throws on non-members.
template <class Layout, class Comm>
std::string rank_nested(const device_mesh<Layout, Comm>& m) {
  return detail::draw_ranks(m.layout(), m.ranks(), [](const auto& b) { return detail::nested_text(b); });
}
/// This rank's (sub)mesh as a table of world ranks (the core's rank_grid, print.hpp): rows the
/// next-to-last dim, columns the last; every line starts with `indent`. Throws on non-members.
template <class Layout, class Comm>
std::string rank_grid(const device_mesh<Layout, Comm>& m, std::string_view indent = {}) {
  return detail::draw_ranks(m.layout(), m.ranks(), [indent](const auto& b) { return detail::grid_text(b, indent); });
}

/// mesh.comm<N>(): the communicator of dim N (no name: the only dim of a 1-D mesh), for
/// generic code (no `.template`).
template <fixed_string N = "", device_mesh_like M>
const typename M::communicator_type& comm(const M& mesh) {
  return mesh.template comm<N>();
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
