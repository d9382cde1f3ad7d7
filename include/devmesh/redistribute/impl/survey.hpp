// devmesh/redistribute/impl/survey.hpp: what an exchange step (all_gather, all_to_all) sends
// and receives on this rank, per rank of its group: the counts, where each part lies in the
// blocks, whether every part is one range there (sent or received in place). Kept by the thread
// for the next call that meets the same step (a redistribute in a training loop): the key is
// everything the survey reads. bench/redistribute reads it to issue the same call. Compiled
// once: inline, in each backend's library (or header-only).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "../call.hpp"
#include "../kept.hpp"
#include "blocks.hpp"

namespace devmesh::detail {

/// A step's group (its positions in the communicator's order, this rank's index) and what this
/// rank sends to and receives from each (elements), with the parts' offsets in its blocks.
struct group_counts {
  std::vector<int> group;
  int me = 0;
  std::vector<std::size_t> sent, received, send_at, recv_at;
};

/// What an exchange finds on this rank besides the per-rank counts and offsets: the shape of
/// its own part, whether every peer's elements are one range on each side, the totals.
struct exchange_sides {
  shared_ranges own;
  bool send_in_place = true, recv_in_place = true;
  std::size_t total_sent = 0, total_received = 0;
};

/// An exchange step surveyed on this rank.
struct exchange_survey {
  group_counts counts;
  exchange_sides x;
};

/// Surveys an exchange on this rank (position pos, at index c.me of c.group, set): for every
/// peer, the number and place of the elements it sends and receives (offsets in its blocks
/// where they are one range there).
inline exchange_sides survey_exchange(step_blocks& blocks, int pos, group_counts& c) {
  const std::size_t n = c.group.size();
  c.sent.assign(n, 0), c.received.assign(n, 0), c.send_at.assign(n, 0), c.recv_at.assign(n, 0);
  exchange_sides x;
  const block_maps mine_before = blocks.before(pos), mine_after = blocks.after(pos);
  for (std::size_t i = 0; i < n; ++i) {
    if (static_cast<int>(i) == c.me) continue;
    const int q = c.group[i];
    const shared_range to = ranges_of_shared(blocks, mine_before, blocks.after(q)).in_a;
    const shared_range from = ranges_of_shared(blocks, blocks.before(q), mine_after).in_b;
    c.sent[i] = static_cast<std::size_t>(to.count), c.received[i] = static_cast<std::size_t>(from.count);
    x.send_in_place = x.send_in_place && to.first >= 0, x.recv_in_place = x.recv_in_place && from.first >= 0;
    c.send_at[i] = static_cast<std::size_t>(to.first < 0 ? 0 : to.first);
    c.recv_at[i] = static_cast<std::size_t>(from.first < 0 ? 0 : from.first);
    x.total_sent += c.sent[i], x.total_received += c.received[i];
  }
  x.own = ranges_of_shared(blocks, mine_before, mine_after);
  return x;
}

/// Where both sides of an exchange are in place and this rank's own part is one range of its
/// old block and of its new one, the collective copies it too (MPI_Alltoallv does that while
/// it waits for the peers: a hand-written program's call, measured faster than a copy of its
/// own before the call): puts it in c's counts and offsets at c.me. Returns whether it did.
inline bool own_part_in_call(const exchange_sides& x, group_counts& c) {
  const shared_range own_in = x.own.in_a, own_out = x.own.in_b;
  if (!(x.send_in_place && x.recv_in_place && own_in.first >= 0 && own_out.first >= 0)) return false;
  const auto k = static_cast<std::size_t>(c.me);
  c.sent[k] = c.received[k] = static_cast<std::size_t>(own_in.count);
  c.send_at[k] = static_cast<std::size_t>(own_in.first), c.recv_at[k] = static_cast<std::size_t>(own_out.first);
  return true;
}

/// Everything survey_exchange reads, as numbers (a kept survey's key): the mesh's modes and
/// application order, the step's two tables and group, the extents, the position.
inline void survey_key(const mesh_data& m, const step_data& s, std::span<const tensor_index> ext, int pos,
                       std::vector<std::int64_t>& key) {
  const layout_values& l = m.layout;
  key.assign({m.root_size, l.ndim, l.ndims, s.group, static_cast<std::int64_t>(ext.size()), pos});
  for (int d = 0; d <= l.ndims; ++d) key.push_back(l.first[d]);
  for (int k = 0; k < l.first[l.ndims]; ++k) key.push_back(l.shape[k]), key.push_back(l.stride[k]);
  for (int d = 0; d < l.ndims; ++d) key.push_back(m.order.dims[d]);
  for (const table_view* t : {&s.before, &s.after}) {
    key.push_back(static_cast<std::int64_t>(t->rule));
    for (int d = 0; d < t->ndims; ++d) {
      const placement& p = t->at[d];
      key.insert(key.end(), {static_cast<std::int64_t>(p.kind), p.tensor_dim, static_cast<std::int64_t>(p.op),
                             p.split_factor, t->order_rank[d]});
    }
  }
  key.insert(key.end(), ext.begin(), ext.end());
}

/// The survey of exchange step s on this rank (position pos; the step's blocks): kept from an
/// earlier call of this thread when the key matches (the last 8 kept), else made and kept.
/// Valid until the thread's next survey_of (run_exchange copies it at once).
inline const exchange_survey& survey_of(const mesh_data& m, const step_data& s, std::span<const tensor_index> ext,
                                        int pos, step_blocks& blocks) {
  struct kept {
    std::vector<std::int64_t> key;
    exchange_survey survey;
  };
  thread_local kept_last<kept> surveys;
  thread_local std::vector<std::int64_t> key;
  survey_key(m, s, ext, pos, key);
  if (const kept* k = surveys.find([&](const kept& k) { return k.key == key; })) return k->survey;
  kept made{key, {}};
  made.survey.counts.me = group_positions(m, s.group, pos, made.survey.counts.group);
  made.survey.x = survey_exchange(blocks, pos, made.survey.counts);
  return surveys.keep(std::move(made)).survey;  // kept only once complete (the survey may throw)
}

}  // namespace devmesh::detail
