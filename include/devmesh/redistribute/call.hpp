// devmesh/redistribute/call.hpp: a redistribute call as values, what the typed entry points
// (redistribute.hpp, distribute.hpp) hand the executor compiled once per backend
// (executor.hpp): the mesh as its layout's values and the application order of its dims, the
// specs and the plan's steps as table views (sharding/table.hpp), the extents, the element
// type, the buffers as bytes. A mesh type, a spec type or an element type only gathers its
// values here (mesh_data_of, plan_data); nothing below is instantiated per type.
#pragma once
#include <cstddef>
#include <span>

#include "../core/print.hpp"
#include "../runtime/element_type.hpp"
#include "../sharding/extents.hpp"
#include "../sharding/plan.hpp"
#include "../sharding/table.hpp"

namespace devmesh::detail {

/// A mesh as the executor reads it: its layout's values (the core's layout_values: names and
/// every dim's modes, the ndim mesh dims then the aliases), its root's size, the order in
/// which its dims apply their placements. Valid while what it points to lives.
struct mesh_data {
  layout_values layout{};
  int root_size = 0;
  order_view order;

  /// Number of dims, aliases included.
  int dims() const { return layout.ndims; }
  /// Dim d's size: the product of its modes' shapes.
  int size(int d) const {
    int n = 1;
    for (int m = layout.first[d]; m < layout.first[d + 1]; ++m) n *= layout.shape[m];
    return n;
  }
  /// Position p's coordinate along dim d (the core's coordinate_unchecked).
  int coordinate(int p, int d) const {
    int c = 0;
    for (int m = layout.first[d]; m < layout.first[d + 1]; ++m)
      c = c * layout.shape[m] + (p / layout.stride[m]) % layout.shape[m];
    return c;
  }
};

/// The application order of Layout's dims (sharding/table.hpp), computed once.
template <class Layout>
inline constexpr auto application_order_of = order_of_dims(Layout::layout);

/// A mesh of type Layout as mesh_data: its run-time values, held here (data() points into this
/// object: keep it while the data is read).
template <class Layout>
class mesh_data_of {
  static constexpr auto L = Layout::layout;
  int shape_[L.nmodes > 0 ? L.nmodes : 1]{}, stride_[L.nmodes > 0 ? L.nmodes : 1]{};
  int root_size_;

 public:
  explicit mesh_data_of(const Layout& m) : root_size_(m.root_size()) {
    for (int i = 0; i < L.nmodes; ++i) shape_[i] = m.mode_shape(i), stride_[i] = m.mode_stride(i);
  }
  mesh_data_of(const mesh_data_of&) = delete;
  mesh_data_of& operator=(const mesh_data_of&) = delete;
  mesh_data data() const {
    return {layout_values{Layout::names_type::views, L.first, shape_, stride_, L.nprimary, L.ndims}, root_size_,
            application_order_of<Layout>};
  }
};

/// One step of a plan (sharding/plan.hpp's plan_step) as the executor reads it; zero_filled is
/// the planner's zero_filled_dims of the step.
struct step_data {
  step_kind kind = step_kind::local;
  unsigned group = 0;
  reduction op = reduction::sum;
  unsigned zero_filled = 0;
  table_view before, after;
};

/// A plan as the executor reads it: its steps, viewing the plan's tables (keep the plan).
struct plan_data {
  step_data steps[redistribute_plan<1>::capacity]{};
  int count = 0;

  plan_data() = default;
  template <int N>
  explicit plan_data(const redistribute_plan<N>& p) : count(p.count) {
    static_assert(N <= max_view_dims, "devmesh: redistribute: a plan's groups are bit sets of at most 32 dims");
    for (int i = 0; i < p.count; ++i)
      steps[i] = {p[i].kind, p[i].group, p[i].op, zero_filled_dims(p[i]), p[i].before, p[i].after};
  }
};

/// One call of redistribute (or of distribute, full_tensor) on this rank: the mesh, the specs
/// as given (for the messages and the blocks' sizes), the plan between them, the tensor's
/// extents, the element type, this rank's blocks (n_in and n_out elements).
struct call_data {
  mesh_data mesh;
  table_view from, to;
  plan_data plan;
  std::span<const tensor_index> extents;
  element_type type;
  const void* in = nullptr;
  std::size_t n_in = 0;
  void* out = nullptr;
  std::size_t n_out = 0;
  /// False if a spec is on a mesh of other values than the device mesh's (a dynamic layout).
  bool specs_on_mesh = true;
  /// False for a call made with dm::no_call_check: no agreement unless the check mode asks.
  bool agree = true;
};

}  // namespace devmesh::detail
