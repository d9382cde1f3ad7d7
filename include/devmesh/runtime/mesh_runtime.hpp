// devmesh/runtime/mesh_runtime.hpp: the line between the typed layer and the compiled runtime.
//
// A typed call (init_device_mesh<M>, mesh.all_reduce<"dp">, a slice, a flatten) turns names,
// types and layouts into values: a dim index, an element type (element_type.hpp), a layout as
// plain data (layout_description), a dim's site (dim_site); then it calls one function of
// mesh_runtime<Comm>, which knows no mesh type and no element type. mesh_runtime<Comm> is
// compiled once per backend: in the backend's library (DEVMESH_SEPARATE_COMPILATION, an
// explicit instantiation in mpi/impl/src.hpp and nccl/impl/src.hpp) or, header-only, once per
// program. Its definitions are in runtime/impl/ (impl/mesh_runtime.hpp includes them all), with
// the root's full state (impl/mesh_state.hpp), which no typed code sees.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../core/config.hpp"
#include "../core/print.hpp"
#include "backend.hpp"
#include "comm_entry.hpp"
#include "deadline.hpp"
#include "element_type.hpp"
#include "flight_recorder.hpp"
#include "layout_view.hpp"
#include "root_state.hpp"
#include "text_ref.hpp"

namespace devmesh::detail {

/// A mesh's layout as the compiled runtime reads it: its values (view) and the bytes the
/// ranks compare before creating anything (payload: the view, then the modes as the type
/// writes them, static values and slots, so that meshes of equal values but different types
/// differ too).
struct layout_description {
  layout_view view;
  std::string payload;
};

/// A mesh's layout as a typed handle passes it to the runtime: its values (names, modes: the
/// repr's) and its type's own modes (static values, and slots for dynamic ones). Points into
/// the caller's arrays: valid during the call.
struct layout_ref {
  layout_values values;
  int root_size = 0;
  std::span<const int> type_shape, type_stride;
};

/// What the runtime makes of a layout_ref (runtime/impl/layout_description.ipp).
DEVMESH_DECL layout_description describe_layout(const layout_ref& m);

/// A mesh's values gathered into arrays of its own (what layout_ref and layout_values point
/// to): the one thing a mesh type instantiates to hand its layout to untyped code.
template <class Layout>
struct gathered_layout {
  static constexpr auto L = Layout::layout;
  static constexpr int room = L.nmodes > 0 ? L.nmodes : 1;
  int shape[room]{}, stride[room]{};
  int root_size = 0;

  explicit gathered_layout(const Layout& m) : root_size(m.root_size()) {
    for (int i = 0; i < L.nmodes; ++i) shape[i] = m.mode_shape(i), stride[i] = m.mode_stride(i);
  }
  layout_values values() const { return {Layout::names_type::views, L.first, shape, stride, L.nprimary, L.ndims}; }
  layout_ref ref() const {
    return {values(), root_size, std::span<const int>(L.shape, L.nmodes), std::span<const int>(L.stride, L.nmodes)};
  }
};

/// "dim 'tp' of mesh((dp=2, tp=4), stride=(4, 1))": dim d of a layout, for messages.
DEVMESH_DECL std::string dim_where(const layout_values& v, int d);
/// A handle that was moved from was used (`what`: the call).
[[noreturn]] DEVMESH_DECL void throw_moved_from(const char* what, const layout_values& v);
/// A call on dim d that needs this rank in the mesh, on a rank that is not.
[[noreturn]] DEVMESH_DECL void throw_not_member(const char* what, const layout_values& v, int d,
                                                const rank_placement& at);

/// The world a new root is created over: borrowed (the caller keeps it alive longer than every
/// handle) or handed over (moved into the root's state).
template <communicator Comm>
struct world_arg {
  const Comm* borrowed = nullptr;
  Comm* handed = nullptr;
};

/// The watchdog's argument of a backend's calls: const watched_call* (MPI), the backend's
/// watch_type* (NCCL), or none (std::nullptr_t) for a backend without a watchdog.
template <class Comm>
struct watch_arg {
  using type = std::nullptr_t;
};
template <class Comm>
  requires watchable<Comm>
struct watch_arg<Comm> {
  using type = const watched_call*;
};
template <class Comm>
  requires stream_watchable<Comm>
struct watch_arg<Comm> {
  using type = typename Comm::watch_type*;
};
template <class Comm>
using watch_ptr = typename watch_arg<Comm>::type;

/// What a collective needs of its mesh, for one dim: built by the typed handle per call (a
/// few loads).
template <communicator Comm>
struct dim_site {
  const comm_entry<Comm>& entry;  // the dim's communicator and channel
  root_state<Comm>& state;        // the root's state: flight record, watchdog, deadlines
  std::size_t size;               // the dim's size
  bool check;                     // the collective check mode (DEVMESH_CHECK_COLLECTIVES)
  bool watch;                     // the watchdog
  const void* mesh;               // for where(), on failure only
  int dim;
  std::string (*where_of)(const void* mesh, int dim);
  /// "dim 'dp' of mesh(...)", for messages.
  std::string where() const { return where_of(mesh, dim); }
  const Comm& comm() const { return *entry.comm; }
};

/// The compiled runtime of one backend: every untyped step a typed handle takes. Static
/// members, so that one explicit instantiation per backend compiles them all.
template <communicator Comm>
struct mesh_runtime {
  using state = root_state<Comm>;
  using entry = comm_entry<Comm>;
  using state_ptr = std::shared_ptr<state>;
  using options_type = device_mesh_options<Comm>;
  using stream = typename Comm::stream_type;
  using site = dim_site<Comm>;
  /// A call on a communicator, as a typed caller makes it (redistribute's steps): the
  /// communicator and the watchdog's argument (null when unwatched).
  using issue_ref = function_ref<void(const Comm&, watch_ptr<Comm>)>;

  // ---- roots (runtime/impl/init.hpp) ----------------------------------------------------------
  /// init_device_mesh: a root over `world` with the communicators of every dim of `layout`
  /// (eager) or of none yet (lazy). `layout` is null where it could not be built on this rank,
  /// and `layout_error` says why ("" when it could): every rank then throws. Collective.
  static state_ptr init(world_arg<Comm> world, options_type options, const layout_ref* layout,
                        const std::string& layout_error);
  /// from_comms: a root over `world` adopting `comms` (one per dim of `layout`, moved from),
  /// each checked on every rank against the layout. Collective.
  static state_ptr adopt(world_arg<Comm> world, std::span<Comm> comms, options_type options, const layout_ref* layout,
                         const std::string& layout_error);
  /// from_comms with one communicator: the rank map listing its members in its rank order.
  static std::vector<int> one_comm_map(const Comm& world, const Comm& comm, bool has_map, std::string_view step,
                                       const deadline& dl);

  // ---- a handle's dims (runtime/impl/dims.hpp) ------------------------------------------------
  /// out[d]: the cached entry of dim d of `layout` (its name and groups), or null.
  static void find_entries(const state& st, const layout_values& layout, std::span<const entry*> out);
  /// Dim d's entry, on a path where the handle has none resolved: the cache, else (lazy mode)
  /// created now, collectively; `where` names the dim for messages.
  static const entry& dim_entry(state& st, const layout_ref& layout, int d, const char* what, text_ref where);
  /// The entry of the dims `dims` (bit d: dim d; two or more) flattened: cached, or created now
  /// (collective, as flatten).
  static const entry& dims_entry(state& st, const layout_ref& layout, unsigned dims, std::string_view caller);
  /// flatten, unflatten: the missing communicators of `layout` made now (collective),
  /// `new_dims` given `backend_options` when not null; the step recorded in the flight record.
  /// `local_error`: why this rank could not derive the mesh (an unflatten's run-time sizes;
  /// `layout` is then the mesh it was derived from): the ranks agree on it first, so every
  /// rank throws it (eager mode), never a rank waiting for one that has thrown.
  static void derive(state& st, const layout_ref& layout, const char* what,
                     std::span<const std::string_view> new_dims, const typename Comm::options_type* backend_options,
                     std::string_view local_error = {});

  /// Groups that are not a dim (runtime/impl/subgroups.hpp): in every group of dim d, the
  /// members at local ranks `picks` (negative from the end), in that order, as this rank's
  /// communicator (invalid where this rank is not chosen). Collective over every world rank.
  static Comm subgroup(state& st, const layout_ref& layout, int d, std::span<const int> picks, const char* what);

  // ---- the root (runtime/impl/dims.hpp) -------------------------------------------------------
  /// Aborts every communicator devmesh made for the root; never throws.
  static void abort(state& st) noexcept;
  /// This rank's flight record of the root.
  static flight_record record(const state& st);
  /// Writes the flight record into `dir`; its path, or "" when it could not.
  static std::string write_record(const state& st, const std::string& dir);

  // ---- calls (runtime/impl/collective_calls.hpp) ----------------------------------------------
  /// For calls made of several collectives (redistribute): every rank of `group` agrees that
  /// none has a `local_error` and that all describe the call alike (`text`, and its number
  /// among the calls agreed on `group`), else every rank throws mesh_error naming who failed
  /// or differs. One bounded all-reduce.
  static void agree_on_call(state& st, const entry& group, const std::string& text, const std::string& local_error);
  /// A collective on e's communicator made as every collective is made: recorded in the flight
  /// record and, with `watch`, bounded by the watchdog.
  static void collective(state& st, bool watch, const entry& e, std::string_view what, std::string_view type,
                         std::size_t count, text_ref where, issue_ref issue);
  static void barrier(const site& on, stream s);
  static void all_reduce(const site& on, const void* send, void* recv, std::size_t ns, std::size_t nr,
                         element_type t, op o, stream s);
  static void reduce(const site& on, const void* send, void* recv, std::size_t ns, std::size_t nr, element_type t,
                     op o, int root, stream s);
  static void broadcast(const site& on, void* buf, std::size_t n, element_type t, int root, stream s);
  static void all_gather(const site& on, const void* send, void* recv, std::size_t ns, std::size_t nr,
                         element_type t, stream s);
  static void reduce_scatter(const site& on, const void* send, void* recv, std::size_t ns, std::size_t nr,
                             element_type t, op o, stream s);
  static void all_to_all(const site& on, const void* send, void* recv, std::size_t ns, std::size_t nr,
                         element_type t, stream s);
  /// shift: `source` and `dest` local ranks along the dim (-1: none).
  static void shift(const site& on, int source, int dest, const void* send, void* recv, std::size_t ns,
                    std::size_t nr, element_type t, int displacement, bool periodic, stream s);
  static void send_next(const site& on, int dest, const void* send, std::size_t n, element_type t, stream s);
  static void recv_prev(const site& on, int source, void* recv, std::size_t n, element_type t, stream s);

  // ---- report_once (runtime/impl/report.hpp) --------------------------------------------------
  /// Runs `body` (its exit code; what it threw into its argument) on every rank of `world` and
  /// reports failures once (report.hpp's report_once).
  static int report_once(const Comm& world, function_ref<int(std::string&)> body, std::FILE* out,
                         std::chrono::milliseconds timeout);
};

}  // namespace devmesh::detail

#if DEVMESH_INLINE_DEFINITIONS
#include "impl/layout_description.ipp"
#include "impl/mesh_runtime.hpp"
#endif
