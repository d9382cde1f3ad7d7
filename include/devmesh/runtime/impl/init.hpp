// devmesh/runtime/impl/init.hpp: mesh_runtime's roots: init_device_mesh and from_comms, one
// bounded, agreed step after another, so a rank that fails or disagrees makes every rank throw
// instead of hanging.
#pragma once
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../mesh_runtime.hpp"
#include "consensus.hpp"
#include "create_comms.hpp"
#include "dim_groups.hpp"
#include "init_steps.hpp"
#include "mesh_state.hpp"
#include "topology_step.hpp"

namespace devmesh::detail {

/// The mesh_state behind a handle's root_state (a handle's state is always one).
template <communicator Comm>
mesh_state<Comm>& full_state(root_state<Comm>& s) {
  return static_cast<mesh_state<Comm>&>(s);
}
template <communicator Comm>
const mesh_state<Comm>& full_state(const root_state<Comm>& s) {
  return static_cast<const mesh_state<Comm>&>(s);
}

/// The description of a layout the caller may not have (null: it could not be built there).
struct described_layout {
  std::optional<layout_description> d;
  explicit described_layout(const layout_ref* ref) {
    if (ref) d.emplace(describe_layout(*ref));
  }
  const layout_description* get() const { return d ? &*d : nullptr; }
};

template <communicator Comm>
typename mesh_runtime<Comm>::state_ptr mesh_runtime<Comm>::init(world_arg<Comm> world, options_type options,
                                                                 const layout_ref* ref,
                                                                 const std::string& layout_error) {
  constexpr std::string_view step = "init_device_mesh";
  const described_layout described(ref);
  const layout_description* layout = described.get();
  local_checks local;  // made while the control communicator is being created
  auto st = new_state<Comm>(world, std::move(options), step, [&](const mesh_state<Comm>& s) {
    local = check_locally(s, layout, layout_error, step);
  });
  const deadline dl = st->start_step();
  check_layout(*st, local, step, dl);
  st->place(layout->view.root_size, settle_placement(*st, layout->view, step, dl));
  st->root = layout->view;
  if (st->options.lazy) {
    // The parent of the lazy splits: the mesh's members, ranked by position (numbering::position).
    std::string failed;
    try {
      st->lazy_root.emplace(st->control->split(st->is_member() ? 0 : no_color, st->position, {}));
    } catch (const std::exception& e) {
      failed = e.what();
    }
    agree(*st->control, failed, "init_device_mesh: creating the lazy mesh's communicator", dl);
    ++st->created;
  }
  ensure_all(*st, *layout, step, true);  // checked above
  return st;
}

/// from_comms step 1 (local): each adopted communicator's size and rank against the layout.
template <communicator C>
std::string adopted_shape_error(const layout_view& v, std::span<C> comms, const mesh_state<C>& st) {
  for (int d = 0; d < v.ndim; ++d) {
    const dim_groups g = groups_of(v, d);
    const std::string dim = "dim '" + g.name + "'";
    const C& c = comms[static_cast<std::size_t>(d)];
    if (!st.is_member()) {
      if (c.valid()) return dim + ": world rank " + std::to_string(st.world_rank) + " is not in the mesh but has a communicator";
      continue;
    }
    if (!c.valid()) return dim + ": no communicator on world rank " + std::to_string(st.world_rank) + ", a member of the mesh";
    if (c.size() != g.size())
      return dim + ": the communicator has " + std::to_string(c.size()) + " ranks, the dim " + std::to_string(g.size());
    const int index = g.split(st.position).key;
    if (c.rank() != index)
      return dim + ": world rank " + std::to_string(st.world_rank) + " is rank " + std::to_string(c.rank()) +
             " of the communicator but has index " + std::to_string(index) + " in its group";
  }
  return {};
}

/// from_comms step 2 (collective over each communicator, bounded): the world ranks of each
/// communicator, in its rank order, must be the layout's group of that dim, through the rank
/// map (rank_map[position]).
template <communicator C>
std::string adopted_members_error(const layout_view& v, std::span<C> comms, const mesh_state<C>& st,
                                  const deadline& dl) {
  if (!st.is_member()) return {};
  std::string error;
  for (int d = 0; d < v.ndim; ++d) {
    const C& c = comms[static_cast<std::size_t>(d)];
    std::vector<std::int32_t> ranks(static_cast<std::size_t>(c.size()));
    const std::int32_t mine = st.world_rank;
    bounded_step("from_comms", dl, [&] { c.all_gather_bytes(&mine, ranks.data(), sizeof mine, dl); });
    const dim_groups g = groups_of(v, d);
    const std::vector<int> group = g.members(st.position);
    for (int i = 0; i < c.size() && error.empty(); ++i) {
      const int p = group[static_cast<std::size_t>(i)];  // the i-th position of this rank's group
      const int expected = st.world_rank_at(p);
      if (ranks[static_cast<std::size_t>(i)] != expected)
        error = "dim '" + g.name + "': rank " + std::to_string(i) + " of the communicator is world rank " +
                std::to_string(ranks[static_cast<std::size_t>(i)]) + ", the layout's group has world rank " +
                std::to_string(expected) + " there" +
                (st.rank_map.empty() ? std::string() : " (position " + std::to_string(p) + " of the rank map)");
    }
  }
  return error;
}

template <communicator Comm>
typename mesh_runtime<Comm>::state_ptr mesh_runtime<Comm>::adopt(world_arg<Comm> world, std::span<Comm> comms,
                                                                  options_type options, const layout_ref* ref,
                                                                  const std::string& layout_error) {
  options.lazy = false;  // adopted dims exist already; aliases are created now
  constexpr std::string_view step = "from_comms";
  const described_layout described(ref);
  const layout_description* layout = described.get();
  local_checks local;
  auto st = new_state<Comm>(world, std::move(options), step, [&](const mesh_state<Comm>& s) {
    local = check_locally(s, layout, layout_error, step);
  });
  const deadline dl = st->start_step();
  // The rank map is placed only once checked here; elsewhere the local error decides first.
  if (local.error.empty()) st->place(layout->view.root_size, st->options.rank_map);
  if (layout) st->root = layout->view;
  // The layout, the consistency check and 1. each communicator's size and rank against the
  // layout, in one agreement; then 2. each communicator's members; then the topology options.
  const step_outcome shapes[] = {
      {std::string(step), local.error.empty() ? adopted_shape_error(layout->view, comms, *st) : std::string()}};
  check_layout(*st, local, step, dl, shapes);
  agree(*st->control, adopted_members_error(layout->view, comms, *st, dl), step, dl);
  settle_placement(*st, layout->view, step, dl);
  typename comm_cache<Comm>::entry_list adopted;
  for (int d = 0; d < layout->view.ndim; ++d) {
    const dim_groups g = groups_of(layout->view, d);
    auto& e = adopted.emplace_back(std::make_unique<comm_entry<Comm>>());
    e->name = g.name;
    e->key = g.key();
    e->options = st->options_of(e->name);
    e->comm = std::make_shared<Comm>(std::move(comms[static_cast<std::size_t>(d)]));
  }
  st->cache.add(std::move(adopted));
  ensure_all(*st, *layout, step, true);
  return st;
}

template <communicator Comm>
std::vector<int> mesh_runtime<Comm>::one_comm_map(const Comm& world, const Comm& comm, bool has_map,
                                                  std::string_view step, const deadline& dl) {
  const std::int32_t mine[3] = {comm.valid() ? comm.rank() : -1, comm.valid() ? comm.size() : 0, has_map ? 1 : 0};
  std::vector<std::int32_t> all(3 * static_cast<std::size_t>(world.size()));
  bounded_step(step, dl, [&] {
    const Comm ctl = world.duplicate(dl);
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

}  // namespace devmesh::detail
