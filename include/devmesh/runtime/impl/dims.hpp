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
  if (const auto* e = s.cache.find(g.name, g.key())) return *e;
  if (s.options.lazy) return ensure_lazy(s, describe_layout(layout), d);
  throw mesh_error("devmesh: " + std::string(what) + " on " + where() +
                   ": no communicator for this dim (internal error: eager meshes create every dim's)");
}

template <communicator Comm>
const comm_entry<Comm>& mesh_runtime<Comm>::dims_entry(state& st, const layout_ref& layout, unsigned dims,
                                                       std::string_view caller) {
  return ensure_dims_comm(full_state(st), describe_layout(layout), dims, caller);
}

template <communicator Comm>
void mesh_runtime<Comm>::derive(state& st, const layout_ref& layout, const char* what,
                                std::span<const std::string_view> new_dims,
                                const typename Comm::options_type* backend_options) {
  mesh_state<Comm>& s = full_state(st);
  std::string step = what;
  std::vector<std::string> added;
  if (backend_options) step += s.set_call_options(new_dims, *backend_options, what, added);
  const auto recorded = s.recorder.start(s.steps, what, {}, 0);
  try {
    ensure_all(s, describe_layout(layout), step);
    recorded.finish(call_state::completed);
  } catch (const timeout_error& x) {
    recorded.finish(call_state::timed_out);
    for (const auto& name : added) s.options.per_dim.erase(name);
    const std::string dumped = s.dump_record();
    if (dumped.empty()) throw;
    throw timeout_error(x.what() + dumped);
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
