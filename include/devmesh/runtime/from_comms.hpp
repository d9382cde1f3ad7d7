// devmesh/runtime/from_comms.hpp: device meshes over communicators that exist already
// (PyTorch's DeviceMesh.from_group): one per dim, checked against the layout on every rank,
// or a single one whose rank order becomes the mesh's rank map.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/dim.hpp"
#include "../core/fixed_string.hpp"
#include "../core/mesh.hpp"
#include "backend.hpp"
#include "device_mesh.hpp"
#include "init.hpp"
#include "mesh_runtime.hpp"
#include "options.hpp"

namespace devmesh {

/// Adopts existing communicators, one per dim of the layout in dim order (PyTorch
/// from_group). Each communicator keeps its own ownership (a backend's owning or borrowed
/// handle) and is moved into the mesh. Collective over `world`: validates on every rank
/// that each communicator's members are exactly the layout's group of that dim, in order
/// (by all-gathering world ranks over it), and throws mesh_error on every rank otherwise.
/// Non-members (mesh smaller than the world) pass invalid communicators. Aliases of the
/// layout get new communicators of their own. The communicators are used as given: two
/// from_comms calls passed the same handles share them (that is the caller's choice).
template <class Layout, class W, communicator C = std::remove_cvref_t<W>>
device_mesh<Layout, C> from_comms(W&& world, std::array<C, Layout::ndim> comms, Layout layout = {},
                                  device_mesh_options<C> options = {}) {
  const detail::built_layout<Layout> built([&] { return layout; });
  const std::optional<detail::layout_ref> ref = built.ref();
  auto st = detail::mesh_runtime<C>::adopt(detail::world_of(std::forward<W>(world)), std::span<C>(comms),
                                           std::move(options), ref ? &*ref : nullptr, built.error);
  return detail::make_device_mesh(layout, std::move(st));
}

/// PyTorch's DeviceMesh.from_group(group) without a mesh: the 1-D mesh named Name over one
/// existing communicator, its positions in the communicator's rank order (a rank map, so any
/// subset of the world in any order). Collective over `world`; world ranks outside it pass an
/// invalid communicator and are not members. Throws mesh_error on every rank when the ranks
/// passed different communicators (one per group, say) or set options.rank_map.
///   auto dp = dm::from_comms<"dp">(world, std::move(dp_comm));
template <fixed_string Name, class W, communicator C = std::remove_cvref_t<W>>
device_mesh<mesh<dim<Name>>, C> from_comms(W&& world, C comm, device_mesh_options<C> options = {}) {
  const std::string step = "from_comms<\"" + std::string(Name.view()) + "\">";
  std::vector<int> map = detail::mesh_runtime<C>::one_comm_map(std::as_const(world), comm, !options.rank_map.empty(),
                                                               step, deadline::after(options.timeout_before_agreement()));
  const int n = static_cast<int>(map.size());
  options.rank_map = std::move(map);
  std::array<C, 1> comms{std::move(comm)};
  return from_comms<mesh<dim<Name>>>(std::forward<W>(world), std::move(comms), mesh<dim<Name>>(n), std::move(options));
}

}  // namespace devmesh
