// devmesh/runtime/impl/create_comms.hpp: creating the communicators of a mesh's dims. One split
// per new dim per rank, by the group's members when the backend can (MPI_Comm_create_group),
// else colors and keys; then one agreement over every outcome, so a failure on some rank makes
// every rank throw and nothing half-made is cached.
#pragma once
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../backend.hpp"
#include "consensus.hpp"
#include "descriptor.hpp"
#include "dim_groups.hpp"
#include "mesh_state.hpp"

namespace devmesh::detail {

/// The ranks of `parent` in this rank's group of g, in the group's order (empty off the mesh):
/// positions mapped to world ranks when the parent numbers ranks as the world (the control
/// communicator), positions as they are for lazy mode's members.
inline std::vector<int> group_ranks(const rank_placement& at, const dim_groups& g, numbering parent) {
  std::vector<int> ranks;
  if (!at.is_member()) return ranks;
  for (int p : g.members(at.position)) ranks.push_back(parent == numbering::world ? at.world_rank_at(p) : p);
  return ranks;
}

/// This rank's part of creating g's communicator from `parent`: a split, or where the backend
/// has one, a split whose groups are given (MPI: MPI_Comm_create_group, collective over the
/// group only, so much cheaper than MPI_Comm_split over the whole parent). Returns "" or why
/// it failed here. Split colors and keys come from positions: a color only names a group, and
/// a key is the rank's index in its group, whatever the parent's numbering.
template <communicator Comm>
std::string split_one(const mesh_state<Comm>& st, const Comm& parent, numbering parent_numbering,
                      const dim_groups& g, comm_entry<Comm>& e) {
  try {
    auto opts = named_options(st.options.for_dim(e.name), e.name);
    if constexpr (requires { parent.split_group(std::span<const int>(), opts); }) {
      const std::vector<int> ranks = group_ranks(st, g, parent_numbering);
      e.comm = std::make_shared<Comm>(parent.split_group(std::span<const int>(ranks), opts));
    } else {
      const split_args sa = st.is_member() ? g.split(st.position) : split_args{no_color, 0};
      e.comm = std::make_shared<Comm>(parent.split(sa.color, sa.key, opts));
    }
  } catch (const std::exception& x) {
    // A backend that invalidated the parent (NCCL aborts it) agreed on the failure over its
    // own channel before doing so: every rank throws already.
    if (!parent.valid()) throw;
    return x.what();
  }
  return {};
}

/// Creates the communicators of `dims` that are not cached yet, from `parent` (every rank of
/// parent calls this), then agrees on every outcome in one step (one all-reduce, not one per
/// dim): a split or hook that failed on some rank makes every rank throw, naming the first dim
/// that failed (the dims after it were created, and their hooks called, before the agreement),
/// and nothing this call made is cached.
template <communicator Comm>
void create(mesh_state<Comm>& st, const Comm& parent, numbering parent_numbering, std::span<const dim_groups> dims,
            std::string_view step, const deadline& dl) {
  typename comm_cache<Comm>::entry_list made;
  std::vector<step_outcome> outcomes;
  std::string names;  // of the dims split, for a time-out's message
  for (const dim_groups& g : dims) {
    group_key key = g.key();
    if (st.cache.find(g.name, key)) continue;
    auto e = std::make_unique<comm_entry<Comm>>();
    e->name = g.name;
    e->key = std::move(key);
    e->options = st.options_of(e->name);
    e->world_ranks = group_ranks(st, g, numbering::world);  // the flight record's group
    const comm_entry<Comm>* same = st.options.share_equal_groups ? st.cache.with_groups(e->key, e->options, made) : nullptr;
    if (same) {
      e->comm = same->comm;
    } else {
      outcomes.push_back({std::string(step) + ": creating the communicator of dim '" + e->name + "'",
                          split_one(st, parent, parent_numbering, g, *e)});
      names += (names.empty() ? "'" : ", '") + e->name + "'";
    }
    made.push_back(std::move(e));
  }
  if (outcomes.size() == 1) agree_all(parent, outcomes[0].step, outcomes, nullptr, {}, dl);
  if (outcomes.size() > 1)
    agree_all(parent, std::string(step) + ": creating the communicators of dims " + names, outcomes, nullptr, {}, dl);
  st.created += static_cast<int>(outcomes.size());
  // Under the root's abort mutex: the NCCL watchdog's thread may be aborting the cache's
  // communicators right now (mesh_state::abort walks the cache holding it).
  const std::lock_guard adding(st.aborting);
  st.cache.add(std::move(made));
}

/// Lazy mode: dim d's communicator on its first use, collective over the mesh's members,
/// which first check that they all create the same dim.
template <communicator Comm>
const comm_entry<Comm>& ensure_lazy(mesh_state<Comm>& st, const layout_description& m, int d) {
  const deadline dl = st.start_step();
  const dim_groups g = groups_of(m.view, d);
  const std::string step = "creating the communicator of dim '" + g.name + "' (lazy)";
  check_same(*st.lazy_root, describe(m, "dim " + g.name + " " + st.options_of(g.name)), step, dl);
  create(st, *st.lazy_root, numbering::position, std::span<const dim_groups>(&g, 1), step, dl);
  return *st.cache.find(g.name, g.key());
}

/// Eager mode: every dim of m (aliases included) gets its communicator now, collective over
/// the world (members or not). Unless `verified`, the ranks first agree, in one all-reduce,
/// that every rank could derive the mesh (`local_error` empty: else every rank throws it,
/// naming the ranks) and derived the same one.
template <communicator Comm>
void ensure_all(mesh_state<Comm>& st, const layout_description& m, std::string_view step, bool verified = false,
                std::string_view local_error = {}) {
  if (st.options.lazy) {  // local: nothing to agree on, no one waits for this rank
    if (!local_error.empty()) throw mesh_error(std::string(local_error));
    return;
  }
  const deadline dl = st.start_step();
  if (!verified) {  // this rank's own outcome, then the mesh: one all-reduce (agree_all)
    const step_outcome mine[] = {{std::string(step), std::string(local_error)}};
    const descriptor d = describe(m, std::string(step));
    agree_all(*st.control, step, std::span<const step_outcome>(mine), &d, {}, dl);
  }
  const std::vector<dim_groups> dims = all_dim_groups(m.view);
  create(st, *st.control, numbering::world, std::span<const dim_groups>(dims), step, dl);
}

/// The communicator (and channel) of the flattened group of the dims `dims` (two or more) of
/// m, from the cache or created now: eager, collective over the world as flatten(); lazy, over
/// the root's members. Cached under PyTorch's default flatten name (the dims' names joined by
/// '_') and the group's coalesced layout, so an earlier mesh.flatten<"dp_tp"...>() of the same
/// dims is found and nothing is created.
template <communicator Comm>
const comm_entry<Comm>& ensure_dims_comm(mesh_state<Comm>& st, const layout_description& m, unsigned dims,
                                         std::string_view caller) {
  const dim_groups g = groups_of_dims(m.view, dims);
  const group_key key = g.key();
  if (const auto* e = st.cache.find(g.name, key)) return *e;
  const deadline dl = st.start_step();
  const std::string step = std::string(caller) + ": creating the communicator of dims '" + g.name + "' flattened";
  const Comm& parent = st.options.lazy ? *st.lazy_root : *st.control;
  check_same(parent, describe(m, "flattened dims " + g.name + " " + st.options_of(g.name)), step, dl);
  create(st, parent, st.options.lazy ? numbering::position : numbering::world, std::span<const dim_groups>(&g, 1),
         step, dl);
  return *st.cache.find(g.name, key);
}

}  // namespace devmesh::detail
