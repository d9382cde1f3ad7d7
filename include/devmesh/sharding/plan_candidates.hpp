// devmesh/sharding/plan_candidates.hpp: the candidate plans the planner (plan.hpp) chooses
// among, each made by the rules of plan_rules.hpp from a start and an aim, and the choice
// (plan_model.hpp). A candidate is a recipe, made again from its recipe when it is chosen: the
// choice keeps only scores, never a list of plans (a plan is most of a kilobyte, and the
// dynamic planner's time goes to writing plans).
//
// The recipes, each only where it can differ from the first plan:
//  first             reductions that scatter where the target shards, S -> P(sum) as late as
//                    possible (plan_rules.hpp's steps 1-5)
//  all_reduce_only   every reduction an all_reduce (a smaller block is reduced where
//                    S -> P(sum) then needs no exchange)
//  filled_first      S -> P(sum) made Partial first (what the reductions scatter is then the
//                    target's block)
//  rest_scatter k    where an all_reduce comes before an exchange: the reduced dims that the
//                    target does not shard reduce-scattered on tensor dim k, gathered back by
//                    the exchange (each element reduced on one rank, not on every rank of the
//                    group, before it moves)
//  split k           replicas split the reduction: the dims that both specs replicate cut
//                    tensor dim k first, so each replica of the reducing group reduces a part,
//                    and the exchange gathers the parts back. A group of n ranks reducing with m
//                    replicas sends (n - 1 + m - 1) / (n m) of the tensor per rank, not (n - 1) / n
//  split_aimed k     the same, the replicas' cut appended to the target's on tensor dim k
//                    (strided where it must nest under a reduce_scatter: _StridedShard)
//  rereduce_kept k   a Partial(sum) that both specs have, reduce-scattered on k and made
//                    Partial(sum) again around what the exchange brings (zeros elsewhere): the
//                    exchange then moves each element once, not once per partial value
//  rereduce_shards k Partial dims whose target shards, reduce-scattered on k where they cannot
//                    scatter on the target's cut, the exchange moving them after
//  hierarchical I    (with a model only) a collective over several dims split by its dims: an
//                    all_reduce as reduce_scatter over I, all_reduce over the rest, all_gather
//                    over I; a reduce_scatter over two dims as two, either dim first. On a slow
//                    dim the slow links then carry 1/|I| of the bytes (reduce within the node
//                    first); on uniform links they send as many bytes in more collectives, so
//                    the model never chooses them there
//  per_dim           (with a model) PyTorch 2.15's greedy plan in devmesh's steps: one
//                    collective per mesh dim, from the last to the first, then the rest local.
//                    More bytes than the others, but each dim's own collective on its links.
// With a model, no candidate that sends more bytes than the per_dim one, the one chosen by
// bytes, or issue 20's (the first four recipes, chosen as before issue 42) is chosen.
#pragma once
#include "../core/config.hpp"
#include "plan_model.hpp"
#include "plan_rules.hpp"
#include "plan_step.hpp"

namespace devmesh::detail {

/// A candidate while it is made: longer than a plan may be (it is then not eligible).
template <int N>
using draft_plan = redistribute_plan<N, 8>;

/// What every candidate is made from: both tables (normalized), the order in which dims cut,
/// the dims' sizes, the mesh's dims (D; N with aliases), the tensor dims a candidate may cut
/// (those the specs name, or the tensor's rank where a model gives it), the table after S ->
/// P(sum) made first, and the model (nullptr: none).
template <int N>
struct plan_inputs {
  placement_table<N> from, to, filled;
  application_order<N> o;
  const int* sizes = nullptr;
  int D = 0;
  int tensor_dims = 0;
  const plan_model<N>* model = nullptr;
};

enum class recipe_kind : int {
  first, all_reduce_only, filled_first, rest_scatter, split, split_aimed, rereduce_kept, rereduce_shards,
  hierarchical, per_dim
};

/// One candidate's recipe: its kind, the tensor dim it cuts (-1: none), and, for a
/// hierarchical one, the recipe it rewrites (`base`) and the dims that reduce first (`inner`).
struct plan_recipe {
  recipe_kind kind = recipe_kind::first;
  int k = -1;
  recipe_kind base = recipe_kind::first;
  unsigned inner = 0;
};

/// Steps 1-5 from `start`: reductions toward `aim`, then the exchange to the target.
template <int N, int C>
constexpr void plan_through(redistribute_plan<N, C>& c, const plan_inputs<N>& in, const placement_table<N>& start,
                            const placement_table<N>& aim, bool may_scatter, int rest_dim) {
  plan_exchange(c, plan_reductions(c, start, aim, in.o, in.sizes, in.D, may_scatter, rest_dim), in.to, in.o, in.D);
  fuse_zero_fills(c);
}

/// True if a local step from `a` to `b` makes a dim Partial: the step must then keep every
/// element it held (redistribute/steps.hpp's run_local), so it merges with no slice.
template <int N>
constexpr bool makes_partial(const placement_table<N>& a, const placement_table<N>& b) {
  for (int d = 0; d < N; ++d)
    if (b.at[d].is_partial() && !a.at[d].is_partial()) return true;
  return false;
}

/// A local step from `from` to `start`, c's first table, put first: merged with c's first
/// step where that is a local slice too (one slice), else inserted. False if it does not fit.
template <int N, int C>
constexpr bool put_local_first(redistribute_plan<N, C>& c, const placement_table<N>& from,
                               const placement_table<N>& start, const char* why) {
  if (c.count > 0 && c.steps[0].kind == step_kind::local && !makes_partial(c.steps[0].before, c.steps[0].after)) {
    c.steps[0].before = from;
    c.steps[0].why = why;
    return true;
  }
  if (c.count == C) return false;
  const placement_table<N> first = start;
  for (int i = c.count; i > 0; --i) c.steps[i] = c.steps[i - 1];
  ++c.count;
  c.steps[0] = plan_step<N>{step_kind::local, 0u, reduction::sum, from, first, why};
  return true;
}

/// The dims that a reduction could split over: replicated by both specs, of size 2 or more.
template <int N>
constexpr unsigned replica_dims(const plan_inputs<N>& in) {
  unsigned r = 0;
  for (int d = 0; d < in.D; ++d)
    if (in.from.at[d].is_replicate() && in.to.at[d].is_replicate() && in.sizes[d] > 1) r |= 1u << d;
  return r;
}

/// The Partial dims of `from` that `to` does not keep as they are (what plan_reductions reduces).
template <int N>
constexpr unsigned reduced_dims(const plan_inputs<N>& in) {
  unsigned r = 0;
  for (int d = 0; d < in.D; ++d)
    if (in.from.at[d].is_partial() && !(in.to.at[d] == in.from.at[d])) r |= 1u << d;
  return r;
}

/// t with the dims in `dims` appended to tensor dim k's chain, in application order, each where
/// it cuts within the blocks (nested); `t` itself if none does.
template <int N>
constexpr placement_table<N> cut_by(placement_table<N> t, const application_order<N>& o, unsigned dims, int k) {
  for (int i = 0; i < N; ++i) {
    const int d = o.dims[i];
    if (((dims >> d) & 1u) && cuts_within(t, o, d, k)) append_shard(t, o, d, k);
  }
  return t;
}

/// t with the dims in `dims` replicated (a reduction's aim that leaves their cut to step 2').
template <int N>
constexpr placement_table<N> replicated_on(placement_table<N> t, const application_order<N>& o, unsigned dims) {
  for (int d = 0; d < N; ++d)
    if ((dims >> d) & 1u) t.at[d] = placement::replicated();
  return normalized(t, o);
}

/// The dims where both specs hold the same Partial(sum), and those Partial in `from` whose
/// target shards: the two re-reductions' dims.
template <int N>
constexpr unsigned kept_sums(const plan_inputs<N>& in) {
  unsigned r = 0;
  for (int d = 0; d < in.D; ++d)
    if (in.from.at[d].is_partial() && in.from.at[d].op == reduction::sum && in.to.at[d] == in.from.at[d]) r |= 1u << d;
  return r;
}
template <int N>
constexpr unsigned partials_to_shards(const plan_inputs<N>& in) {
  unsigned r = 0;
  for (int d = 0; d < in.D; ++d)
    if (in.from.at[d].is_partial() && in.to.at[d].is_shard()) r |= 1u << d;
  return r;
}

/// The candidates that split a reduction over replicas (split, split_aimed) or reduce again
/// (rereduce_kept, rereduce_shards), made into c. False if the recipe makes nothing new.
template <int N, int C>
constexpr bool make_split(redistribute_plan<N, C>& c, const plan_inputs<N>& in, const plan_recipe& r) {
  const unsigned replicas = replica_dims(in);
  switch (r.kind) {
    case recipe_kind::split: {
      const auto pre = cut_by(in.from, in.o, replicas, r.k);
      if (pre == in.from) return false;
      plan_through(c, in, pre, in.to, true, r.k);
      return put_local_first(c, in.from, pre, "replicas split the reduction: each reduces the part it keeps, gathered back after");
    }
    case recipe_kind::split_aimed: {
      const auto aim = cut_by(in.to, in.o, replicas, r.k);
      if (aim == in.to) return false;
      plan_through(c, in, in.from, aim, true, r.k);
      return true;
    }
    case recipe_kind::rereduce_kept:
    case recipe_kind::rereduce_shards: {
      const unsigned dims = r.kind == recipe_kind::rereduce_kept ? kept_sums(in) : partials_to_shards(in);
      if (!dims) return false;
      plan_through(c, in, in.from, replicated_on(in.to, in.o, dims), true, r.k);
      return true;
    }
    default: return false;
  }
}

/// Recipes first, all_reduce_only, filled_first and rest_scatter, made into c.
template <int N, int C>
constexpr bool make_basic(redistribute_plan<N, C>& c, const plan_inputs<N>& in, const plan_recipe& r) {
  switch (r.kind) {
    case recipe_kind::first: plan_through(c, in, in.from, in.to, true, -1); return true;
    case recipe_kind::all_reduce_only: plan_through(c, in, in.from, in.to, false, -1); return true;
    case recipe_kind::filled_first:
      add_step(c, step_kind::local, 0u, reduction::sum, in.from, in.filled,
               "Shard to Partial(sum): the block kept among zeros");
      plan_through(c, in, in.filled, in.to, true, -1);
      return true;
    case recipe_kind::rest_scatter: plan_through(c, in, in.from, in.to, true, r.k); return true;
    default: return false;
  }
}

/// The first all_reduce or reduce_scatter of c over a group of which `inner` is a proper,
/// non-empty part (-1: none): what a hierarchical recipe rewrites.
template <int N, int C>
constexpr int hierarchical_step(const redistribute_plan<N, C>& c, unsigned inner) {
  for (int i = 0; i < c.count; ++i) {
    const auto& s = c.steps[i];
    if ((s.kind == step_kind::all_reduce || s.kind == step_kind::reduce_scatter) && (s.group & inner) == inner &&
        inner != 0 && inner != s.group)
      return i;
  }
  return -1;
}

/// An all_reduce over a group, in three: reduce_scatter over `inner` (cutting the first tensor
/// dim where all of inner nest), all_reduce over the rest, all_gather over inner. Into parts;
/// returns their number (0: no tensor dim fits).
template <int N>
constexpr int split_all_reduce(const plan_step<N>& s, const plan_inputs<N>& in, unsigned inner, plan_step<N>* parts) {
  for (int k = 0; k < in.tensor_dims; ++k) {
    const auto scattered = cut_by(s.before, in.o, inner, k);
    bool all = true;
    for (int d = 0; d < in.D; ++d) all = all && (((inner >> d) & 1u) == 0 || scattered.at[d].is_shard());
    if (!all) continue;
    const auto reduced = replicated_on(scattered, in.o, s.group & ~inner);
    if (!(replicated_on(reduced, in.o, inner) == s.after)) continue;
    parts[0] = {step_kind::reduce_scatter, inner, s.op, s.before, scattered,
                "hierarchical: reduce_scatter over the fast dims first, so the slow ones carry a part"};
    parts[1] = {step_kind::all_reduce, s.group & ~inner, s.op, scattered, reduced,
                "hierarchical: the part all-reduced over the slow dims"};
    parts[2] = {step_kind::all_gather, inner, s.op, reduced, s.after, "hierarchical: the parts gathered back"};
    return 3;
  }
  return 0;
}

/// A reduce_scatter over two dims r, e (r first in application order) that cut one tensor dim
/// k, nested at the end of its chain, in two: `inner` first. r first: r's cut, then e's within
/// it. e first: e cuts each of r's future blocks (_StridedShard(k, size of r)), then r's
/// reduce_scatter puts its cut under e's (plan_rules.hpp's scatter_under_strided). Into parts;
/// returns their number (0: the step is not of that shape).
template <int N>
constexpr int split_reduce_scatter(const plan_step<N>& s, const plan_inputs<N>& in, unsigned inner,
                                   plan_step<N>* parts) {
  int r = -1, e = -1;
  for (int i = 0; i < N; ++i)
    if ((s.group >> in.o.dims[i]) & 1u) (r < 0 ? r : e) = in.o.dims[i];
  if (e < 0 || (s.group & ~((1u << r) | (1u << e))) != 0 || !s.after.at[r].is_shard()) return 0;
  const int k = s.after.at[r].tensor_dim;
  if (!s.after.at[e].is_shard() || s.after.at[e].tensor_dim != k || !cuts_within(s.before, in.o, r, k)) return 0;
  auto mid = s.before, last = s.before;
  if (inner == (1u << r)) {
    append_shard(mid, in.o, r, k);
    last = cut_by(mid, in.o, 1u << e, k);
  } else {
    mid.at[e] = placement::strided(k, in.sizes[r]);
    mid = normalized(mid, in.o);
    last = mid;
    if (!scatter_under_strided(last, in.o, in.sizes, r, k)) return 0;
  }
  if (!(last == s.after) || mid.ordered(k)) return 0;
  parts[0] = {step_kind::reduce_scatter, inner, s.op, s.before, mid,
              "hierarchical: reduce_scatter over the fast dim first, so the slow one carries a part"};
  parts[1] = {step_kind::reduce_scatter, s.group & ~inner, s.op, mid, s.after,
              "hierarchical: the part reduce-scattered over the slow dim"};
  return 2;
}

/// The hierarchical recipe: c (its base, made) with the step hierarchical_step finds split by
/// `inner`. False where it does not apply or fit.
template <int N, int C>
constexpr bool make_hierarchical(redistribute_plan<N, C>& c, const plan_inputs<N>& in, unsigned inner) {
  const int i = hierarchical_step(c, inner);
  if (i < 0) return false;
  const plan_step<N> s = c.steps[i];
  plan_step<N> parts[3]{};
  const int n = s.kind == step_kind::all_reduce ? split_all_reduce(s, in, inner, parts)
                                                : split_reduce_scatter(s, in, inner, parts);
  if (n == 0 || c.count - 1 + n > C) return false;
  for (int j = c.count - 1; j > i; --j) c.steps[j + n - 1] = c.steps[j];
  for (int j = 0; j < n; ++j) c.steps[i + j] = parts[j];
  c.count += n - 1;
  return true;
}

/// The dims before mesh dim d (mesh order) that shard tensor dim k in t, as bits.
template <int N>
constexpr unsigned sharding_before(const placement_table<N>& t, int d, int k) {
  unsigned b = 0;
  for (int i = 0; i < d; ++i)
    if (t.at[i].is_shard() && t.at[i].tensor_dim == k) b |= 1u << i;
  return b;
}

/// A local step from `now` to `next` added to c, merged with c's last step where that is a
/// local slice and this one is too.
template <int N, int C>
constexpr bool add_local(redistribute_plan<N, C>& c, const placement_table<N>& now, const placement_table<N>& next) {
  if (now == next) return true;
  const auto* last = c.count > 0 ? &c.steps[c.count - 1] : nullptr;
  if (last && last->kind == step_kind::local && !makes_partial(last->before, last->after) && !makes_partial(now, next)) {
    c.steps[c.count - 1].after = next;
    return true;
  }
  if (c.count == C) return false;
  add_step(c, step_kind::local, 0u, reduction::sum, now, next, "a local step: slices, Partial targets");
  return true;
}

/// True if dim d's cut is the last of its chain in `now` and its group's blocks make the block
/// of the chain without it (an all_gather over d gives it): d applied after the rest of the
/// chain (nested), or, where the model knows the extents, the chain's cuts all even (an
/// explicit order's _StridedShard blocks then nest too).
template <int N>
constexpr bool gathers_last(const placement_table<N>& now, const plan_inputs<N>& in, int d) {
  const int k = now.at[d].tensor_dim;
  const auto chain = dims_in_shard_order(now, in.o, k);
  if (chain.count == 0 || chain.dims[chain.count - 1] != d) return false;
  auto rest = now;
  rest.at[d] = placement::replicated();
  if (cuts_within(normalized(rest, in.o), in.o, d, k)) return true;
  if (!in.model || in.model->element_bytes <= 0 || k >= in.model->tensor_rank || k >= plan_model<N>::max_exact_rank)
    return false;
  tensor_index shards = 1;
  for (int i = 0; i < chain.count; ++i) shards *= in.sizes[chain.dims[i]];
  return in.model->shape[k] % shards == 0;
}

/// One step of the per_dim recipe: mesh dim d, from `now`, to placement `target` there, as
/// PyTorch 2.15 moves one dim: Partial to Shard a reduce_scatter where d's cut nests (else an
/// all_reduce and a slice), Partial to Replicate an all_reduce, Shard to anything else an
/// all_gather (d the last cut of its chain) and then a slice or a Partial made locally,
/// Replicate to Shard or Partial locally. False where a step cannot be made so.
template <int N, int C>
constexpr bool per_dim_step(redistribute_plan<N, C>& c, placement_table<N>& now, const plan_inputs<N>& in, int d,
                            placement target) {
  const placement cur = now.at[d];
  if (cur == target) return true;
  if (cur.is_partial() && target.is_partial()) return false;
  const char* why = "one dim at a time (PyTorch's way): this dim's own collective on its links";
  const bool nests = target.is_shard() && target.split_factor == 1;
  auto next = now;
  if (cur.is_partial() || cur.is_shard()) {
    const bool scatter = cur.is_partial() && nests && cuts_within(now, in.o, d, target.tensor_dim);
    if (cur.is_shard() && !gathers_last(now, in, d)) return false;
    if (scatter) append_shard(next, in.o, d, target.tensor_dim);
    else next.at[d] = placement::replicated(), next = normalized(next, in.o);
    if (c.count == C) return false;
    add_step(c, cur.is_shard() ? step_kind::all_gather : scatter ? step_kind::reduce_scatter : step_kind::all_reduce,
             1u << d, cur.op, now, next, why);
    now = next;
    if (scatter || target.is_replicate()) return true;
  }
  if (target.is_shard()) {  // now Replicate on d: a slice, nested
    if (!nests || !cuts_within(now, in.o, d, target.tensor_dim)) return false;
    append_shard(next, in.o, d, target.tensor_dim);
  } else {
    next.at[d] = target;  // Partial made locally
    next = normalized(next, in.o);
  }
  const bool added = add_local(c, now, next);
  now = next;
  return added;
}

/// The per_dim recipe, PyTorch 2.15's greedy plan (_gen_transform_infos) in devmesh's steps.
/// Where the source shards, the dims from the last applied to the first, each toward its
/// target, or toward Replicate where the target's cuts before it differ from the current ones
/// (nested sharding that must be undone first); then every dim from the first to the last.
/// Each dim moves on its own (per_dim_step). Its bytes are PyTorch's without padding; with a
/// model, no candidate sending more bytes than it, the plan chosen by bytes and issue 20's plan
/// is chosen. False where a step cannot be made so (PyTorch plans explicit shard orders with a
/// graph search instead) or the steps do not end at the target.
template <int N, int C>
constexpr bool make_per_dim(redistribute_plan<N, C>& c, const plan_inputs<N>& in) {
  auto now = in.from;
  bool shards = false;
  for (int d = 0; d < in.D; ++d) shards = shards || now.at[d].is_shard();
  for (int j = N - 1; shards && j >= 0; --j) {
    const int d = in.o.dims[j];
    if (d >= in.D) continue;
    placement target = in.to.at[d];
    if (target.is_shard() && sharding_before(now, d, target.tensor_dim) != sharding_before(in.to, d, target.tensor_dim))
      target = placement::replicated();
    // an explicit order's cut that is not yet the last of its chain: after the dims cut after it
    if (now.at[d].is_shard() && !(now.at[d] == target) && !gathers_last(now, in, d)) {
      const auto chain = dims_in_shard_order(now, in.o, now.at[d].tensor_dim);
      for (int i = chain.count - 1; i >= 0 && chain.dims[i] != d; --i)
        if (!per_dim_step(c, now, in, chain.dims[i], placement::replicated())) return false;
    }
    if (!per_dim_step(c, now, in, d, target)) return false;
  }
  for (int j = 0; j < N; ++j)
    if (const int d = in.o.dims[j]; d < in.D && !per_dim_step(c, now, in, d, in.to.at[d])) return false;
  return now == in.to;
}

/// Candidate r made into c (empty). False if the recipe makes nothing.
template <int N, int C>
constexpr bool make_candidate(redistribute_plan<N, C>& c, const plan_inputs<N>& in, const plan_recipe& r) {
  if (r.kind == recipe_kind::hierarchical)
    return make_candidate(c, in, plan_recipe{r.base, r.k}) && make_hierarchical(c, in, r.inner);
  if (r.kind == recipe_kind::per_dim) return make_per_dim(c, in);
  return r.kind <= recipe_kind::rest_scatter ? make_basic(c, in, r) : make_split(c, in, r);
}

/// The recipes of hierarchical candidates over plan p's steps (each proper, non-empty part
/// of a group of two or more dims that all-reduces or reduce-scatters), as f(recipe).
template <int N, int C, class F>
constexpr void for_each_hierarchical(const redistribute_plan<N, C>& p, F&& f) {
  for (const auto& s : p) {
    if ((s.kind != step_kind::all_reduce && s.kind != step_kind::reduce_scatter) || (s.group & (s.group - 1)) == 0)
      continue;
    for (unsigned inner = (s.group - 1) & s.group; inner != 0; inner = (inner - 1) & s.group)
      f(plan_recipe{recipe_kind::hierarchical, -1, recipe_kind::first, inner});
  }
}

/// Every recipe that applies to `in`, in a fixed order, as f(recipe): `first` is the first
/// plan (its step kinds decide which recipes can differ from it).
template <int N, int C, class F>
constexpr void for_each_recipe(const plan_inputs<N>& in, const redistribute_plan<N, C>& first, F&& f) {
  unsigned kinds = 0;  // the step kinds the first plan has, a bit each
  for (const auto& s : first) kinds |= 1u << static_cast<int>(s.kind);
  const auto has = [&](step_kind k) { return ((kinds >> static_cast<int>(k)) & 1u) != 0; };
  const bool scatters = has(step_kind::reduce_scatter), all_reduces = has(step_kind::all_reduce);
  const bool exchanges = has(step_kind::all_gather) || has(step_kind::all_to_all);
  const bool filled = !(in.filled == in.from);
  f(plan_recipe{recipe_kind::first});
  if (scatters) f(plan_recipe{recipe_kind::all_reduce_only});
  if (filled) f(plan_recipe{recipe_kind::filled_first});
  const int cut = in.from.max_tensor_dim() > in.to.max_tensor_dim() ? in.from.max_tensor_dim() : in.to.max_tensor_dim();
  const int made = 1 + scatters + filled;  // at most 6 with rest_scatter (as before the other recipes)
  for (int k = 0; all_reduces && exchanges && k <= cut && made + k < 6; ++k) f(plan_recipe{recipe_kind::rest_scatter, k});
  const bool splits = reduced_dims(in) != 0 && replica_dims(in) != 0;
  const bool rereduce_kept = first.collectives() > 0 && kept_sums(in) != 0;
  const bool rereduce_shards = all_reduces && exchanges && partials_to_shards(in) != 0;
  for (int k = 0; k < in.tensor_dims; ++k) {
    if (splits) f(plan_recipe{recipe_kind::split, k}), f(plan_recipe{recipe_kind::split_aimed, k});
    if (rereduce_kept) f(plan_recipe{recipe_kind::rereduce_kept, k});
    if (rereduce_shards) f(plan_recipe{recipe_kind::rereduce_shards, k});
  }
  if (prices_time(in.model, in.D)) for_each_hierarchical(first, f);
  if (prices_time(in.model, in.D)) f(plan_recipe{recipe_kind::per_dim});
}

/// What choose_candidate shows every candidate it makes, with its role, where nobody looks
/// (bench/plan_ranking times each one: detail::plan_of's `seen`).
struct unseen {
  template <class Plan>
  constexpr void operator()(const Plan&, candidate_role) const {}
};

/// The candidate chosen for `in` (plan_model.hpp's rule, each candidate's cost price(plan)),
/// made into `plan`, which holds the first plan on entry (and keeps it where it is chosen).
/// Two passes: the recipes' scores, then the chosen one made again. seen(candidate, role) for
/// each one made that a plan can hold, in order.
template <int N, class Price, class Seen = unseen>
constexpr void choose_candidate(redistribute_plan<N>& plan, const plan_inputs<N>& in, const Price& price,
                                const Seen& seen = {}) {
  candidate_scores scores;
  for_each_recipe(in, plan, [&](const plan_recipe& r) {
    if (r.kind == recipe_kind::first) {
      seen(plan, candidate_role::issue_20);
      return scores.add(price(plan), plan.collectives(), candidate_role::issue_20);
    }
    draft_plan<N> c{};
    const bool made = make_candidate(c, in, r) && c.count <= redistribute_plan<N>::capacity;
    const auto role = r.kind == recipe_kind::per_dim            ? candidate_role::per_dim
                      : r.kind <= recipe_kind::rest_scatter ? candidate_role::issue_20
                                                            : candidate_role::other;
    if (made) seen(c, role);
    scores.add(made ? price(c) : candidate_price{}, made ? c.collectives() : -1, role);
  });
  // On uniform links the model weighs latency against bytes only, and its latency (one α a
  // collective, whatever the group's size) misranks plans there: of the 66 plans it changed on
  // this machine's default links, 48 measured over 10% slower than issue 20's choice
  // (docs/sharding.md, "Redistribute: the cost model"). So on uniform links the choice is issue
  // 20's, as before issue 42; the model chooses where the links differ (hierarchical plans).
  const bool uniform = prices_time(in.model, in.D) && !links_differ(in.model, in.D);
  const int best = uniform ? scores.uniform_choice() : scores.chosen(prices_time(in.model, in.D));
  if (best <= 0) return;
  int index = 0;
  draft_plan<N> c{};
  for_each_recipe(in, plan, [&](const plan_recipe& r) {
    if (index++ == best) make_candidate(c, in, r);
  });
  plan = redistribute_plan<N>{};
  for (int i = 0; i < c.count; ++i) plan.steps[i] = c.steps[i];
  plan.count = c.count;
}

}  // namespace devmesh::detail
