// devmesh/sharding/plan_model.hpp: what the planner (plan.hpp) compares candidate plans by.
//
// Without links (plan_redistribute(from, to): static specs, no device mesh; or a plan_model
// that only gives the tensor's rank), the bytes one rank sends as a fraction of the tensor,
// every block taken as even (rough_cost).
//
// With a plan_model's links (plan_redistribute(from, to, model): per mesh dim, the α-β cost of
// its links; the tensor's bytes and rank), the modelled time: each collective step costs its
// group's latency plus the bytes one rank sends over its group's bandwidth, a group over several
// dims priced by its slowest link (core/link_cost.hpp); local steps cost nothing.
//
// The least cost wins; among the candidates within 5% of it (a near-tie), the fewest collectives.
//
//   dm::plan_model<2> model{{dm::link_cost::network(), dm::link_cost::nvlink()}, 8.0 * 4096 * 4096, 2};
#pragma once
#include "../core/config.hpp"
#include "../core/link_cost.hpp"
#include "extents.hpp"
#include "plan_rules.hpp"
#include "plan_step.hpp"

namespace devmesh {

/// What the planner prices plans with: the links of every mesh dim of a mesh of N dims (by
/// index; aliases unused), and the tensor moved: its bytes (elements x element size) and its
/// number of dims (candidates may then cut a tensor dim that neither spec names). Without
/// links (any unknown), plans are chosen by bytes as without a model, the rank still used.
template <int N>
struct plan_model {
  /// The most tensor dims whose extents a model keeps (exact counts: plan_cost.hpp).
  static constexpr int max_exact_rank = 4;
  link_cost links[N > 0 ? N : 1]{};  ///< links[d]: the cost of dim d's groups
  double tensor_bytes = 0;           ///< the whole tensor's bytes
  int tensor_rank = -1;              ///< its dims (-1: unknown)
  /// Its extents and element size where known (element_bytes > 0; set by tensor()): the
  /// candidates are then priced by exact counts (plan_cost.hpp) on meshes of up to 64 ranks.
  tensor_index shape[max_exact_rank]{};
  tensor_index element_bytes = 0;

  /// Sets the tensor: extents ext (any rank; exact counts up to max_exact_rank dims), elements
  /// of element_bytes bytes.
  template <class E>
  constexpr plan_model& tensor(const E& ext, tensor_index bytes_per_element) {
    tensor_rank = E::rank_value;
    tensor_bytes = static_cast<double>(ext.size()) * static_cast<double>(bytes_per_element);
    element_bytes = E::rank_value <= max_exact_rank ? bytes_per_element : 0;
    for (int t = 0; t < E::rank_value && t < max_exact_rank; ++t) shape[t] = ext.extent(t);
    return *this;
  }

  /// The cost of a group over the dims in `bits`: its slowest link.
  DEVMESH_HOST_DEVICE constexpr link_cost group(unsigned bits) const {
    link_cost c{};
    bool first = true;
    for (int d = 0; d < N; ++d)
      if ((bits >> d) & 1u) c = first ? links[d] : slowest(c, links[d]), first = false;
    return c;
  }
  /// Equal links and tensors.
  friend constexpr bool operator==(const plan_model&, const plan_model&) = default;
};

namespace detail {

/// The fraction of the tensor one rank holds under table t, every block even.
template <int N>
constexpr double held_fraction(const placement_table<N>& t, const int* sizes, int D) {
  double f = 1;
  for (int d = 0; d < D; ++d)
    if (t.at[d].is_shard()) f /= sizes[d];
  return f;
}

/// The bytes one rank sends in step s, as a fraction of the tensor, every block even (an
/// all_to_all counted as receiving its whole new block: an upper bound). sizes[d] is dim d's size.
template <int N>
constexpr double sent_fraction(const plan_step<N>& s, const int* sizes, int D) {
  double n = 1;
  for (int d = 0; d < D; ++d)
    if (s.on(d)) n *= sizes[d];
  const double before = held_fraction(s.before, sizes, D), after = held_fraction(s.after, sizes, D);
  switch (s.kind) {
    case step_kind::all_reduce: return 2 * (n - 1) / n * before;
    // zero-filling: the block's part in each rank's new block, (n - 1) / n of it sent
    case step_kind::reduce_scatter: return zero_filled_dims(s) ? before * (n - 1) / n : before - after;
    case step_kind::all_gather: return (n - 1) * before;
    case step_kind::all_to_all: return after;
    case step_kind::local: break;
  }
  return 0;
}

/// A rough cost of a plan, to choose between candidates without a model: the bytes one rank
/// sends as a fraction of the tensor (sent_fraction, summed).
template <int N, int C>
constexpr double rough_cost(const redistribute_plan<N, C>& p, const int* sizes, int D) {
  double c = 0;
  for (const auto& s : p) c += sent_fraction(s, sizes, D);
  return c;
}

/// The modelled time of a plan in microseconds: each collective its group's latency plus its
/// bytes (sent_fraction of the tensor) over its group's bandwidth.
template <int N, int C>
constexpr double modelled_us(const redistribute_plan<N, C>& p, const int* sizes, int D, const plan_model<N>& m) {
  double t = 0;
  for (const auto& s : p)
    if (s.communicates()) t += m.group(s.group).time_us(sent_fraction(s, sizes, D) * m.tensor_bytes);
  return t;
}

/// True when the model prices time: every mesh dim's link is known (a model without links
/// only says the tensor's rank, and plans are then chosen by bytes).
template <int N>
constexpr bool prices_time(const plan_model<N>* model, int D) {
  if (!model) return false;
  for (int d = 0; d < D; ++d)
    if (!model->links[d].known()) return false;
  return true;
}

/// True where the model prices time and two of the mesh's D dims have different links: there
/// a collective over a flattened group waits for the slower links, and plans whose pair has
/// no Partial also have candidates (PyTorch's per-dim plan).
template <int N>
constexpr bool links_differ(const plan_model<N>* model, int D) {
  if constexpr (N < 2) return false;  // one dim: nothing to differ (and no links[1] to read)
  if (!prices_time(model, D)) return false;
  for (int d = 1; d < D; ++d)
    if (!(model->links[d] == model->links[0])) return true;
  return false;
}

/// What a candidate costs: the cost it is chosen by (bytes without links, modelled time with
/// them) and the bytes a rank sends (in any unit the candidates share: a fraction of the tensor,
/// or bytes).
struct candidate_price {
  double cost = 0;
  double bytes = 0;
};

/// A candidate's price by the even-block estimate: modelled_us where the model prices time,
/// else rough_cost; its bytes rough_cost.
template <int N, int C>
constexpr candidate_price cost_of_candidate(const redistribute_plan<N, C>& p, const int* sizes, int D,
                                            const plan_model<N>* model) {
  const double bytes = rough_cost(p, sizes, D);
  return {prices_time(model, D) ? modelled_us(p, sizes, D, *model) : bytes, bytes};
}

/// A near-tie: candidates whose cost is within this factor of the least are chosen among by
/// their number of collectives.
inline constexpr double near_tie = 1.05;

/// What a candidate is to the choice with a model: issue 20's recipes (its choice bounds the
/// bytes), PyTorch's per-dim plan (bounds them too), or another.
enum class candidate_role : int { other, issue_20, per_dim };

/// The scores of the candidates made so far, in order, and the one chosen (chosen()). A
/// candidate that is not eligible (more steps than a plan holds) is never chosen.
struct candidate_scores {
  static constexpr int capacity = 64;
  candidate_price price[capacity]{};
  int collectives[capacity]{};  // -1: not eligible
  candidate_role role[capacity]{};
  int count = 0;

  constexpr void add(candidate_price p, int n, candidate_role r = candidate_role::other) {
    if (count < capacity) price[count] = p, collectives[count] = n, role[count] = r;
    ++count;
  }
  /// By bytes (time false): among the candidates within near_tie of the fewest bytes, the one
  /// with the fewest collectives, then the cheaper, then the first. By time: the same rule on
  /// modelled time (an exact tie going to the fewer bytes in all, a rank's mean), among the
  /// candidates that send no more bytes than the one chosen by bytes,
  /// than issue 20's choice (its recipes, within 1.25x of the fewest bytes, the fewest
  /// collectives) or than PyTorch's per-dim plan, and take no longer than that per-dim plan:
  /// a plan chosen by time never sends more bytes than one of those, nor is slower than
  /// PyTorch's way. -1 if none is eligible.
  constexpr int chosen(bool time) const {
    const int by_bytes = least_within(false, 0, 0, near_tie, false);
    if (!time || by_bytes < 0) return by_bytes;
    double cap = price[by_bytes].bytes, slowest = 0;
    if (const int old = issue_20_choice(); old >= 0 && price[old].bytes > cap) cap = price[old].bytes;
    for (int i = 0; i < count && i < capacity; ++i)
      if (role[i] == candidate_role::per_dim && collectives[i] >= 0) {
        cap = price[i].bytes > cap ? price[i].bytes : cap;
        slowest = price[i].cost;  // a near-tie never chooses a plan slower than PyTorch's
      }
    return least_within(true, cap * (1 + 1e-9), slowest * (1 + 1e-9), near_tie, false);
  }
  /// What devmesh chose before issue 42 (issue 20's rule): among its recipes, within 1.25x of
  /// the fewest bytes, the fewest collectives. -1 if none.
  constexpr int issue_20_choice() const { return least_within(false, 0, 0, 1.25, true); }
  /// The choice on uniform links (a model whose dims all cost alike): issue 20's, else by bytes.
  constexpr int uniform_choice() const {
    const int old = issue_20_choice();
    return old >= 0 ? old : chosen(false);
  }

 private:
  constexpr double cost_of(int i, bool time) const { return time ? price[i].cost : price[i].bytes; }
  constexpr bool eligible(int i, double cap, double slowest, bool issue_20) const {
    return collectives[i] >= 0 && (cap <= 0 || price[i].bytes <= cap) && (slowest <= 0 || price[i].cost <= slowest) &&
           (!issue_20 || role[i] == candidate_role::issue_20);
  }
  /// Among the eligible candidates (bytes at most cap, cost at most slowest; 0: no bound) within
  /// `window` of the least cost, the fewest collectives, then the cheaper, then the fewer bytes.
  constexpr int least_within(bool time, double cap, double slowest, double window, bool issue_20) const {
    double least = -1;
    for (int i = 0; i < count && i < capacity; ++i)
      if (eligible(i, cap, slowest, issue_20)) least = least < 0 || cost_of(i, time) < least ? cost_of(i, time) : least;
    int best = -1;
    for (int i = 0; i < count && i < capacity; ++i) {
      if (!eligible(i, cap, slowest, issue_20) || cost_of(i, time) > window * least) continue;
      const int n = collectives[i];
      const bool cheaper = cost_of(i, time) < cost_of(best < 0 ? i : best, time);
      const bool as_cheap = best >= 0 && cost_of(i, time) == cost_of(best, time);
      // an exact tie in time (a step's slowest rank alike) goes to the fewer bytes in all
      if (best < 0 || n < collectives[best] ||
          (n == collectives[best] && (cheaper || (as_cheap && price[i].bytes < price[best].bytes))))
        best = i;
    }
    return best;
  }
};

}  // namespace detail
}  // namespace devmesh
