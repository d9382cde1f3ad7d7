// devmesh/sharding/plan_step.hpp: what a redistribute plan is (plan.hpp makes one): its steps,
// each a collective over the flattened group of some mesh dims or a local step, with the
// specs before and after it as placement tables.
#pragma once
#include "../core/config.hpp"
#include "placement.hpp"
#include "table.hpp"

namespace devmesh {

/// What one step of a plan does.
enum class step_kind : int { local, reduce_scatter, all_reduce, all_gather, all_to_all };

/// The step's name as printed: "local", "reduce_scatter", ...
constexpr const char* step_name(step_kind k) {
  switch (k) {
    case step_kind::reduce_scatter: return "reduce_scatter";
    case step_kind::all_reduce: return "all_reduce";
    case step_kind::all_gather: return "all_gather";
    case step_kind::all_to_all: return "all_to_all";
    case step_kind::local: break;
  }
  return "local";
}

/// One step: its kind, the mesh dims whose flattened group runs it (a bit per dim index;
/// none for a local step), the reduction (reduce steps), and the spec before and after it.
template <int N>
struct plan_step {
  step_kind kind = step_kind::local;
  unsigned group = 0;
  reduction op = reduction::sum;
  placement_table<N> before{};
  placement_table<N> after{};
  /// Why the planner chose this step (a sentence, for printing).
  const char* why = "";
  /// True if mesh dim d is in the step's group.
  DEVMESH_HOST_DEVICE constexpr bool on(int d) const { return (group >> d) & 1u; }
  /// True for a collective (every kind but local).
  DEVMESH_HOST_DEVICE constexpr bool communicates() const { return kind != step_kind::local; }
};

/// The steps from one spec to another, in order (at most five). Capacity is for the planner's
/// drafts (plan_candidates.hpp: a candidate may need more steps, and is then never chosen).
template <int N, int Capacity = 5>
struct redistribute_plan {
  /// The most steps a plan has.
  static constexpr int capacity = Capacity;
  /// The steps, count of them.
  plan_step<N> steps[capacity]{};
  /// Number of steps (0: nothing to do).
  int count = 0;

  /// Step i.
  DEVMESH_HOST_DEVICE constexpr const plan_step<N>& operator[](int i) const { return steps[i]; }
  /// The first step (for range-for).
  DEVMESH_HOST_DEVICE constexpr const plan_step<N>* begin() const { return steps; }
  /// Past the last step.
  DEVMESH_HOST_DEVICE constexpr const plan_step<N>* end() const { return steps + count; }
  /// Number of collectives the plan issues (its steps but the local ones).
  DEVMESH_HOST_DEVICE constexpr int collectives() const {
    int n = 0;
    for (int i = 0; i < count; ++i) n += steps[i].communicates();
    return n;
  }
};

}  // namespace devmesh
