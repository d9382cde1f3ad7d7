// devmesh/runtime/dims_comm.hpp: the communicator of several of a mesh's dims flattened
// into one group (PyTorch's _flatten, without a new mesh type): what a redistribute step
// over several dims runs on. Created on first use as flatten() creates an alias's (eager:
// collective over the world; lazy: over the root's members), cached under PyTorch's default
// flatten name (the dims' names joined by '_') and the group's coalesced layout, so an
// earlier mesh.flatten<"dp_tp"...>() of the same dims is found and nothing is created.
#pragma once
#include <string>
#include <string_view>

#include "../core/diagnostics.hpp"
#include "../core/group.hpp"
#include "../core/layout.hpp"
#include "../core/print.hpp"
#include "backend.hpp"
#include "consensus.hpp"
#include "create_comms.hpp"
#include "descriptor.hpp"
#include "mesh_state.hpp"

namespace devmesh::detail {

/// The dims of `dims` (bit d: dim d of m) as one dim, in the shape create() takes: its
/// modes are the dims' modes in mesh order (row-major over the dims, as a flatten).
template <class Layout>
struct dims_group_view {
  static constexpr int ndim_with_aliases = 1;
  const Layout* mesh = nullptr;
  unsigned dims = 0;
  std::string label;
  coalesced_layout modes{};

  dims_group_view(const Layout& m, unsigned bits) : mesh(&m), dims(bits) {
    for (int d = 0; d < Layout::ndim; ++d) {
      if (!((bits >> d) & 1u)) continue;
      (label += label.empty() ? "" : "_") += Layout::name(d);
      const auto dl = m.dim_layout(d);
      for (int k = 0; k < dl.count; ++k) {
        if (modes.count == 30) fail_coalesce_capacity();
        modes.shape[modes.count] = dl.shape[k], modes.stride[modes.count] = dl.stride[k], ++modes.count;
      }
    }
  }
  std::string_view name(int) const { return label; }
  coalesced_layout dim_layout(int) const { return modes; }
  int dim_size(int) const { return modes.size(); }
  /// (first position of the group, index of `position` in it).
  split_args comm_split(int position, int) const {
    int i = 0;
    for (int d = 0; d < Layout::ndim; ++d)
      if ((dims >> d) & 1u) i = i * mesh->size(d) + mesh->coordinate_unchecked(position, d);
    return {position - modes(i), i};
  }
};

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

/// The communicator (and channel) of the flattened group of the dims in `dims` (two or more) of m, from
/// the cache or created now (collective: see the file's comment).
template <communicator Comm, class Layout>
const comm_entry<Comm>& ensure_dims_comm(mesh_state<Comm>& st, const Layout& m, unsigned dims, std::string_view caller) {
  const dims_group_view<Layout> v(m, dims);
  const group_key key = v.modes.coalesce();
  if (const auto* e = st.cache.find(v.label, key)) return *e;
  const deadline dl = st.start_step();
  const std::string step = std::string(caller) + ": creating the communicator of dims '" + v.label + "' flattened";
  const Comm& parent = st.options.lazy ? *st.lazy_root : *st.control;
  check_same(parent, layout_descriptor(m, "flattened dims " + v.label + " " + st.options_of(v.label)), step, dl);
  create(st, parent, st.options.lazy ? numbering::position : numbering::world, v, 0, 1, step, dl);
  return *st.cache.find(v.label, key);
}

}  // namespace devmesh::detail
