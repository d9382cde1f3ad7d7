// devmesh/runtime/impl/dims.hpp: mesh_runtime's answers to a handle about its dims (the cached
// communicators, those created on first use, the flattened groups redistribute runs on, the
// ones flatten and unflatten make) and about its whole root (abort, the flight record).
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../mesh_runtime.hpp"
#include "create_comms.hpp"
#include "init.hpp"
#include "mesh_state.hpp"

namespace devmesh::detail {

template <communicator Comm>
void mesh_runtime<Comm>::find_entries(const state& st, const layout_values& layout, std::span<const entry*> out) {
  const mesh_state<Comm>& s = full_state(st);
  // Once per handle: the cache grows after init (a flatten, unflatten or redistribute's
  // flattened group in another thread), so its lookups take the lock in every mode.
  const std::lock_guard<std::mutex> lock(s.creating);
  for (std::size_t d = 0; d < out.size(); ++d) {
    const dim_groups g = groups_of(layout, static_cast<int>(d));
    out[d] = s.cache.find(g.name, g.key());
  }
}

template <communicator Comm>
const comm_entry<Comm>& mesh_runtime<Comm>::dim_entry(state& st, const layout_ref& layout, int d, const char* what,
                                                      text_ref where) {
  mesh_state<Comm>& s = full_state(st);
  const dim_groups g = groups_of(layout.values, d);
  const std::lock_guard<std::mutex> lock(s.creating);  // the slow path (a handle resolves its dims once)
  if (const auto* e = s.cache.find(g.name, g.key())) return *e;
  if (s.options.lazy) return ensure_lazy(s, describe_layout(layout), d);
  throw mesh_error("devmesh: " + std::string(what) + " on " + where() +
                   ": no communicator for this dim (internal error: eager meshes create every dim's)");
}

template <communicator Comm>
const comm_entry<Comm>& mesh_runtime<Comm>::dims_entry(state& st, const layout_ref& layout, unsigned dims,
                                                       std::string_view caller) {
  mesh_state<Comm>& s = full_state(st);
  const std::lock_guard<std::mutex> lock(s.creating);
  return ensure_dims_comm(s, describe_layout(layout), dims, caller);
}

template <communicator Comm>
void mesh_runtime<Comm>::derive(state& st, const layout_ref& layout, const char* what,
                                std::span<const std::string_view> new_dims,
                                const typename Comm::options_type* backend_options,
                                std::string_view local_error) {
  mesh_state<Comm>& s = full_state(st);
  // One thread at a time: the step's collectives run on the control communicator (two at once
  // are undefined in MPI: a hang) and it adds to the cache and the options. Ranks whose threads
  // derive in other orders then disagree in the step's agreement: an error on every rank.
  const std::lock_guard<std::mutex> one_at_a_time(s.creating);
  std::string step = what;
  std::vector<std::string> added;
  if (backend_options) step += s.set_call_options(new_dims, *backend_options, what, added);
  const auto recorded = s.recorder.start(s.steps, what, {}, 0);
  try {
    ensure_all(s, describe_layout(layout), step, false, local_error);
    recorded.finish(call_state::completed);
  } catch (const timeout_error& x) {
    recorded.finish(call_state::timed_out);
    for (const auto& name : added) s.options.per_dim.erase(name);
    // A mesh over some of the world's ranks: its non-members take part too (the step is
    // collective over the world's duplicate), which a rank guarding the call with
    // is_member() does not do.
    std::string hint;
    if (s.root.root_size < s.world_size)
      hint = "; " + std::string(what) + " is collective over every world rank (" + std::to_string(s.world_size) +
             "), members of this mesh of " + std::to_string(s.root.root_size) +
             " ranks or not: every world rank must call it (do not guard it with is_member())";
    const std::string dumped = s.dump_record();
    if (dumped.empty() && hint.empty()) throw;
    throw timeout_error(x.what() + hint + dumped);
  } catch (...) {
    recorded.finish(call_state::failed);
    for (const auto& name : added) s.options.per_dim.erase(name);  // as before the call
    throw;
  }
}

template <communicator Comm>
void mesh_runtime<Comm>::abort(state& st) noexcept {
  full_state(st).abort();
}

template <communicator Comm>
flight_record mesh_runtime<Comm>::record(const state& st) {
  return full_state(st).record();
}

template <communicator Comm>
std::string mesh_runtime<Comm>::write_record(const state& st, const std::string& dir) {
  return write_flight_record(full_state(st).record(), dir, st.index);
}

}  // namespace devmesh::detail
