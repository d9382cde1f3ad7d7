// devmesh/sharding/plan_cost.hpp: what a plan (plan.hpp) costs one rank, per step and in
// total: the elements it holds before and after, and the bytes it sends and receives. The
// model is the one tests/sharding/data/pytorch_2.15_redistribute.json measures PyTorch with
// (ring algorithms; N the rank's elements before the step, n the group's size):
//   all_reduce      sends 2 (n - 1) / n N
//   reduce_scatter  sends N minus the part it keeps (zero-filling, plan.hpp's fuse_zero_fills:
//                   the part of its new block that it holds)
//   all_gather      sends every block of the group but the next rank's (a ring: (n - 1) N
//                   when blocks are even)
//   all_to_all      sends exactly the elements the other ranks of the group lack and it holds
//   local           sends nothing
// O(group size x tensor rank) per step for Shard specs (blocks are intervals), more where a
// shard order makes blocks strided (their overlaps are counted element by element). Every count
// is checked arithmetic (core/checked.hpp): a cost that does not fit in std::int64_t is a
// mesh_error naming it, never a wrapped (negative) number.
#pragma once
#include <array>

#include "../core/checked.hpp"
#include "../core/config.hpp"
#include "dynamic_spec.hpp"
#include "extents.hpp"
#include "index_map.hpp"
#include "plan_model.hpp"
#include "plan_step.hpp"

namespace devmesh {

/// One step's cost to one rank.
struct step_cost {
  tensor_index elements_before = 0;  ///< elements the rank holds before the step
  tensor_index elements_after = 0;   ///< and after it
  tensor_index bytes_sent = 0;       ///< bytes it sends (the model above)
  tensor_index bytes_received = 0;   ///< bytes it receives (all_reduce: as sent)
  int group_size = 1;                ///< ranks in the step's group (1: local)
};

namespace detail {

/// The spec a plan's table describes, on mesh m.
template <class Mesh, int N>
constexpr dynamic_sharding<Mesh> spec_of_table(const Mesh& m, const placement_table<N>& t) {
  return dynamic_sharding<Mesh>(m, t, planner_key{});
}

/// Calls f(i, q) for every position q of the group over the dims in `group` that holds
/// `position`, i its index in the group (row-major over the dims in mesh order).
template <class Mesh, class F>
constexpr void for_each_in_group(const Mesh& m, unsigned group, int position, F&& f) {
  constexpr int D = Mesh::ndim;
  std::array<int, D> c{};
  int n = 1;
  for (int d = 0; d < D; ++d) {
    c[d] = m.coordinate_unchecked(position, d);
    if ((group >> d) & 1u) n *= m.size(d);
  }
  for (int i = 0; i < n; ++i) {
    int rest = i;
    for (int d = D - 1; d >= 0; --d)
      if ((group >> d) & 1u) c[d] = rest % m.size(d), rest /= m.size(d);
    f(i, m.rank_at(c, position));
  }
}

/// The position after `position` in its group over `group` (a ring's next), wrapping around.
template <class Mesh>
constexpr int next_in_group(const Mesh& m, unsigned group, int position) {
  int me = -1, first = position, next = -1;
  for_each_in_group(m, group, position, [&](int i, int q) {
    if (i == 0) first = q;
    if (me >= 0 && next < 0) next = q;
    if (q == position) me = i;
  });
  return next < 0 ? first : next;
}

/// Number of elements of the tensor that both a's block at position p and b's at position q hold.
template <class SpecA, class SpecB, class E>
constexpr tensor_index common_elements(const SpecA& a, int p, const SpecB& b, int q, const E& ext) {
  tensor_index n = 1;
  for (int t = 0; t < E::rank_value && n > 0; ++t)
    n = checked_mul(n, overlap(a.held(ext, p, t), b.held(ext, q, t)), "a plan's cost (elements two blocks share)");
  return n;
}

/// A ring all_reduce's bytes: 2 (n - 1) / n of the N elements of `element_bytes` bytes, rounded
/// down, exact whenever the result fits (2 (n - 1) N bytes need not: the division goes first).
constexpr tensor_index ring_all_reduce_bytes(tensor_index elements, tensor_index element_bytes, tensor_index n) {
  const tensor_index bytes = checked_mul(elements, element_bytes, "a plan's cost (bytes an all_reduce holds)");
  const tensor_index k = 2 * (n - 1);  // n is a group's size: an int
  return checked_add(checked_mul(k, bytes / n, "a plan's cost (bytes an all_reduce sends)"), k * (bytes % n) / n,
                     "a plan's cost (bytes an all_reduce sends)");
}

}  // namespace detail

/// The cost of step s to `position`, for a tensor of extents ext and elements of
/// element_bytes bytes, on mesh m (the plan's mesh).
template <class Mesh, int N, class E>
constexpr step_cost cost_of(const Mesh& m, const plan_step<N>& s, const E& ext, int position,
                            tensor_index element_bytes) {
  const auto before = detail::spec_of_table(m, s.before), after = detail::spec_of_table(m, s.after);
  step_cost c{before.local_size(ext, position), after.local_size(ext, position), 0, 0, 1};
  for (int d = 0; d < Mesh::ndim; ++d)
    if (s.on(d)) c.group_size *= m.size(d);
  const tensor_index n = c.group_size;
  tensor_index sent = 0, received = 0;  // elements
  switch (s.kind) {
    case step_kind::local: break;
    case step_kind::all_reduce:
      c.bytes_sent = c.bytes_received = detail::ring_all_reduce_bytes(c.elements_before, element_bytes, n);
      return c;
    case step_kind::reduce_scatter:  // all but this rank's part (zero-filling: of the new block, what the old holds)
      sent = received = c.elements_before - detail::common_elements(before, position, after, position, ext);
      break;
    case step_kind::all_gather:  // a ring: every block but the next rank's passes through
      detail::for_each_in_group(m, s.group, position, [&](int, int q) {
        sent = detail::checked_add(sent, before.local_size(ext, q), "a plan's cost (elements an all_gather sends)");
      });
      sent -= before.local_size(ext, detail::next_in_group(m, s.group, position));
      received = c.elements_after - c.elements_before;
      break;
    case step_kind::all_to_all:
      detail::for_each_in_group(m, s.group, position, [&](int, int q) {
        if (q == position) return;
        sent = detail::checked_add(sent, detail::common_elements(before, position, after, q, ext),
                                   "a plan's cost (elements an all_to_all sends)");
        received = detail::checked_add(received, detail::common_elements(before, q, after, position, ext),
                                       "a plan's cost (elements an all_to_all receives)");
      });
      break;
  }
  c.bytes_sent = detail::checked_mul(sent, element_bytes, "a plan's cost (bytes sent)");
  c.bytes_received = detail::checked_mul(received, element_bytes, "a plan's cost (bytes received)");
  return c;
}

/// The bytes `position` sends over the whole plan.
template <class Mesh, int N, int C, class E>
constexpr tensor_index bytes_sent(const Mesh& m, const redistribute_plan<N, C>& p, const E& ext, int position,
                                  tensor_index element_bytes) {
  tensor_index total = 0;
  for (const auto& s : p)
    total = detail::checked_add(total, cost_of(m, s, ext, position, element_bytes).bytes_sent,
                                "a plan's cost (bytes sent over the plan)");
  return total;
}

/// The modelled time of plan p in microseconds (plan_model.hpp's α-β model, with exact
/// counts): each collective step, the latency of its group's slowest link plus the most bytes
/// any rank sends in it over that link's bandwidth; a step waits for its slowest rank. For a
/// tensor of extents ext with elements of element_bytes bytes, on mesh m (the plan's);
/// model.links gives the links, its tensor fields are not read. O(steps x ranks x cost_of).
template <class Mesh, int N, int C, class E>
constexpr double modelled_time_us(const Mesh& m, const redistribute_plan<N, C>& p, const E& ext,
                                  tensor_index element_bytes, const plan_model<N>& model) {
  double total = 0;
  for (const auto& s : p) {
    if (!s.communicates()) continue;
    tensor_index most = 0;  // over the (sub)mesh holding position 0: every block alike
    detail::for_each_in_group(m, (1u << Mesh::ndim) - 1u, 0, [&](int, int r) {
      const tensor_index b = cost_of(m, s, ext, r, element_bytes).bytes_sent;
      most = b > most ? b : most;
    });
    total += model.group(s.group).time_us(static_cast<double>(most));
  }
  return total;
}

namespace detail {

/// The exact price of plan p for the model's tensor (extents ext) on mesh m: the bytes a rank
/// sends, on average over the ranks, and the cost, modelled_time_us where the model prices
/// time (else the bytes). What plan_redistribute(from, to, model) compares candidates by where
/// it knows the extents.
template <class Mesh, int N, int C, class E>
constexpr candidate_price exact_cost(const Mesh& m, const redistribute_plan<N, C>& p, const E& ext,
                                     const plan_model<N>& model) {
  double total = 0;
  int ranks = 0;
  for_each_in_group(m, (1u << Mesh::ndim) - 1u, 0, [&](int, int r) {
    total += static_cast<double>(bytes_sent(m, p, ext, r, model.element_bytes)), ++ranks;
  });
  const double bytes = total / ranks;
  return {prices_time(&model, Mesh::ndim) ? modelled_time_us(m, p, ext, model.element_bytes, model) : bytes, bytes};
}

/// f(ext), the model's extents as dextents of its rank; false (f not called) where the model
/// does not know them (no element size, a rank of 0 or over plan_model::max_exact_rank).
template <int N, class F>
constexpr bool with_model_extents(const plan_model<N>& model, F&& f) {
  if (model.element_bytes <= 0) return false;
  const auto* s = model.shape;
  switch (model.tensor_rank) {
    case 1: f(dextents<1>(s[0])); return true;
    case 2: f(dextents<2>(s[0], s[1])); return true;
    case 3: f(dextents<3>(s[0], s[1], s[2])); return true;
    case 4: f(dextents<4>(s[0], s[1], s[2], s[3])); return true;
    default: return false;
  }
}

}  // namespace detail
}  // namespace devmesh
