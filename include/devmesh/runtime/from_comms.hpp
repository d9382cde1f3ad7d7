// devmesh/runtime/from_comms.hpp: device meshes over communicators that exist already
// (PyTorch's DeviceMesh.from_group): one per dim, checked against the layout on every rank,
// or a single one whose rank order becomes the mesh's rank map.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/dim.hpp"
#include "../core/fixed_string.hpp"
#include "../core/mesh.hpp"
#include "backend.hpp"
#include "consensus.hpp"
#include "create_comms.hpp"
#include "device_mesh.hpp"
#include "init_steps.hpp"
#include "mesh_state.hpp"
#include "options.hpp"
#include "topology_step.hpp"

namespace devmesh {

namespace detail {

/// from_comms step 1 (local): each adopted communicator's size and rank against the layout.
template <class Layout, communicator C>
std::string adopted_shape_error(const Layout& layout, const std::array<C, Layout::ndim>& comms,
                                const mesh_state<C>& st) {
  const bool member = st.is_member();
  const int me = st.world_rank;
  const int pos = st.position;
  for (int d = 0; d < Layout::ndim; ++d) {
    const std::string dim = "dim '" + std::string(Layout::name(d)) + "'";
    const C& c = comms[static_cast<std::size_t>(d)];
    if (!member) {
      if (c.valid()) return dim + ": world rank " + std::to_string(me) + " is not in the mesh but has a communicator";
      continue;
    }
    if (!c.valid()) return dim + ": no communicator on world rank " + std::to_string(me) + ", a member of the mesh";
    if (c.size() != layout.dim_size(d))
      return dim + ": the communicator has " + std::to_string(c.size()) + " ranks, the dim " +
             std::to_string(layout.dim_size(d));
    if (c.rank() != layout.comm_split(pos, d).key)
      return dim + ": world rank " + std::to_string(me) + " is rank " + std::to_string(c.rank()) +
             " of the communicator but has index " + std::to_string(layout.comm_split(pos, d).key) + " in its group";
  }
  return {};
}

/// from_comms step 2 (collective over each communicator, bounded): the world ranks of each
/// communicator, in its rank order, must be the layout's group of that dim, through the
/// rank map (rank_map[position]).
template <class Layout, communicator C>
std::string adopted_members_error(const Layout& layout, const std::array<C, Layout::ndim>& comms,
                                  const mesh_state<C>& st, const deadline& dl) {
  if (!st.is_member()) return {};
  const int me = st.world_rank;
  std::string error;
  for (int d = 0; d < Layout::ndim; ++d) {
    const C& c = comms[static_cast<std::size_t>(d)];
    std::vector<std::int32_t> ranks(static_cast<std::size_t>(c.size()));
    const std::int32_t mine = me;
    bounded_step("from_comms", dl, [&] { c.all_gather_bytes(&mine, ranks.data(), sizeof mine, dl); });
    const auto group = layout.dim_layout(d);
    const split_args sa = layout.comm_split(st.position, d);
    for (int i = 0; i < c.size() && error.empty(); ++i) {
      const int p = sa.color + group(i);  // the i-th position of this rank's group
      const int expected = st.world_rank_at(p);
      if (ranks[static_cast<std::size_t>(i)] != expected)
        error = "dim '" + std::string(Layout::name(d)) + "': rank " + std::to_string(i) +
                " of the communicator is world rank " + std::to_string(ranks[static_cast<std::size_t>(i)]) +
                ", the layout's group has world rank " + std::to_string(expected) + " there" +
                (st.rank_map.empty() ? std::string() : " (position " + std::to_string(p) + " of the rank map)");
    }
  }
  return error;
}

}  // namespace detail

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
  options.lazy = false;  // adopted dims exist already; aliases are created now
  constexpr std::string_view step = "from_comms";
  detail::local_checks<Layout> local;
  auto st = detail::new_state<C>(std::forward<W>(world), std::move(options), step, [&](const detail::mesh_state<C>& s) {
    local = detail::check_locally<Layout>(s, [&] { return layout; }, step);
  });
  const deadline dl = st->start_step();
  // The rank map is placed only once checked here; elsewhere the local error decides first.
  if (local.error.empty()) st->place(layout.root_size(), st->options.rank_map);
  st->keep_root(layout);
  // The layout, the consistency check and 1. each communicator's size and rank against the
  // layout, in one agreement; then 2. each communicator's members; then the topology options.
  const detail::step_outcome shapes[] = {
      {std::string(step), local.error.empty() ? detail::adopted_shape_error(layout, comms, *st) : std::string()}};
  detail::check_layout(*st, local, step, dl, shapes);
  detail::agree(*st->control, detail::adopted_members_error(layout, comms, *st, dl), step, dl);
  detail::settle_placement(*st, layout, step, dl);
  typename detail::comm_cache<C>::entry_list adopted;
  for (int d = 0; d < Layout::ndim; ++d) {
    auto& e = adopted.emplace_back(std::make_unique<detail::comm_entry<C>>());
    e->name = std::string(Layout::name(d));
    e->key = detail::group_key_of(layout, d);
    e->options = st->options_of(e->name);
    e->comm = std::make_shared<C>(std::move(comms[static_cast<std::size_t>(d)]));
  }
  st->cache.add(std::move(adopted));
  detail::ensure_all(*st, layout, step, true);
  return detail::make_device_mesh(layout, std::move(st));
}

namespace detail {

/// from_comms with one communicator: the rank map that lists its members in its rank order,
/// from every world rank's (rank in it, its size, whether its options have a rank map),
/// all-gathered over a private duplicate of the world. Every rank computes the same map or
/// the same error from the same values, so all throw together.
template <communicator C>
std::vector<int> one_comm_map(const C& world, const C& comm, bool has_map, std::string_view step, const deadline& dl) {
  const std::int32_t mine[3] = {comm.valid() ? comm.rank() : -1, comm.valid() ? comm.size() : 0, has_map ? 1 : 0};
  std::vector<std::int32_t> all(3 * static_cast<std::size_t>(world.size()));
  bounded_step(step, dl, [&] {
    const C ctl = world.duplicate(dl);
    ctl.all_gather_bytes(mine, all.data(), sizeof mine, dl);
  });
  const std::string here = "devmesh: " + std::string(step) + ": ";
  int n = 0;
  for (std::size_t w = 0; w < all.size() / 3; ++w) {
    if (all[3 * w + 2]) throw mesh_error(here + "options.rank_map is set on world rank " + std::to_string(w) +
                                          ": with one communicator, its rank order is the map");
    if (all[3 * w] >= 0 && n == 0) n = all[3 * w + 1];
  }
  if (n == 0) throw mesh_error(here + "no world rank passed a valid communicator");
  std::vector<int> map(static_cast<std::size_t>(n), -1);
  for (std::size_t w = 0; w < all.size() / 3; ++w) {
    const int r = all[3 * w], size = all[3 * w + 1];
    if (r < 0) continue;
    if (size != n)
      throw mesh_error(here + "the communicators passed differ: world rank " + std::to_string(w) + "'s has " +
                       std::to_string(size) + " ranks, another's " + std::to_string(n));
    if (map[static_cast<std::size_t>(r)] >= 0)
      throw mesh_error(here + "world ranks " + std::to_string(map[static_cast<std::size_t>(r)]) + " and " +
                       std::to_string(w) + " are both rank " + std::to_string(r) +
                       " of the communicator they passed: pass one communicator, not one per group");
    map[static_cast<std::size_t>(r)] = static_cast<int>(w);
  }
  return map;  // n members with distinct ranks in [0, n): every entry was set
}

}  // namespace detail

/// PyTorch's DeviceMesh.from_group(group) without a mesh: the 1-D mesh named Name over one
/// existing communicator, its positions in the communicator's rank order (a rank map, so any
/// subset of the world in any order). Collective over `world`; world ranks outside it pass an
/// invalid communicator and are not members. Throws mesh_error on every rank when the ranks
/// passed different communicators (one per group, say) or set options.rank_map.
///   auto dp = dm::from_comms<"dp">(world, std::move(dp_comm));
template <fixed_string Name, class W, communicator C = std::remove_cvref_t<W>>
device_mesh<mesh<dim<Name>>, C> from_comms(W&& world, C comm, device_mesh_options<C> options = {}) {
  const std::string step = "from_comms<\"" + std::string(Name.view()) + "\">";
  std::vector<int> map = detail::one_comm_map(std::as_const(world), comm, !options.rank_map.empty(), step,
                                              deadline::after(options.resolved_timeout()));
  const int n = static_cast<int>(map.size());
  options.rank_map = std::move(map);
  std::array<C, 1> comms{std::move(comm)};
  return from_comms<mesh<dim<Name>>>(std::forward<W>(world), std::move(comms), mesh<dim<Name>>(n), std::move(options));
}

}  // namespace devmesh
