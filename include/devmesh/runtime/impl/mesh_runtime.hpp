// devmesh/runtime/impl/mesh_runtime.hpp: every definition of mesh_runtime<Comm> (runtime/
// mesh_runtime.hpp), and the instantiation a backend's library makes of it. Header-only, the
// declaration header includes this one; compiled, only the backends' impl/src.hpp do.
#pragma once
#include <string_view>
#include <vector>

#include "../mesh_runtime.hpp"
#include "collective_calls.hpp"
#include "dims.hpp"
#include "init.hpp"
#include "report.hpp"
#include "subgroups.hpp"
#include "topology_step.hpp"

// The compiled runtime of backend Comm: mesh_runtime<Comm>, and the topology step a topology
// option points to (options.hpp). In one translation unit per backend (its impl/src.hpp).
#define DEVMESH_INSTANTIATE_RUNTIME(Comm)                                                                      \
  template struct devmesh::detail::mesh_runtime<Comm>;                                                       \
  template std::vector<int> devmesh::detail::settle_topology<Comm>(devmesh::detail::mesh_state<Comm>&,       \
                                                                   const devmesh::detail::layout_view&,      \
                                                                   std::string_view, const devmesh::deadline&)
