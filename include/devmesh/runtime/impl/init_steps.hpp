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
template <communicator C>
void start_recording(mesh_state<C>& st, const device_mesh_options<C>& o) {
  static std::atomic<int> roots{0};
  st.index = roots.fetch_add(1, std::memory_order_relaxed);
  st.watchdog = o.resolved_watchdog();
  if constexpr (!watchable<C> && !stream_watchable<C>)
    if (st.watchdog.count() > 0)
      throw mesh_error(std::string("devmesh: options.watchdog / DEVMESH_WATCHDOG: the ") + C::backend_name() +
                       " backend has no watchdog yet (docs/reliability.md); unset it");
  st.recorder.resize(o.flight_record_entries >= 0 ? static_cast<std::size_t>(o.flight_record_entries)
                                                  : count_from_env("DEVMESH_FLIGHT_RECORD_ENTRIES",
                                                                   default_flight_record_entries));
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
  if (!layout) return out;
  const layout_view& v = layout->view;
  if (v.root_size > st.world_size)
    out.error = std::string(DEVMESH_MSG_WORLD_MISMATCH) + ": " + to_string(v) + " has " +
                std::to_string(v.root_size) + " ranks, the world " + std::to_string(st.world_size);
  else
    out.error = placement_error(st, v.root_size, how);
  out.mine = describe(*layout, options_descriptor(st.options, st.check_collectives, how));
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
  st->timeout = options.resolved_timeout();
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
