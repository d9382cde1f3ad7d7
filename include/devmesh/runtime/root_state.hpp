// devmesh/runtime/root_state.hpp: the part of a root mesh's state that its typed handles read
// directly (where this rank sits, the options, the flags every collective tests). The rest of
// the state (the communicators, the cache, the flight recorder, the watchdog) lives in
// runtime/impl/mesh_state.hpp, which only the compiled runtime sees: a handle holds a
// std::shared_ptr<root_state<Comm>> to a mesh_state<Comm>, and passes it to mesh_runtime.
#pragma once
#include <chrono>
#include <vector>

#include "backend.hpp"
#include "deadline.hpp"
#include "layout_view.hpp"
#include "options.hpp"
#include "rank_placement.hpp"

namespace devmesh::detail {

/// What every handle derived from one init_device_mesh or from_comms call reads of their
/// shared state, without a call: loads.
template <communicator Comm>
struct root_state : rank_placement {
  const Comm* world = nullptr;            // the world communicator (borrowed, or held by the state)
  device_mesh_options<Comm> options;      // as given, with per-call options added (flatten's)
  std::chrono::milliseconds timeout = default_timeout;  // the bound of devmesh's own steps
  bool check_collectives = false;         // DEVMESH_CHECK_COLLECTIVES or options.check_collectives
  bool check_sharding_calls = true;       // options.check_sharding_calls, or DEVMESH_CHECK_SHARDING_CALLS
  std::chrono::milliseconds watchdog{0};  // bound of every collective (0: off)
  std::vector<int> node_of_rank;          // node of every world rank, when init discovered them
  layout_view root;                       // the root's layout, for device_mesh::root<M>()
  int created = 0;                        // communicators created for this root
  int index = 0;                          // this process's n-th root (flight record files)
  options_by_dim<link_cost> measured_links;  // what dm::calibrate measured, by dim name
  int links_version = 0;                     // measured_links' changes (a key of kept plans)

  root_state(const root_state&) = delete;
  root_state& operator=(const root_state&) = delete;

  /// The deadline of a step devmesh takes now.
  deadline start_step() const { return deadline::after(timeout); }

 protected:
  root_state() = default;
  ~root_state() = default;  // destroyed as the mesh_state it is part of
};

}  // namespace devmesh::detail
