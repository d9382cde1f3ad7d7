// devmesh/sharding/dynamic_spec.hpp: a spec built at run time (from text, from a config):
// dm::dynamic_sharding<Mesh>, placements set by dim name or index. It checks what a static
// spec checks at compile time and throws mesh_error naming the dims; its queries are a static
// spec's (spec.hpp), reading the stored table.
//
//   dm::dynamic_sharding<mesh2d> s(mesh);
//   s.place("dp", dm::placement::sharded(0)).place("tp", dm::placement::partial_of(dm::reduction::sum));
//   s.order(1, {"tp", "dp"});   // tensor dim 1: tp first, then dp (PyTorch's _StridedShard)
#pragma once
#include <initializer_list>
#include <span>
#include <string_view>

#include "../core/diagnostics.hpp"
#include "diagnostics.hpp"
#include "spec.hpp"
#include "table.hpp"

namespace devmesh {

namespace detail {
/// The key to dynamic_sharding's unchecked constructor from a table.
struct planner_key {
  explicit constexpr planner_key() = default;
};
/// The mesh's dims and aliases as text, for messages: "(dims: dp, tp; aliases: dp_tp)".
template <class Names>
message& list_dims(message& m, int nprimary) {
  m << " (dims: ";
  for (int i = 0; i < Names::count; ++i) m << (i == 0 ? "" : i == nprimary ? "; aliases: " : ", ") << Names::views[i];
  return m << ")";
}
}  // namespace detail

/// A spec whose placements are set at run time, on a mesh of type Mesh.
template <class Mesh>
class dynamic_sharding : public basic_sharding<Mesh, detail::stored_placements<Mesh::ndim_with_aliases>> {
  using base = basic_sharding<Mesh, detail::stored_placements<Mesh::ndim_with_aliases>>;
  using Names = typename Mesh::names_type;
  static constexpr int N = Mesh::ndim_with_aliases;

 public:
  /// Every dim replicated, on a static mesh.
  constexpr dynamic_sharding()
    requires Mesh::is_static
      : base(Mesh{}, placement_table<N>{}) {}
  /// Every dim replicated, on mesh m.
  constexpr explicit dynamic_sharding(const Mesh& m) : base(m, placement_table<N>{}) {}
  /// The same spec as a static one (same mesh, placements, orders and rule).
  template <class Source>
  constexpr dynamic_sharding(const basic_sharding<Mesh, Source>& s) : base(s.mesh(), s.table()) {}  // NOLINT: implicit

  /// The spec of a table a planner built (plan.hpp: a step's before and after), unchecked:
  /// only devmesh's own code holds the key.
  constexpr dynamic_sharding(const Mesh& m, const placement_table<N>& t, detail::planner_key)
      : base(m, t) {}

  /// Places p on the named dim (a dim or an alias of the mesh). Throws mesh_error if the mesh
  /// has no such dim, if the dim (or an alias of it, or one of its own dims) has a placement
  /// already, or if p shards a tensor dim that has an explicit order.
  dynamic_sharding& place(std::string_view dim, placement p) { return place(index_of(dim), p, dim); }
  /// Places p on dim d by index (aliases after the mesh's dims).
  dynamic_sharding& place(int d, placement p) { return place(d, p, d >= 0 && d < N ? Names::views[d] : "?"); }
  /// Shards tensor dim t on the named dims in the order given (PyTorch's shard_order; the
  /// first splits first). Throws mesh_error on an unknown dim, a dim named twice, a dim
  /// placed already, or if another placement shards t.
  dynamic_sharding& order(int t, std::span<const std::string_view> dims) {
    int idx[N > 0 ? N : 1]{};
    for (std::size_t i = 0; i < dims.size(); ++i) {  // known, and distinct: so at most N of them
      if (index_of(dims[i]) < 0) fail_unknown(dims[i]);
      for (std::size_t j = 0; j < i; ++j)
        if (dims[j] == dims[i]) report({detail::table_issue_kind::order_repeats, index_of(dims[i]), -1, t}, dims[i]);
      idx[i] = index_of(dims[i]);
    }
    report(detail::begin_shard_order(this->stored_table(), t, idx, static_cast<int>(dims.size())), "");
    for (std::size_t i = 0; i < dims.size(); ++i)
      report(detail::add_placement(this->stored_table(), Mesh::layout, idx[i], placement::sharded(t),
                                   static_cast<int>(i)),
             dims[i]);
    return *this;
  }
  /// order() from a braced list: s.order(0, {"tp", "dp"}).
  dynamic_sharding& order(int t, std::initializer_list<std::string_view> dims) {
    return order(t, std::span<const std::string_view>(dims.begin(), dims.size()));
  }
  /// Sets the chunking rule.
  dynamic_sharding& chunk(chunking rule) {
    this->stored_table().rule = rule;
    return *this;
  }

 private:
  static int index_of(std::string_view dim) {
    for (int d = 0; d < N; ++d)
      if (Names::views[d] == dim) return d;
    return -1;
  }
  dynamic_sharding& place(int d, placement p, std::string_view name) {
    if (d < 0 || d >= N) fail_unknown(name);
    if (p.split_factor < 1)
      detail::throw_mesh_error(detail::message() << "devmesh: sharding: the split factor " << static_cast<long long>(p.split_factor)
                                                 << " on dim '" << name << "' is not >= 1");
    report(detail::add_placement(this->stored_table(), Mesh::layout, d, p, -1), name);
    return *this;
  }
  [[noreturn]] static void fail_unknown(std::string_view name) {
    detail::message m;
    m << DEVMESH_MSG_PLACEMENT_UNKNOWN_DIM ": '" << name << "'";
    detail::throw_mesh_error(detail::list_dims<Names>(m, Mesh::ndim));
  }
  static void report(const detail::table_issue& i, std::string_view name) {
    using kind = detail::table_issue_kind;
    detail::message m;
    switch (i.kind) {
      case kind::none: return;
      case kind::unknown_dim: fail_unknown(name);
      case kind::placed_twice:
        m << DEVMESH_MSG_PLACED_TWICE ": '" << Names::views[i.dim] << "' and '" << Names::views[i.other] << "'";
        break;
      case kind::order_repeats:
        m << DEVMESH_MSG_ORDER_REPEATS ": '" << Names::views[i.dim] << "' in the order of tensor dim " << i.tensor_dim;
        break;
      case kind::partials_differ:
        m << DEVMESH_MSG_PARTIALS_DIFFER ": '" << Names::views[i.dim] << "' and '" << Names::views[i.other] << "'";
        break;
      case kind::order_not_exclusive:
        m << DEVMESH_MSG_ORDER_NOT_EXCLUSIVE ": '" << Names::views[i.dim] << "' and tensor dim " << i.tensor_dim;
        break;
    }
    detail::throw_mesh_error(m);
  }
};

}  // namespace devmesh
