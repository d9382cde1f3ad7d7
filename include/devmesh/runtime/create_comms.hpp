// devmesh/runtime/create_comms.hpp: creating the communicators of a mesh's dims. One split
// per new dim per rank, by the group's members when the backend can (MPI_Comm_create_group),
// else colors and keys from the core's comm_split; then one agreement over every outcome, so
// a failure on some rank makes every rank throw and nothing half-made is cached.
#pragma once
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/group.hpp"
#include "backend.hpp"
#include "consensus.hpp"
#include "descriptor.hpp"
#include "mesh_state.hpp"

namespace devmesh::detail {

/// The ranks of `parent` in this rank's group of dim d, in the group's order (empty off
/// the mesh): positions mapped to world ranks when the parent numbers ranks as the world
/// (the control communicator), positions as they are for lazy mode's members.
template <class Layout>
std::vector<int> group_ranks(const rank_placement& at, const Layout& m, int d, numbering parent) {
  std::vector<int> ranks;
  if (!at.is_member()) return ranks;
  const split_args sa = m.comm_split(at.position, d);
  const auto group = m.dim_layout(d);
  for (int i = 0; i < m.dim_size(d); ++i)
    ranks.push_back(parent == numbering::world ? at.world_rank_at(sa.color + group(i)) : sa.color + group(i));
  return ranks;
}

/// This rank's part of creating dim d's communicator from `parent`: a split, or where the
/// backend has one, a split whose groups are given (MPI: MPI_Comm_create_group, collective
/// over the group only, so much cheaper than MPI_Comm_split over the whole parent).
/// Returns "" or why it failed here.
/// Split colors and keys come from positions: a color only names a group, and a key is
/// the rank's index in its group, whatever the parent's numbering.
template <communicator Comm, class Layout>
std::string split_one(const mesh_state<Comm>& st, const Comm& parent, numbering parent_numbering, const Layout& m,
                      int d, comm_entry<Comm>& e) {
  try {
    auto opts = named_options(st.options.for_dim(e.name), e.name);
    if constexpr (requires { parent.split_group(std::span<const int>(), opts); }) {
      const std::vector<int> ranks = group_ranks(st, m, d, parent_numbering);
      e.comm = std::make_shared<Comm>(parent.split_group(std::span<const int>(ranks), opts));
    } else {
      const split_args sa = st.is_member() ? m.comm_split(st.position, d) : split_args{no_color, 0};
      e.comm = std::make_shared<Comm>(parent.split(sa.color, sa.key, opts));
    }
  } catch (const std::exception& x) {
    // A backend that invalidated the parent (NCCL aborts it) agreed on the failure
    // over its own channel before doing so: every rank throws already.
    if (!parent.valid()) throw;
    return x.what();
  }
  return {};
}

/// Creates the communicators of dims [first, last) of m that are not cached yet, from
/// `parent` (every rank of parent calls this), then agrees on every outcome in one step
/// (one all-reduce, not one per dim): a split or hook that failed on some rank makes every
/// rank throw, naming the first dim that failed (the dims after it were created, and
/// their hooks called, before the agreement), and nothing this call made is cached.
template <communicator Comm, class Layout>
void create(mesh_state<Comm>& st, const Comm& parent, numbering parent_numbering, const Layout& m, int first, int last,
            std::string_view step, const deadline& dl) {
  typename comm_cache<Comm>::entry_list made;
  std::vector<step_outcome> outcomes;
  std::string names;  // of the dims split, for a time-out's message
  for (int d = first; d < last; ++d) {
    group_key key = group_key_of(m, d);
    if (st.cache.find(m.name(d), key)) continue;
    auto e = std::make_unique<comm_entry<Comm>>();
    e->name = std::string(m.name(d));
    e->key = std::move(key);
    e->options = st.options_of(e->name);
    e->world_ranks = group_ranks(st, m, d, numbering::world);  // the flight record's group
    const comm_entry<Comm>* same = st.options.share_equal_groups ? st.cache.with_groups(e->key, e->options, made) : nullptr;
    if (same) {
      e->comm = same->comm;
    } else {
      outcomes.push_back({std::string(step) + ": creating the communicator of dim '" + e->name + "'",
                          split_one(st, parent, parent_numbering, m, d, *e)});
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
template <communicator Comm, class Layout>
const comm_entry<Comm>& ensure_lazy(mesh_state<Comm>& st, const Layout& m, int d) {
  const deadline dl = st.start_step();
  const std::string name(Layout::name(d));
  const std::string step = "creating the communicator of dim '" + name + "' (lazy)";
  check_same(*st.lazy_root, layout_descriptor(m, "dim " + name + " " + st.options_of(name)), step, dl);
  create(st, *st.lazy_root, numbering::position, m, d, d + 1, step, dl);
  return *st.cache.find(name, group_key_of(m, d));
}

/// Eager mode: every dim of m (aliases included) gets its communicator now, collective
/// over the world (members or not). Unless `verified`, the ranks first check that they
/// derived the same mesh.
template <communicator Comm, class Layout>
void ensure_all(mesh_state<Comm>& st, const Layout& m, std::string_view step, bool verified = false) {
  if (st.options.lazy) return;
  const deadline dl = st.start_step();
  if (!verified) check_same(*st.control, layout_descriptor(m, std::string(step)), step, dl);
  create(st, *st.control, numbering::world, m, 0, Layout::ndim_with_aliases, step, dl);
}

}  // namespace devmesh::detail
