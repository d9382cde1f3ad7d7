// devmesh/redistribute/executor.hpp: the line between redistribute's typed entry points and
// the code that runs them. A typed call (dm::redistribute, distribute, full_tensor,
// check_from_local) checks its specs and buffers at compile time, obtains the plan (a constant
// for static specs, the thread's kept plan for dynamic ones), turns the mesh, the specs, the
// plan, the extents and the element type into values (call.hpp) and calls one function of
// redistribute_runtime<Comm>, which knows no mesh type, spec type or element type: the checks
// every rank agrees on, the messages, the steps (local, all_reduce, reduce_scatter(v),
// exchange), the blocks moved as bytes. Compiled once per backend (and its memory space): in
// the backend's library (DEVMESH_SEPARATE_COMPILATION, DEVMESH_INSTANTIATE_REDISTRIBUTE in
// mpi/impl/src.hpp and nccl/impl/src.hpp) or, header-only, once per program. Its definitions
// are in redistribute/impl/.
#pragma once
#include <cstddef>
#include <span>
#include <string_view>

#include "../core/config.hpp"
#include "../runtime/backend.hpp"
#include "../runtime/device_mesh.hpp"
#include "../runtime/element_type.hpp"
#include "../sharding/extents.hpp"
#include "../sharding/table.hpp"
#include "call.hpp"

namespace devmesh::detail {

/// redistribute's compiled part for backend Comm. Static members, so that one explicit
/// instantiation per backend compiles them all.
template <communicator Comm>
struct redistribute_runtime {
  using stream = typename Comm::stream_type;
  using site = group_site<Comm>;

  /// dm::redistribute after its typed checks: the checks every rank makes alike (a usable
  /// memory space, blocks the backend's counts can say, no integer average on a device), this
  /// rank's blocks against the specs (agreed on every rank in the check mode), then the plan's
  /// steps from c.in to c.out on stream s. Collective over the mesh.
  static void redistribute(const site& on, const call_data& c, stream s);
  /// distribute from the rank at index `root` of the mesh: after one agreement (always), the
  /// root's tensor (c.in) becomes every rank's block under `sent` (c.to without its Partial
  /// dims: a broadcast, or an all_to_allv from the root), then its block under c.to by c.plan
  /// (local steps). Collective over the mesh.
  static void distribute_from_root(const site& on, const call_data& c, const table_view& sent, int root, stream s);
  /// check_from_local: this rank's block has n elements, spec's size, and every rank names the
  /// same spec, extents and element type (its name); else every rank throws. One agreement, always.
  static void check_from_local(const site& on, const mesh_data& m, const table_view& spec,
                               std::span<const tensor_index> extents, std::string_view type, std::size_t n);
};

}  // namespace devmesh::detail

#if DEVMESH_HEADER_ONLY
#include "impl/executor.hpp"
#endif
