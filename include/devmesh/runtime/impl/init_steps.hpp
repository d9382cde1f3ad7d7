// devmesh/runtime/impl/init_steps.hpp: the steps init_device_mesh and from_comms share: the new
// root's state and its private control communicator, the checks every rank makes locally (the
// layout, the world, the rank map and topology options) and the one agreement on them and on
// the mesh descriptor. Nothing collective runs before that agreement.
#pragma once
#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "../../core/diagnostics.hpp"
#include "../backend.hpp"
#include "../deadline.hpp"
#include "../mesh_runtime.hpp"
#include "../options.hpp"
#include "../rank_placement.hpp"
#include "consensus.hpp"
#include "descriptor.hpp"
#include "mesh_state.hpp"

namespace devmesh::detail {

/// "" if the rank map and topology options fit a mesh of n positions (how: "init_device_mesh"
/// or "from_comms"), else why not. Local: part of the checks every rank agrees on first.
template <communicator C>
std::string placement_error(const mesh_state<C>& st, int n, std::string_view how) {
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
  return rank_map_error(o.rank_map, n, st.world_size);
}

/// The flight recorder and the watchdog of a new root (before its first step).
/// The bounds and the flight record's size of a new root, from its options, else the
/// environment, by one rule (parse_seconds, count_from_env): a negative option, a malformed or
/// sub-millisecond variable, a record larger than max_flight_record_entries is refused, never
/// silently the default or off. The error ("" if none) names the option or variable and its
/// value; init agrees on it (check_locally): every rank throws it, naming the rank.
template <communicator C>
std::string resolve_options(mesh_state<C>& st, const device_mesh_options<C>& o, std::size_t& entries) {
  const auto ms = [](std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; };
  const auto too_long = [&](const char* what, std::chrono::milliseconds d) {
    return "devmesh: options." + std::string(what) + " = " + ms(d) + " is above the largest bound, " +
           ms(max_bound) + " (10^9 s: a deadline past it could overflow the clock)";
  };
  if (o.timeout.count() < 0)
    return "devmesh: options.timeout = " + ms(o.timeout) +
           " is negative (a bound is > 0; 0: DEVMESH_TIMEOUT, else 600 s)";
  if (o.timeout > max_bound) return too_long("timeout", o.timeout);
  if (o.watchdog.count() < 0)
    return "devmesh: options.watchdog = " + ms(o.watchdog) +
           " is negative (a bound is > 0; 0: DEVMESH_WATCHDOG, else off; to turn it off, leave it 0)";
  if (o.watchdog > max_bound) return too_long("watchdog", o.watchdog);
  if (o.flight_record_entries < -1 || o.flight_record_entries > static_cast<long>(max_flight_record_entries))
    return "devmesh: options.flight_record_entries = " + std::to_string(o.flight_record_entries) + " is not in [0, " +
           std::to_string(max_flight_record_entries) + "] (0: off; -1: DEVMESH_FLIGHT_RECORD_ENTRIES, else " +
           std::to_string(default_flight_record_entries) + ")";
  try {
    st.timeout = o.resolved_timeout();
    st.watchdog = o.resolved_watchdog();
    st.check_sharding_calls = switch_from_env("DEVMESH_CHECK_SHARDING_CALLS", o.check_sharding_calls);
    entries = o.flight_record_entries >= 0
                  ? static_cast<std::size_t>(o.flight_record_entries)
                  : count_from_env("DEVMESH_FLIGHT_RECORD_ENTRIES", default_flight_record_entries);
  } catch (const mesh_error& e) {
    return e.what();
  }
  if constexpr (!watchable<C> && !stream_watchable<C>)
    if (st.watchdog.count() > 0)
      return std::string("devmesh: options.watchdog / DEVMESH_WATCHDOG: the ") + C::backend_name() +
             " backend has no watchdog yet (docs/reliability.md); unset it";
  return {};
}

/// The flight recorder and the watchdog of a new root (before its first step); what its
/// options or environment break is kept in st.options_error (for check_locally), the
/// defaults used meanwhile (the agreement's bound: 600 s).
template <communicator C>
void start_recording(mesh_state<C>& st, const device_mesh_options<C>& o) {
  static std::atomic<int> roots{0};
  st.index = roots.fetch_add(1, std::memory_order_relaxed);
  std::size_t entries = 0;
  st.options_error = resolve_options(st, o, entries);
  if (!st.options_error.empty()) st.timeout = default_timeout, st.watchdog = {}, entries = 0;
  st.recorder.resize(entries);
  for (int r = 0; r < st.world_size; ++r) st.steps.world_ranks.push_back(r);
}

/// What a rank knows before anything is created: its layout (null when building it failed),
/// why it cannot take part ("" if it can: the layout was built and fits the world) and its
/// mesh descriptor (empty when there is no layout).
struct local_checks {
  const layout_description* layout = nullptr;
  std::string error;
  descriptor mine;
};

/// The local half of the checks: the layout (or why it could not be built here) against the
/// world, described. Touches no communicator.
template <communicator C>
local_checks check_locally(const mesh_state<C>& st, const layout_description* layout, const std::string& layout_error,
                           std::string_view how) {
  local_checks out{layout, layout_error, {}};
  if (out.error.empty()) out.error = st.options_error;
  if (!layout) return out;
  const layout_view& v = layout->view;
  if (v.root_size > st.world_size)
    out.error = std::string(DEVMESH_MSG_WORLD_MISMATCH) + ": " + to_string(v) + " has " +
                std::to_string(v.root_size) + " ranks, the world " + std::to_string(st.world_size);
  else if (out.error.empty())
    out.error = placement_error(st, v.root_size, how);
  out.mine = describe(*layout, options_descriptor(st.options, st.check_collectives, st.check_sharding_calls, how));
  out.mine.seal();
  return out;
}

/// The state of a new mesh over `world`, with its private control communicator: the first
/// collective step, bounded like every other (a rank passing another communicator times out
/// everywhere instead of hanging). `meanwhile(state)` runs once, while the duplicate is in
/// flight when the backend can do that (MPI), else after it.
template <communicator C>
std::shared_ptr<mesh_state<C>> new_state(world_arg<C> world, device_mesh_options<C> options, std::string_view step,
                                         function_ref<void(const mesh_state<C>&)> meanwhile) {
  auto st = std::make_shared<mesh_state<C>>();
  if (world.handed) {
    st->owned_world.emplace(std::move(*world.handed));
    st->world = &*st->owned_world;
  } else {
    st->world = world.borrowed;  // the caller keeps it alive longer than every handle
  }
  st->world_rank = st->world->rank();
  st->world_size = st->world->size();
  st->check_collectives = options.check_collectives || check_collectives_from_env();
  start_recording(*st, options);
  st->options = std::move(options);
  const deadline dl = st->start_step();
  const auto run = [&] { meanwhile(*st); };
  bounded_step(step, dl, [&] {
    if constexpr (requires { st->world->duplicate(dl, call_ref<void>(run)); }) {
      st->control.emplace(st->world->duplicate(dl, call_ref<void>(run)));
    } else {
      st->control.emplace(st->world->duplicate(dl));
      run();
    }
  });
  ++st->created;
  return st;
}

/// The checks every rank makes before anything is created, agreed over the control
/// communicator so that all ranks throw together, in one all-reduce: the local checks (the
/// layout could be built and fits the world), then the consistency check (every rank has the
/// same mesh descriptor), then `after` (checks of the caller's).
template <communicator C>
void check_layout(const mesh_state<C>& st, const local_checks& local, std::string_view how, const deadline& dl,
                  std::span<const step_outcome> after = {}) {
  // A rank whose layout failed has no descriptor: its flag decides before the digests count.
  const step_outcome first[] = {{std::string(how), local.error}};
  agree_all(*st.control, how, first, &local.mine, after, dl);
}

}  // namespace devmesh::detail
