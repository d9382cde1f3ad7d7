// devmesh/redistribute/impl/steps.hpp: one step of a redistribute plan (sharding/plan.hpp) run
// by one rank, from the block it holds under the step's `before` spec to the one it holds under
// `after`. Elements travel packed in global row-major order (sharding/block_overlap.hpp), so
// sender and receiver agree on them without sending indices; uneven and empty blocks use the
// backend's v-collectives (a count per rank), never padding. Blocks live in the backend's memory
// space (buffers.hpp; every copy and collective on the call's stream) and move as bytes: the
// element type is a value, and only the collectives read it. Templates over the backend,
// instantiated once per backend (executor.hpp).
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "../../core/print.hpp"
#include "../../runtime/backend.hpp"
#include "../../runtime/device_mesh.hpp"
#include "../../runtime/mesh_runtime.hpp"
#include "../call.hpp"
#include "blocks.hpp"
#include "buffers.hpp"
#include "checks.hpp"
#include "survey.hpp"

namespace devmesh::detail {

/// One call run by this rank: the mesh's site (state, communicators), the mesh as values, this
/// rank's position, the extents, the element type.
template <communicator Comm>
struct step_run {
  const group_site<Comm>& on;
  const mesh_data& mesh;
  int pos;
  std::span<const tensor_index> ext;
  element_type type;
};

/// A collective on the communicator of the dims `dims` (made on first use, as flattened_comm),
/// made as the typed collectives are: recorded in the flight record and bounded under the
/// watchdog. `issue(c, watch...)` makes the call on c, passing `watch...` last.
template <communicator Comm, class Issue>
void collective_on(const step_run<Comm>& r, unsigned dims, std::string_view what, std::size_t count,
                   const Issue& issue) {
  const auto& e = r.on.entry(dims);
  mesh_runtime<Comm>::collective(
      r.on.state, r.on.watch, e, what, r.type.name, count,
      [&] { return "dims '" + e.name + "' of " + layout_string(r.mesh.layout); },
      [&](const Comm& c, watch_ptr<Comm> w) {
        if constexpr (std::is_same_v<watch_ptr<Comm>, std::nullptr_t>) issue(c);
        else if (w) issue(c, w);
        else issue(c);
      });
}

/// Checks the communicator of the step's group (made now if new) against the group the plan means.
template <communicator Comm>
void check_step_comm(const step_run<Comm>& r, unsigned group, int size, int me) {
  const Comm& c = *r.on.entry(group).comm;
  if (c.size() != size || c.rank() != me)
    fail_step("collective", "the group's communicator has " + std::to_string(c.size()) + " ranks, rank " +
                                std::to_string(c.rank()) + "; the plan's group has " + std::to_string(size) +
                                ", this rank at " + std::to_string(me));
}

/// A local step: a slice, or a Partial target (zeros where the sum must not count twice).
template <communicator Comm, class B>
void run_local(const step_run<Comm>& r, const step_data& s, step_blocks& blocks, in_block in, out_block out, B& b) {
  bool may_zero = false, zero_all = false;  // R -> P(sum): the value stays on coordinate 0 only
  for (int d = 0; d < r.mesh.layout.ndim; ++d) {
    if (!s.after.at[d].is_partial() || s.before.at[d].is_partial() || s.after.at[d].op != reduction::sum) continue;
    may_zero = true;
    zero_all = zero_all || (s.before.at[d].is_replicate() && r.mesh.coordinate(r.pos, d) != 0);
  }
  if (may_zero) b.zero(out.data, out.n);
  if (zero_all) return;
  auto copy = b.runs(in.data, out.data);
  const block_maps old_block = blocks.before(r.pos);
  const tensor_index kept = blocks.runs(old_block, blocks.after(r.pos), copy);
  copy.flush();
  if (kept != static_cast<tensor_index>(out.n) && !may_zero)
    fail_step("local", "the new block has elements the old one lacks");
  if (may_zero && kept != block_size(old_block))  // a Partial(sum) block keeps every element it held
    fail_step("local", "a block made Partial loses elements it held");
}

/// A local step that only drops elements, whose new block is one range of the old (a slice
/// of rows): that range, with no copy (the next step reads it in place); else nothing.
template <communicator Comm>
in_block local_view(const step_run<Comm>& r, const step_data& s, step_blocks& blocks, in_block in) {
  for (int d = 0; d < r.mesh.layout.ndim; ++d)
    if (s.after.at[d].is_partial() && !s.before.at[d].is_partial()) return {};  // zeros to write
  const block_maps new_block = blocks.after(r.pos);
  const shared_ranges shared = ranges_of_shared(blocks, blocks.before(r.pos), new_block);
  const shared_range in_old = shared.in_a, in_new = shared.in_b;
  if (in_old.first < 0 || in_new.first != 0 || in_new.count != block_size(new_block) || in_new.count == 0) return {};
  return {in.data + static_cast<std::size_t>(in_old.first) * r.type.size, static_cast<std::size_t>(in_old.count)};
}

/// An all_reduce over the step's group: the block stays, its values are reduced.
template <communicator Comm, class B>
void run_all_reduce(const step_run<Comm>& r, const step_data& s, in_block in, out_block out, B& b) {
  const int me = group_positions(r.mesh, s.group, r.pos, b.counts.group);
  check_step_comm(r, s.group, static_cast<int>(b.counts.group.size()), me);
  collective_on(r, s.group, "all_reduce", in.n, [&](const Comm& c, auto... watch) {
    c.all_reduce(in.data, out.data, in.n, r.type, to_op<op>(s.op), b.stream, watch...);
  });
}

/// reduce_scatter of an integer average: an all_reduce (which rounds as the backend's
/// all_reduce does), then this rank's part kept.
template <communicator Comm, class B>
void run_integer_average(const step_run<Comm>& r, const step_data& s, step_blocks& blocks, in_block in,
                         out_block out, B& b) {
  std::byte* sum = b.resize(b.send, in.n);
  b.copy(sum, in.data, in.n);
  collective_on(r, s.group, "all_reduce", in.n, [&](const Comm& c, auto... watch) {
    c.all_reduce(sum, sum, in.n, r.type, op::avg, b.stream, watch...);
  });
  if (s.zero_filled) b.zero(out.data, out.n);
  auto copy = b.runs(sum, out.data);
  blocks.runs(blocks.before(r.pos), blocks.after(r.pos), copy);
  copy.flush();
}

/// run_reduce_scatter's send side when the group's parts are not already in order in the
/// block: every part packed in the group's order into b.send (`packed` elements); its data.
template <communicator Comm, class B>
const std::byte* pack_parts(const step_run<Comm>& r, step_blocks& blocks, in_block in, std::size_t packed, B& b) {
  std::byte* send = b.resize(b.send, packed);
  tensor_index at = 0;
  auto copy = b.runs(in.data, send);
  const block_maps mine = blocks.before(r.pos);
  for (int q : b.counts.group)
    blocks.runs(mine, blocks.after(q), [&](tensor_index i, tensor_index, tensor_index k) {
      copy(i, at, k);
      at += k;
    });
  copy.flush();
  return send;
}

/// A reduce_scatter: every rank of the group holds the same block (the group is Partial);
/// rank i keeps the reduction of its part. The parts go packed in the group's order: read in
/// place when the block already is (rows), else packed; the result lands in place when this
/// rank's part is one range of its new block. A zero-filling one (dims made Partial(sum) from
/// Shard) has parts that are the new blocks' elements the block holds: every held element in
/// one part, zeros where the new block has elements it lacks.
template <communicator Comm, class B>
void run_reduce_scatter(const step_run<Comm>& r, const step_data& s, step_blocks& blocks, in_block in, out_block out,
                        B& b) {
  const int me = group_positions(r.mesh, s.group, r.pos, b.counts.group);
  check_step_comm(r, s.group, static_cast<int>(b.counts.group.size()), me);
  if (integral_type(r.type) && s.op == reduction::avg) return run_integer_average(r, s, blocks, in, out, b);
  auto& received = b.counts.received;
  received.clear();
  const bool zero_fill = s.zero_filled != 0;
  bool in_order = true;  // every part one range of the block, in the group's order
  std::size_t packed = 0;
  const block_maps mine = blocks.before(r.pos);
  for (int q : b.counts.group) {
    const block_maps part = blocks.after(q);
    const shared_range range = ranges_of_shared(blocks, mine, part).in_a;
    if (range.count != block_size(part) && !zero_fill) fail_step("reduce_scatter", "a part the group's block lacks");
    in_order = in_order && (range.count == 0 || range.first == static_cast<tensor_index>(packed));
    packed += static_cast<std::size_t>(range.count);
    received.push_back(static_cast<std::size_t>(range.count));
  }
  if (zero_fill && packed != in.n) fail_step("reduce_scatter", "a block made Partial loses elements it held");
  const std::byte* send = !in_order || packed != in.n ? pack_parts(r, blocks, in, packed, b) : in.data;
  const block_maps new_block = blocks.after(r.pos);
  const shared_range own = ranges_of_shared(blocks, mine, new_block).in_b;  // zero-filling: a part of it
  const bool direct = own.first == 0 && own.count == static_cast<tensor_index>(out.n);
  const std::size_t kept = received[static_cast<std::size_t>(me)];
  std::byte* recv = direct ? out.data : b.resize(b.recv, kept);
  collective_on(r, s.group, "reduce_scatterv", kept, [&](const Comm& c, auto... watch) {
    c.reduce_scatterv(send, recv, std::span<const std::size_t>(received), r.type, to_op<op>(s.op), b.stream,
                      watch...);
  });
  if (direct) return;
  if (zero_fill) b.zero(out.data, out.n);
  tensor_index k = 0;
  auto copy = b.runs(recv, out.data);
  blocks.runs(mine, new_block, [&](tensor_index, tensor_index o, tensor_index n) {
    copy(k, o, n);
    k += n;
  });
  copy.flush();
}

/// run_exchange's send side when it cannot send in place: every peer's elements packed into
/// b.send in the group's order (b.counts.send_at their offsets); returns b.send's data.
template <communicator Comm, class B>
const std::byte* pack_sends(const step_run<Comm>& r, step_blocks& blocks, in_block in, std::size_t total, B& b) {
  std::byte* send = b.resize(b.send, total);
  tensor_index at = 0;
  auto copy = b.runs(in.data, send);
  const block_maps mine = blocks.before(r.pos);
  group_counts& c = b.counts;
  for (std::size_t i = 0; i < c.group.size(); ++i) {
    c.send_at[i] = static_cast<std::size_t>(at);
    if (static_cast<int>(i) != c.me)
      blocks.runs(mine, blocks.after(c.group[i]), [&](tensor_index k, tensor_index, tensor_index len) {
        copy(k, at, len);
        at += len;
      });
  }
  copy.flush();
  return send;
}

/// run_exchange's receive side when it could not receive in place: each peer's elements,
/// packed in b.recv at b.counts.recv_at, to their places in out.
template <communicator Comm, class B>
void unpack_receives(const step_run<Comm>& r, step_blocks& blocks, out_block out, B& b) {
  auto copy = b.runs(b.recv.data(), out.data);
  const block_maps mine = blocks.after(r.pos);
  const group_counts& c = b.counts;
  for (std::size_t i = 0; i < c.group.size(); ++i) {
    auto at = static_cast<tensor_index>(c.recv_at[i]);
    if (static_cast<int>(i) != c.me)
      blocks.runs(blocks.before(c.group[i]), mine, [&](tensor_index, tensor_index o, tensor_index len) {
        copy(at, o, len);
        at += len;
      });
  }
  copy.flush();
}

/// An all_gather or all_to_all: each rank sends every other rank of the group the elements
/// of its new block that it holds, and keeps its own; nothing else moves. A zero-filling one
/// leaves zeros where no rank of the group held an element. A side whose every peer's elements
/// are one range of its block sends or receives in place (rows); otherwise it packs or unpacks
/// (MPI's vector datatypes in an MPI_Alltoallw instead were measured no faster:
/// docs/benchmarks.md, section 6).
template <communicator Comm, class B>
void run_exchange(const step_run<Comm>& r, const step_data& s, step_blocks& blocks, in_block in, out_block out,
                  B& b) {
  const exchange_survey& kept = survey_of(r.mesh, s, r.ext, r.pos, blocks);
  const exchange_sides x = kept.x;
  group_counts& c = b.counts;
  c = kept.counts;
  const auto me = static_cast<std::size_t>(c.me);
  check_step_comm(r, s.group, static_cast<int>(c.group.size()), c.me);
  const bool zero_fill = s.zero_filled != 0;  // the new block's elements no rank held: zeros
  if (zero_fill) b.zero(out.data, out.n);
  const bool own_in_call = own_part_in_call(x, c);
  const std::byte* send = x.send_in_place ? in.data : pack_sends(r, blocks, in, x.total_sent, b);
  std::byte* recv = out.data;
  if (!x.recv_in_place) {
    recv = b.resize(b.recv, x.total_received);
    std::size_t at = 0;
    for (std::size_t i = 0; i < c.group.size(); ++i) c.recv_at[i] = at, at += c.received[i];
  }
  using counts = std::span<const std::size_t>;
  collective_on(r, s.group, "all_to_allv", x.total_received + c.received[me], [&](const Comm& cc, auto... watch) {
    cc.all_to_allv(send, counts(c.sent), counts(c.send_at), recv, counts(c.received), counts(c.recv_at), r.type,
                   b.stream, watch...);
  });
  std::size_t filled = x.total_received + (own_in_call ? c.received[me] : 0);
  if (!own_in_call) {
    auto keep = b.runs(in.data, out.data);
    filled += static_cast<std::size_t>(blocks.runs(blocks.before(r.pos), blocks.after(r.pos), keep));
    keep.flush();
  }
  if (!x.recv_in_place) unpack_receives(r, blocks, out, b);
  if (zero_fill ? filled > out.n : filled != out.n)
    fail_step(step_name(s.kind), "the new block is not covered by the group's blocks");
}

/// Number of positions in a group over the mesh dims `dims`.
inline int group_size(const mesh_data& m, unsigned dims) {
  int n = 1;
  for (int d = 0; d < m.layout.ndim; ++d)
    if ((dims >> d) & 1u) n *= m.size(d);
  return n;
}

/// Step s of a plan on this rank, from block `from` into `to`.
template <communicator Comm, class B>
void run_step(const step_run<Comm>& r, const step_data& s, step_blocks& blocks, in_block from, out_block to, B& b) {
  switch (s.kind) {
    case step_kind::local: return run_local(r, s, blocks, from, to, b);
    case step_kind::all_reduce: return run_all_reduce(r, s, from, to, b);
    case step_kind::reduce_scatter: return run_reduce_scatter(r, s, blocks, from, to, b);
    case step_kind::all_gather:
    case step_kind::all_to_all: return run_exchange(r, s, blocks, from, to, b);
  }
}

/// Every step of plan p on this rank: `in`, its block under the plan's first spec, becomes
/// `out`, its block under the last. Intermediate blocks live in b; the first step reads `in`
/// and the last writes `out` (no copy in or out). Everything on b's stream.
template <communicator Comm, class B>
void run_plan(const step_run<Comm>& r, const plan_data& p, in_block in, out_block out, B& b) {
  if (p.count == 0) {
    if (in.n != out.n) fail_step("last", "an empty plan between blocks of different sizes");
    b.copy(out.data, in.data, in.n);
    return;
  }
  in_block from = in;
  for (int i = 0; i < p.count; ++i) {
    const step_data& s = p.steps[i];
    const bool last = i + 1 == p.count;
    step_blocks blocks(r.mesh, r.ext, s.before, s.after, 2 * group_size(r.mesh, s.group));
    if (s.kind == step_kind::local && !last)
      if (const in_block view = local_view(r, s, blocks, from); view.n != 0) {
        from = view;  // a slice of rows: read in place by the next step
        continue;
      }
    const auto size = static_cast<std::size_t>(block_size(blocks.after(r.pos)));
    if (last && size != out.n) fail_step("last", "the plan's result does not have the target's size");
    const out_block to = last ? out : out_block{b.resize(b.next, size), size};
    run_step(r, s, blocks, from, to, b);
    if (!last) {
      b.now.swap(b.next);
      from = {b.now.data(), size};
    }
  }
}

/// distribute's collective: the tensor at `src` that the rank at index `root` of the whole
/// mesh's group (c.me, c.group) holds becomes, in b.recv, this rank's block under `sent` (no
/// Partial): a broadcast where `sent` shards nothing, else an all_to_allv in which the root
/// sends each rank its block. blocks: `whole` (every dim replicated) and `sent`.
template <communicator Comm, class B>
void scatter_from_root(const step_run<Comm>& r, step_blocks& blocks, const table_view& sent, const std::byte* src,
                       int root, const group_counts& c, B& b) {
  (void)r.on.entry(all_dims(r.mesh));  // made now, by every rank, before the branches
  const auto mine = static_cast<std::size_t>(block_size(blocks.after(r.pos)));
  std::byte* now = b.resize(b.recv, mine);
  bool sharded = false;
  for (int d = 0; d < r.mesh.layout.ndim; ++d) sharded = sharded || sent.at[d].is_shard();
  if (!sharded) {  // every rank's block is the whole tensor
    if (c.me == root) b.copy(now, src, mine);
    return collective_on(r, all_dims(r.mesh), "broadcast", mine, [&](const Comm& cc, auto... watch) {
      cc.broadcast(now, mine, r.type, root, b.stream, watch...);
    });
  }
  const std::size_t n = c.group.size();
  std::vector<std::size_t> send_counts(n), recv_counts(n), packed;
  if (c.me == root) {
    std::size_t total = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (static_cast<int>(i) != c.me) total += send_counts[i] = static_cast<std::size_t>(block_size(blocks.after(c.group[i])));
    auto own = b.runs(src, now);
    auto pack = b.runs(src, b.resize(b.send, total));
    tensor_index at = 0;
    for (std::size_t i = 0; i < n; ++i)
      blocks.runs(blocks.before(r.pos), blocks.after(c.group[i]), [&](tensor_index k, tensor_index o, tensor_index len) {
        if (static_cast<int>(i) == c.me) return own(k, o, len);
        pack(k, at, len);
        at += len;
      });
    own.flush(), pack.flush();
  } else {
    recv_counts[static_cast<std::size_t>(root)] = mine;
  }
  using counts = std::span<const std::size_t>;
  collective_on(r, all_dims(r.mesh), "all_to_allv", mine, [&](const Comm& cc, auto... watch) {
    cc.all_to_allv(b.send.data(), counts(send_counts), counts(packed), now, counts(recv_counts), counts(packed), r.type,
                   b.stream, watch...);
  });
}

}  // namespace devmesh::detail
