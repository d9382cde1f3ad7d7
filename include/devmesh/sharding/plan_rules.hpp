// devmesh/sharding/plan_rules.hpp: the rules a redistribute plan (plan.hpp) is made by, on
// placement tables alone: the table in one spelling, which cuts nest within which blocks, and
// the steps in their order (plan_reductions: slice, reduce_scatter, all_reduce; plan_exchange:
// the exchange and the last local steps). plan_candidates.hpp combines them into candidates.
#pragma once
#include <string_view>

#include "../core/config.hpp"
#include "../core/diagnostics.hpp"
#include "index_map.hpp"
#include "placement.hpp"
#include "plan_step.hpp"
#include "table.hpp"

namespace devmesh {
namespace detail {

// Not constexpr: reached in a constant expression, a compile error naming the call.
[[noreturn]] inline void fail_plan(const char* what, std::string_view dim = {}) {
  message m;
  m << "devmesh: redistribute: " << what;
  if (!dim.empty()) m << " '" << dim << "'";
  throw_mesh_error(m);
}

/// True if the shard chain of tensor dim t in a, its first `count` dims, is the start of the
/// one in b (same dims in the same order, same written split factors).
template <int N>
constexpr bool chain_starts(const placement_table<N>& a, const shard_dims<N>& ca, int count,
                            const placement_table<N>& b, const shard_dims<N>& cb) {
  if (count > cb.count) return false;
  for (int k = 0; k < count; ++k)
    if (ca.dims[k] != cb.dims[k] || a.at[ca.dims[k]].split_factor != b.at[cb.dims[k]].split_factor) return false;
  return true;
}

/// The table in one spelling: explicit orders renumbered from 0, dropped where they equal
/// application order; `placed` says which dims are not replicated. Equal specs, equal tables.
template <int N>
constexpr placement_table<N> normalized(const placement_table<N>& in, const application_order<N>& o) {
  placement_table<N> t = in;
  bool any_order = false;
  for (int d = 0; d < N; ++d) {  // written only where they change: a table is most often normal
    // already, and narrow stores read back whole stall the copy that follows (store forwarding)
    if (t.placed[d] == t.at[d].is_replicate()) t.placed[d] = !t.at[d].is_replicate();
    if (!t.at[d].is_shard() && t.order_rank[d] != -1) t.order_rank[d] = -1;
    any_order = any_order || t.order_rank[d] >= 0;
  }
  if (!any_order) return t;  // the common case: nothing to renumber
  for (int k = 0; k <= t.max_tensor_dim(); ++k) {  // tensor dims, not mesh dims: S(3) on a 1-D mesh too
    if (!t.ordered(k)) continue;
    const auto c = dims_in_shard_order(t, o, k);
    bool in_application_order = true;
    // `&& i < N`: c.count <= N always, but g++ -O3 cannot see it (-Warray-bounds on a 1-D mesh)
    for (int i = 1; i < c.count && i < N; ++i) in_application_order = in_application_order && o.pos[c.dims[i - 1]] < o.pos[c.dims[i]];
    for (int i = 0; i < c.count; ++i) t.order_rank[c.dims[i]] = in_application_order ? -1 : i;
  }
  return t;
}

/// Makes dim d (not sharding) the last shard of tensor dim t: an explicit order where
/// application order would put d earlier.
template <int N>
constexpr void append_shard(placement_table<N>& t, const application_order<N>& o, int d, int k) {
  const auto c = dims_in_shard_order(t, o, k);
  bool in_order = !t.ordered(k);  // the common case: d comes last in application order too
  for (int i = 0; i < c.count; ++i) in_order = in_order && o.pos[c.dims[i]] < o.pos[d];
  if (in_order) {  // what normalized() would make of it (t is normal: every caller's is), without renumbering
    t.at[d] = placement::sharded(k);
    t.placed[d] = true;
    t.order_rank[d] = -1;
    return;
  }
  for (int i = 0; i < c.count; ++i) t.order_rank[c.dims[i]] = i;
  t.at[d] = placement::sharded(k);
  t.order_rank[d] = c.count;
  t = normalized(t, o);
}

/// True if dim d comes after every dim of tensor dim k's chain in `now` in application order:
/// then d's cut splits each block of `now` (PyTorch's nested Shard), whatever the extents. A
/// dim that comes earlier needs an explicit order, whose uneven cuts (_StridedShard's) need not
/// lie within the blocks of `now`: a step that slices or reduce-scatters into them would miss
/// elements, so the planner never makes one (an exchange computes what moves instead).
template <int N>
constexpr bool cuts_within(const placement_table<N>& now, const application_order<N>& o, int d, int k) {
  const auto c = dims_in_shard_order(now, o, k);
  for (int i = 0; i < c.count; ++i)
    if (o.pos[c.dims[i]] > o.pos[d]) return false;
  return true;
}

/// True if appending dim d to tensor dim t's chain in `now` cuts within its blocks and gives
/// the start of its chain in `target` (so the slice keeps what `target` holds).
template <int N>
constexpr bool appends_toward(const placement_table<N>& now, const placement_table<N>& target,
                              const application_order<N>& o, int d, int k) {
  if (!cuts_within(now, o, d, k)) return false;
  auto next = now;
  append_shard(next, o, d, k);
  const auto c = dims_in_shard_order(next, o, k);
  return chain_starts(next, c, c.count, target, dims_in_shard_order(target, o, k));
}

/// True if the first `count` dims of chain c are all applied (application order) before the
/// rest of it: then their block is the union of the rest's blocks within it, whatever the
/// extents (an explicit order's uneven cuts only guarantee that much).
template <int N>
constexpr bool applied_first(const shard_dims<N>& c, int count, const application_order<N>& o) {
  for (int i = 0; i < count; ++i)
    for (int j = count; j < c.count && j < N; ++j)  // j < N: for g++ -O3's -Warray-bounds (as above)
      if (o.pos[c.dims[i]] > o.pos[c.dims[j]]) return false;
  return true;
}

/// The dims of `now` that shard a tensor dim and are not in the common start of its chains in
/// `now` and `target` (a start applied first in both): the dims whose blocks change (the
/// exchange's group).
template <int N>
constexpr unsigned changed_shard_dims(const placement_table<N>& now, const placement_table<N>& target,
                                      const application_order<N>& o) {
  unsigned g = 0;
  for (int k = 0; k <= now.max_tensor_dim(); ++k) {
    const auto a = dims_in_shard_order(now, o, k), b = dims_in_shard_order(target, o, k);
    if (a.count == b.count && chain_starts(now, a, a.count, target, b)) continue;  // the same cuts: the same blocks
    int common = 0;
    while (common < a.count && chain_starts(now, a, common + 1, target, b) && applied_first(a, common + 1, o) &&
           applied_first(b, common + 1, o))
      ++common;
    for (int i = common; i < a.count; ++i) g |= 1u << a.dims[i];
  }
  return g;
}

/// The dims of step s outside its group that it makes Partial(sum) from Shard: each rank keeps
/// its values among zeros there (a local step's S -> P(sum); an exchange's or a
/// reduce_scatter's: what no rank of the group held is zeros).
template <int N>
constexpr unsigned zero_filled_dims(const plan_step<N>& s) {
  unsigned f = 0;
  for (int d = 0; d < N; ++d)
    if (!s.on(d) && s.before.at[d].is_shard() && s.after.at[d].is_partial() && s.after.at[d].op == reduction::sum)
      f |= 1u << d;
  return f;
}

template <int N, int C>
constexpr void add_step(redistribute_plan<N, C>& p, step_kind kind, unsigned group, reduction op,
                        const placement_table<N>& before, const placement_table<N>& after, const char* why) {
  if (p.count == C) fail_plan("internal error: a plan longer than its capacity");  // never: the rules' step counts
  p.steps[p.count++] = plan_step<N>{kind, group, op, before, after, why};
}

/// Step 1's strided slice: where dst's chain of tensor dim k (application order) goes on from
/// the one of `next` with a dim r that step 2 reduce-scatters, then a dim d that `next`
/// replicates, d cuts now within each block r will cut: _StridedShard(k, size of r), PyTorch's
/// way to write it, whose pieces are r's torch.chunk blocks for every extent. r's
/// reduce_scatter then reduces d's share only. Returns true if it sliced.
template <int N>
constexpr bool slice_strided(placement_table<N>& next, const placement_table<N>& dst, const application_order<N>& o,
                             unsigned reduce, const int* sizes, int k) {
  if constexpr (N < 2) return false;  // two dims needed; and g++ -O3 -Warray-bounds sees the rest on one
  const auto a = dims_in_shard_order(next, o, k), c = dims_in_shard_order(dst, o, k);
  // a.count + 2 > N: never where c.count >= a.count + 2, but g++ -O2 cannot see it (-Warray-bounds)
  if (a.count + 2 > N || dst.ordered(k) || c.count < a.count + 2 || !chain_starts(next, a, a.count, dst, c))
    return false;
  const int r = c.dims[a.count], d = c.dims[a.count + 1];
  if (((reduce >> r) & 1u) == 0 || !next.at[d].is_replicate() || dst.at[r].split_factor != 1 ||
      dst.at[d].split_factor != 1 || sizes[r] < 2 || !cuts_within(next, o, r, k))
    return false;
  next.at[d] = placement::strided(k, sizes[r]);
  next = normalized(next, o);
  return true;
}

/// Step 2 after a strided slice: the reduce_scatter over r puts r's cut under the strided dim
/// e that ends `next`'s chain of tensor dim k (its split factor r's size, r after the rest of
/// the chain), which becomes a plain Shard. Returns true if it did.
template <int N>
constexpr bool scatter_under_strided(placement_table<N>& next, const application_order<N>& o, const int* sizes, int r,
                                     int k) {
  const auto a = dims_in_shard_order(next, o, k);
  if (a.count == 0) return false;
  const int e = a.dims[a.count - 1];
  if (next.at[e].split_factor != sizes[r] || next.ordered(k) || o.pos[r] > o.pos[e]) return false;
  for (int i = 0; i + 1 < a.count; ++i)
    if (o.pos[a.dims[i]] > o.pos[r]) return false;
  next.at[e] = placement::sharded(k);
  next.at[r] = placement::sharded(k);
  next = normalized(next, o);
  return true;
}

/// Steps 1-3: the Partial dims of `now` that `dst` does not keep, reduced; returns the table after.
/// rest_dim >= 0: the reduced dims that dst does not shard are reduce-scattered too, cutting
/// tensor dim rest_dim, for the exchange after to gather back (fewer bytes than an all_reduce
/// where that exchange runs anyway: plan_tables).
template <int N, int C>
constexpr placement_table<N> plan_reductions(redistribute_plan<N, C>& p, placement_table<N> now,
                                             const placement_table<N>& dst, const application_order<N>& o,
                                             const int* sizes, int D, bool may_scatter, int rest_dim = -1) {
  unsigned reduce = 0;
  reduction op = reduction::sum;
  for (int d = 0; d < D; ++d)
    if (now.at[d].is_partial() && !(dst.at[d] == now.at[d])) reduce |= 1u << d, op = now.at[d].op;
  if (reduce == 0) return now;
  auto next = now;  // 1. slices that shrink what is reduced and keep what dst holds
  for (bool grew = true; grew;) {
    grew = false;
    for (int i = 0; i < N; ++i) {
      const int d = o.dims[i];
      if (d >= D || !next.at[d].is_replicate() || !dst.at[d].is_shard() || dst.at[d].split_factor != 1) continue;
      if (!appends_toward(next, dst, o, d, dst.at[d].tensor_dim)) continue;
      append_shard(next, o, d, dst.at[d].tensor_dim);
      grew = true;
    }
  }
  for (int k = 0; may_scatter && k <= dst.max_tensor_dim(); ++k) slice_strided(next, dst, o, reduce, sizes, k);
  if (!(next == now)) add_step(p, step_kind::local, 0u, op, now, next, "slice before reducing: less to reduce");
  now = next;
  unsigned scatter = 0;  // 2. the reduced dims whose target shards: reduce_scatter, in dst's shard order
  for (int k = 0; k <= dst.max_tensor_dim(); ++k) {
    const auto c = dims_in_shard_order(dst, o, k);
    for (int i = 0; i < c.count; ++i) {
      const int d = c.dims[i];
      if (!may_scatter || ((reduce >> d) & 1u) == 0 || dst.at[d].split_factor != 1) continue;
      if (cuts_within(next, o, d, k)) append_shard(next, o, d, k);
      else if (!scatter_under_strided(next, o, sizes, d, k)) break;  // this dim and the rest: all_reduce
      scatter |= 1u << d;
    }
  }
  unsigned gathered_back = 0;  // 2'. the rest, where they cut within the blocks
  for (int i = 0; rest_dim >= 0 && i < N; ++i) {
    const int d = o.dims[i];
    const bool rest = d < D && (((reduce & ~scatter) >> d) & 1u) != 0;
    if (!rest || dst.at[d].is_shard() || !cuts_within(next, o, d, rest_dim)) continue;
    append_shard(next, o, d, rest_dim);
    gathered_back |= 1u << d;
  }
  scatter |= gathered_back;
  if (scatter)
    add_step(p, step_kind::reduce_scatter, scatter, op, now, next,
             gathered_back ? "Partial to Shard, gathered back by the exchange: each element reduced on one rank, not "
                             "on every rank of the group"
                           : "Partial to Shard: each rank keeps its part");
  now = next;
  if (const unsigned all = reduce & ~scatter) {  // 3. the rest: one all_reduce over their group
    for (int d = 0; d < D; ++d)
      if ((all >> d) & 1u) next.at[d] = placement::replicated();
    next = normalized(next, o);
    add_step(p, step_kind::all_reduce, all, op, now, next, "Partial to Replicate: one all_reduce over the dims' group");
  }
  return next;
}

/// What step 4 aims at: dst, with its Partial dims that `now` does not hold as such replaced
/// by Replicate, or, for S -> P(sum), by the shard `now` has where it cuts the same block (the
/// last local step makes them Partial: zeros around the kept block).
template <int N>
constexpr placement_table<N> exchange_target(const placement_table<N>& now, const placement_table<N>& dst,
                                             const application_order<N>& o, int D) {
  auto want = dst;
  for (int d = 0; d < D; ++d)
    if (dst.at[d].is_partial() && !(now.at[d] == dst.at[d])) want.at[d] = placement::replicated();
  want = normalized(want, o);
  for (int d = 0; d < D; ++d) {  // S -> P(sum): the shard kept where it cuts as in `now`
    const placement s = now.at[d];
    if (!dst.at[d].is_partial() || dst.at[d].op != reduction::sum || !s.is_shard() || s.split_factor != 1) continue;
    if (!cuts_within(want, o, d, s.tensor_dim)) continue;
    auto kept = want;
    append_shard(kept, o, d, s.tensor_dim);
    if (((changed_shard_dims(now, kept, o) >> d) & 1u) == 0) want = kept;
  }
  return want;
}

/// The table of the third candidate's first step (plan_tables): the dims that dst makes
/// Partial(sum) and that cut last in `now`'s chains become Partial locally, each rank keeping
/// its block among zeros (PyTorch's S -> P(sum)): their block grows to their parent's, which is
/// what the group's sum needs. Returns the table after (`now` if no dim qualifies).
template <int N>
constexpr placement_table<N> zero_filled(const placement_table<N>& now, const placement_table<N>& dst,
                                         const application_order<N>& o) {
  auto out = now;
  for (int k = 0; k <= now.max_tensor_dim(); ++k) {
    const auto c = dims_in_shard_order(now, o, k);
    for (int i = c.count - 1; i >= 0; --i) {  // from the last cut back, while they qualify
      const int d = c.dims[i];
      const bool to_sum = dst.at[d].is_partial() && dst.at[d].op == reduction::sum;
      // the block must grow to the one of the cuts before (so they must be applied first)
      if (!to_sum || now.at[d].split_factor != 1 || !applied_first(c, i, o)) break;
      out.at[d] = dst.at[d];
    }
  }
  return normalized(out, o);
}


/// Steps 4-5 from `now`: the exchange, S -> P(sum) dims that it would gather kept as zeros
/// around what it brings, the last local step.
template <int N, int C>
constexpr void plan_exchange(redistribute_plan<N, C>& p, const placement_table<N>& now, const placement_table<N>& to,
                             const application_order<N>& o, int D) {
  const auto want = exchange_target(now, to, o, D);
  const unsigned g = changed_shard_dims(now, want, o);
  // S -> P(sum) dims that the exchange would gather keep their cuts instead, the exchange
  // running over the rest of g: a rank receives the part of its new block that its group holds,
  // zeros elsewhere. The blocks of `now` partition the tensor, so exactly one coordinate of
  // those dims has a group holding a given element, and their sum counts it once, wherever the
  // dims cut (the property tests run this with explicit orders and _StridedShard too).
  unsigned zeros = 0;
  for (int d = 0; d < D; ++d)
    if (((g >> d) & 1u) && to.at[d].is_partial() && to.at[d].op == reduction::sum && want.at[d].is_replicate())
      zeros |= 1u << d;
  auto after = want, gathered = now;
  for (int d = 0; d < D; ++d) {
    if ((zeros >> d) & 1u) after.at[d] = gathered.at[d] = to.at[d];
    else if ((g >> d) & 1u) gathered.at[d] = placement::replicated();
  }
  if (zeros) after = normalized(after, o);
  if (const unsigned group = g & ~zeros) {
    if (normalized(gathered, o) == after)
      add_step(p, step_kind::all_gather, group, reduction::sum, now, after,
               zeros ? "blocks gathered, Shard to Partial(sum): each rank receives what its group holds, zeros "
                       "elsewhere"
                     : "Shard to Replicate: the group's blocks gathered");
    else
      add_step(p, step_kind::all_to_all, group, reduction::sum, now, after,
               zeros ? "blocks change, Shard to Partial(sum): each rank receives only the part of its new block "
                       "that its group holds, zeros elsewhere"
                     : "blocks change: each rank receives only what it lacks (PyTorch: all_gather, then slice)");
  } else if (zeros) {  // they cut last (the rest of their chains is in g): zeros, then any slice
    auto filled = now;
    for (int d = 0; d < D; ++d)
      if ((zeros >> d) & 1u) filled.at[d] = to.at[d];
    filled = normalized(filled, o);
    add_step(p, step_kind::local, 0u, reduction::sum, now, filled, "Shard to Partial(sum): the block kept among zeros");
    if (!(filled == after))
      add_step(p, step_kind::local, 0u, reduction::sum, filled, after, "Replicate to Shard: a local slice");
  } else if (!(now == after)) {
    add_step(p, step_kind::local, 0u, reduction::sum, now, after, "Replicate to Shard: a local slice");
  }
  if (!(after == to)) add_step(p, step_kind::local, 0u, reduction::sum, after, to, "to Partial: local");
}

/// S -> P(sum) made locally (zeros around each block) and the collective right after it, a
/// reduce_scatter or an exchange over other dims: one step from the first table instead,
/// each rank sending only what the blocks hold, never the zeros (the new block's elements that
/// no rank of the group held are zeros: zero_filled_dims). The same values: each element of a
/// new block comes from the one rank of the group whose filled block holds it, a zero unless
/// its old block did. `S(0),P(sum) -> P(sum),S(0)` on (2,4) is one reduce_scatter over tp:
/// half of what an all_reduce or the two steps send. (plan_exchange keeps such dims as zeros
/// itself; this is for the third candidate, whose zeros come first.)
template <int N, int C>
constexpr void fuse_zero_fills(redistribute_plan<N, C>& p) {
  for (int i = 0; i + 1 < p.count; ++i) {
    const auto &fill = p.steps[i], &next = p.steps[i + 1];
    if (fill.kind != step_kind::local || zero_filled_dims(fill) == 0 || !next.communicates() ||
        next.kind == step_kind::all_reduce || zero_filled_dims(next) != 0)
      continue;
    p.steps[i] = plan_step<N>{next.kind, next.group, next.op, fill.before, next.after,
                              next.kind == step_kind::reduce_scatter
                                  ? "Partial to Shard, Shard to Partial(sum): each rank reduces only the part of its "
                                    "new block its old one holds, zeros elsewhere"
                                  : "blocks change, Shard to Partial(sum): each rank receives only the held part of "
                                    "its new block, zeros elsewhere"};
    for (int k = i + 1; k + 1 < p.count; ++k) p.steps[k] = p.steps[k + 1];
    p.steps[--p.count] = plan_step<N>{};
  }
}

}  // namespace detail
}  // namespace devmesh
