// devmesh/sharding/plan.hpp: how to move a tensor from one spec to another on the same mesh
// (DTensor's redistribute), planned from the two placement tables: a few steps, each one
// collective over the flattened group of one or several mesh dims, or a local step.
// constexpr and without heap: a pair of static specs has its plan at compile time.
//
//   constexpr auto plan = dm::plan_redistribute(from, to);   // plan.count, plan[i].kind, ...
//   auto timed = dm::plan_redistribute(from, to, model);     // chosen by modelled time (plan_model.hpp)
//
// The steps, in order, each only where needed (PyTorch 2.15's _gen_transform_infos takes one
// step per mesh dim instead, un-sharding from the last dim and re-sharding after):
//  1. slice          R -> S(t) on dims that are not reduced, where the slice keeps everything
//                    the target holds: less to reduce next (strided, _StridedShard, where the
//                    target cuts the dim within the blocks of a dim that step 2 scatters)
//  2. reduce_scatter over the Partial dims whose target is S(t): each rank keeps its part
//  3. all_reduce     over the other Partial dims that do not stay Partial: one collective over
//                    their flattened group (PyTorch: one per dim)
//  4. exchange       over the Shard dims whose blocks change: all_gather where the target is
//                    the gathered block, else all_to_all, each rank receiving exactly the
//                    part of its target block it does not hold (PyTorch: all_gather + slice);
//                    a dim made Partial(sum) after it keeps its cut, zeros around what
//                    arrives, where PyTorch gathers the whole blocks (and S -> P(sum) made
//                    locally just before a collective is fused into it: no zeros travel)
//  5. local          no communication: a slice (R -> S), or a Partial target (S -> P(sum)
//                    keeps its block among zeros; R -> P(sum) keeps the value on the rank at
//                    coordinate 0; P(avg|min|max) keep it everywhere)
// (plan_rules.hpp.) Where a Partial source or S -> P(sum) leaves a choice, several candidates
// are made (plan_candidates.hpp: replicas splitting a reduction, reductions again before an
// exchange, hierarchical reductions with a model) and one is chosen (plan_model.hpp): by bytes
// without a model, by modelled time with one. A plan has at most five steps.
// Plans cover uneven and even specs on the mesh's own dims; a spec with chunking::padded or a
// placement on an alias is refused (mesh_error; a compile error for static specs).
#pragma once
#include "../core/config.hpp"
#include "../core/diagnostics.hpp"
#include "placement.hpp"
#include "plan_candidates.hpp"
#include "plan_cost.hpp"
#include "plan_model.hpp"
#include "plan_rules.hpp"
#include "plan_step.hpp"
#include "spec.hpp"
#include "table.hpp"

namespace devmesh {
namespace detail {

/// The plan from table src to table dst (both on a mesh of D dims of sizes sizes[d], N with
/// aliases): the first plan (plan_rules.hpp's steps), or, where the source has a Partial dim or
/// the target makes one Partial(sum) from a Shard, the candidate plan_candidates.hpp chooses,
/// each priced by price(candidate) (bytes without a model's links, modelled time with them). A pair without either plans once,
/// into the plan returned (a plan is most of a kilobyte: the dynamic planner's time goes to
/// writing plans).
template <int N, class Price, class Seen = unseen>
constexpr redistribute_plan<N> plan_tables(const placement_table<N>& src, const placement_table<N>& dst,
                                           const application_order<N>& o, const int* sizes, int D,
                                           const plan_model<N>* model, const Price& price, const Seen& seen = {}) {
  const auto from = normalized(src, o), to = normalized(dst, o);
  const auto filled = zero_filled(from, to, o);
  redistribute_plan<N> plan{};  // one named result, returned in place
  plan_exchange(plan, plan_reductions(plan, from, to, o, sizes, D, true), to, o, D);
  fuse_zero_fills(plan);
  bool partial = false;
  for (int d = 0; d < D; ++d) partial = partial || from.at[d].is_partial();
  // the tensor dims a candidate may cut: those the specs name, or all of them where the model knows them
  const int named = (from.max_tensor_dim() > to.max_tensor_dim() ? from.max_tensor_dim() : to.max_tensor_dim()) + 1;
  const int dims = model && model->tensor_rank >= 0 ? model->tensor_rank : named;
  const plan_inputs<N> in{from, to, filled, o, sizes, D, dims, model};
  if (!partial && filled == from && !links_differ(model, D)) {
    seen(plan, candidate_role::issue_20);
    return plan;
  }
  choose_candidate(plan, in, price, seen);
  return plan;
}

/// What plan_redistribute refuses in a spec's table (nullptr: nothing), and the dim concerned.
template <class Mesh, int N>
constexpr const char* unplannable(const placement_table<N>& t, int& dim) {
  if (t.rule == chunking::padded) return "chunking::padded specs are not planned (uneven or even only)";
  for (int d = Mesh::ndim; d < N; ++d)
    if (!t.at[d].is_replicate()) return dim = d, "plans place on the mesh's own dims, not on the alias";
  return nullptr;
}

/// The plan between two specs (plan_redistribute's body), chosen by `model` where there is one;
/// seen(candidate, role) for every candidate considered (plan_candidates.hpp).
template <class Mesh, class S1, class S2, class Seen = unseen>
constexpr redistribute_plan<Mesh::ndim_with_aliases> plan_of(
    const basic_sharding<Mesh, S1>& from, const basic_sharding<Mesh, S2>& to,
    const plan_model<Mesh::ndim_with_aliases>* model = nullptr, const Seen& seen = {}) {
  constexpr int N = Mesh::ndim_with_aliases, D = Mesh::ndim;
  if constexpr (!Mesh::is_static)
    if (!from.mesh().same_modes(to.mesh()) && !(from.mesh() == to.mesh()))  // the first: no coalescing
      fail_plan("the two specs are on meshes of different sizes");
  // even cuts as uneven does (it only adds a check, which the specs' queries run): one rule
  const auto plannable = [](placement_table<N> t) {
    int dim = -1;
    if (const char* why = unplannable<Mesh>(t, dim)) fail_plan(why, dim < 0 ? std::string_view() : Mesh::name(dim));
    t.rule = chunking::uneven;
    return t;
  };
  const auto a = plannable(from.table()), b = plannable(to.table());
  constexpr auto order = basic_sharding<Mesh, S1>::application_order;
  int sizes[D > 0 ? D : 1]{};
  for (int d = 0; d < D; ++d) sizes[d] = from.mesh().size(d);
  // A dim of size 1 holds the whole tensor whatever it says (a Shard cuts one block, a Partial
  // reduces one value): planned, and printed, as replicated (the same blocks and values), so
  // no step runs a collective over one rank.
  bool size_one = false;
  for (int d = 0; d < D; ++d) size_one = size_one || sizes[d] == 1;
  const auto as_replicated = [&](placement_table<N> t) {
    for (int d = 0; d < D && size_one; ++d)
      if (sizes[d] == 1) t.at[d] = placement::replicated();
    return t;
  };
  const auto rough = [&](const auto& p) { return cost_of_candidate(p, sizes, D, model); };
  if (!model) return plan_tables(as_replicated(a), as_replicated(b), order, sizes, D, model, rough, seen);
  // Priced by exact counts where the model knows the tensor and the mesh is small (O(ranks)
  // per step), else by the even-block estimate.
  redistribute_plan<N> plan{};
  const bool exact = model && from.mesh().size() <= 64 && with_model_extents(*model, [&](const auto& ext) {
    const auto price = [&](const auto& p) { return exact_cost(from.mesh(), p, ext, *model); };
    plan = plan_tables(as_replicated(a), as_replicated(b), order, sizes, D, model, price, seen);
  });
  if (exact) return plan;
  return plan_tables(as_replicated(a), as_replicated(b), order, sizes, D, model, rough, seen);
}

/// True for a pair of static specs on a static mesh that plan_redistribute plans: its plan
/// is then a constant the compiler computes once (static_plan).
template <class Mesh, class S1, class S2>
constexpr bool plannable_statically() {
  if constexpr (Mesh::is_static && basic_sharding<Mesh, S1>::static_placements &&
                basic_sharding<Mesh, S2>::static_placements) {
    int dim = -1;
    return !unplannable<Mesh>(basic_sharding<Mesh, S1>{}.table(), dim) &&
           !unplannable<Mesh>(basic_sharding<Mesh, S2>{}.table(), dim);
  } else {
    return false;
  }
}
template <class Mesh, class S1, class S2>
inline constexpr auto static_plan = plan_of(basic_sharding<Mesh, S1>{}, basic_sharding<Mesh, S2>{});

/// The plan, read in place for a static pair (a reference to static_plan: nothing computed or
/// copied at run time), planned for a dynamic one (a value): what redistribute binds to.
template <class Mesh, class S1, class S2>
constexpr decltype(auto) plan_in_place(const basic_sharding<Mesh, S1>& from, const basic_sharding<Mesh, S2>& to) {
  if constexpr (plannable_statically<Mesh, S1, S2>())
    return (static_plan<Mesh, S1, S2>);
  else
    return plan_of(from, to);
}

}  // namespace detail

/// The plan that moves a tensor from spec `from` to spec `to` (same mesh type; same mesh
/// values, checked). O(dims^2), no heap; for static specs on a static mesh, a constant that
/// the compiler computes once (a call reads it, even where the call is not constexpr).
template <class Mesh, class S1, class S2>
constexpr redistribute_plan<Mesh::ndim_with_aliases> plan_redistribute(const basic_sharding<Mesh, S1>& from,
                                                                        const basic_sharding<Mesh, S2>& to) {
  static_assert(Mesh::ndim_with_aliases <= 32, "devmesh: redistribute: a plan's groups are bit sets of at most 32 dims");
  return detail::plan_in_place(from, to);  // a copy of the static plan, or the dynamic one
}

/// The plan that moves a tensor from `from` to `to` chosen by modelled time (plan_model.hpp):
/// the links of the mesh's dims, the tensor's bytes and rank. Where the source has no Partial
/// dim and the target makes none Partial(sum) from a Shard, the same plan as without a model;
/// otherwise planned (constexpr where the model is a constant), O(candidates x dims^2), no heap.
template <class Mesh, class S1, class S2>
constexpr redistribute_plan<Mesh::ndim_with_aliases> plan_redistribute(
    const basic_sharding<Mesh, S1>& from, const basic_sharding<Mesh, S2>& to,
    const plan_model<Mesh::ndim_with_aliases>& model) {
  static_assert(Mesh::ndim_with_aliases <= 32, "devmesh: redistribute: a plan's groups are bit sets of at most 32 dims");
  return detail::plan_of(from, to, &model);
}

}  // namespace devmesh
