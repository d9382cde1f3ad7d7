// devmesh/sharding/spec.hpp: a sharding spec, what each rank of a mesh holds of a tensor
// (DTensor's DTensorSpec without the tensor): a placement per mesh dim, the explicit shard
// orders and the chunking rule, with the per-rank queries.
//
//   using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
//   using spec = dm::sharding<mesh2d, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<1>>>;
//   constexpr auto shape = spec{}.local_shape(dm::extents<13, 6>{}, 5);   // {7, 2}
//
// A static spec (static mesh, placements in the type) is an empty object and every query is a
// constant expression; one on a dynamic mesh stores the mesh's dynamic values; a dynamic spec
// (dynamic_spec.hpp) stores its placement table too. Positions are the mesh's: ranks of its
// root's rank space, as every core query (for a root mesh, its ranks).
#pragma once
#include <array>
#include <type_traits>

#include "../core/basic_mesh.hpp"
#include "../core/config.hpp"
#include "../core/group.hpp"
#include "clauses.hpp"
#include "diagnostics.hpp"
#include "extents.hpp"
#include "index_map.hpp"
#include "placement.hpp"
#include "spec_checks.hpp"
#include "table.hpp"

namespace devmesh {

namespace detail {
/// A placement table known at compile time: stores nothing.
template <auto T>
struct static_placements {
  static constexpr bool is_static = true;
  DEVMESH_HOST_DEVICE constexpr auto table() const { return T; }
};
/// A placement table known at run time.
template <int N>
struct stored_placements {
  static constexpr bool is_static = false;
  placement_table<N> stored{};
  DEVMESH_HOST_DEVICE constexpr const placement_table<N>& table() const { return stored; }
};
/// The mesh: stored when it has dynamic values, else made on demand (an empty base).
template <class Mesh, bool Static = Mesh::is_static>
struct mesh_holder {
  Mesh held;
  DEVMESH_HOST_DEVICE constexpr explicit mesh_holder(const Mesh& m) : held(m) {}
  DEVMESH_HOST_DEVICE constexpr const Mesh& mesh() const { return held; }
};
template <class Mesh>
struct mesh_holder<Mesh, true> {
  constexpr mesh_holder() = default;
  DEVMESH_HOST_DEVICE constexpr explicit mesh_holder(const Mesh&) {}
  DEVMESH_HOST_DEVICE constexpr Mesh mesh() const { return Mesh{}; }
};
}  // namespace detail

template <class Spec, class E, class Group>
class local_sizes_view;
template <class Mesh>
class dynamic_sharding;

/// A spec on Mesh whose placement table comes from Source (static_placements or
/// stored_placements). Use dm::sharding<Mesh, clauses...> or dm::dynamic_sharding<Mesh>.
template <class Mesh, class Source>
class basic_sharding : private detail::mesh_holder<Mesh>, private Source {
  static constexpr auto L = Mesh::layout;
  static constexpr int N = L.ndims;
  static constexpr int primary_modes = L.first[L.nprimary];
  using checks = detail::spec_checks<Mesh, Source>;
  template <class, class>
  friend class basic_sharding;
  // (a friend, not only a derived class: nvcc 13 refuses this->stored_table() in its members)
  template <class>
  friend class dynamic_sharding;

 public:
  using mesh_type = Mesh;
  /// Number of mesh dims a placement can name (the mesh's dims, then its aliases).
  static constexpr int ndims = N;
  /// True if the placements are in the type (the mesh's sizes may still be dynamic).
  static constexpr bool static_placements = Source::is_static;
  /// The order in which the dims apply their placements (table.hpp: order_of_dims).
  static constexpr detail::application_order<N> application_order = detail::order_of_dims(L);

  /// A static spec on a static mesh: an empty object.
  DEVMESH_HOST_DEVICE constexpr basic_sharding()
    requires(Mesh::is_static && Source::is_static)
  {}
  /// A static spec on mesh m (which holds the dynamic sizes, if any).
  DEVMESH_HOST_DEVICE constexpr explicit basic_sharding(const Mesh& m)
    requires(Source::is_static)
      : detail::mesh_holder<Mesh>(m) {}

  /// The mesh: a reference to the one a spec with dynamic sizes holds (no copy: queries and
  /// the planner ask often; valid while the spec lives), a value for a static mesh (an empty
  /// object).
  DEVMESH_HOST_DEVICE constexpr decltype(auto) mesh() const { return this->detail::mesh_holder<Mesh>::mesh(); }
  /// Every dim's placement, the explicit orders and the rule (what a planner reads): a reference
  /// to a dynamic spec's table (valid while the spec lives), a value for a static one.
  DEVMESH_HOST_DEVICE constexpr decltype(auto) table() const { return Source::table(); }
  /// Placement of dim d (by index, aliases included): replicate where none is placed.
  DEVMESH_HOST_DEVICE constexpr placement placement_of(int d) const {
    check_dim_index("placement_of: mesh dim", d);
    return table().at[d];
  }
  /// Placement of the named dim.
  template <fixed_string Name>
  DEVMESH_HOST_DEVICE constexpr placement placement_on() const {
    return table().at[Mesh::template dim_index<Name>()];
  }
  /// The chunking rule.
  DEVMESH_HOST_DEVICE constexpr chunking rule() const { return table().rule; }
  /// PyTorch's spelling of dim d's shard: 1 for Shard(t), f for _StridedShard(t, split_factor=f)
  /// (an explicit shard order, as DTensorSpec converts it); 1 for every other placement.
  DEVMESH_HOST_DEVICE constexpr tensor_index split_factor(int d) const {
    check_dim_index("split_factor: mesh dim", d);
    int sizes[N > 0 ? N : 1]{};
    sizes_into(sizes);
    const auto t = table();
    constexpr auto order = application_order;  // a local copy: device code cannot read the static
    return detail::split_factor_of(t, order, sizes, d);
  }

  // ---- per position ----------------------------------------------------------------------
  /// The shape of the block `position` holds (PyTorch's local_shape; padding excluded).
  template <class E>
  DEVMESH_HOST_DEVICE constexpr std::array<tensor_index, E::rank_value> local_shape(const E& ext, int position) const {
    return per_dim(ext, position, [](const auto& m) { return m.length(); });
  }
  /// Where the block of `position` starts (PyTorch's global_offset: an empty block's offset is
  /// the extent; with an explicit shard order, the first held index of a block that is not
  /// contiguous: global_index() gives every one).
  template <class E>
  DEVMESH_HOST_DEVICE constexpr std::array<tensor_index, E::rank_value> global_offset(const E& ext,
                                                                                      int position) const {
    return per_dim(ext, position, [](const auto& m) { return m.offset(); });
  }
  /// chunking::padded: the padding after the held block, per tensor dim (0 otherwise).
  template <class E>
  DEVMESH_HOST_DEVICE constexpr std::array<tensor_index, E::rank_value> padding(const E& ext, int position) const {
    return per_dim(ext, position, [](const auto& m) { return m.padding(); });
  }
  /// The held block with its padding (local_shape() + padding()).
  template <class E>
  DEVMESH_HOST_DEVICE constexpr std::array<tensor_index, E::rank_value> padded_shape(const E& ext, int position) const {
    return per_dim(ext, position, [](const auto& m) { return m.length() + m.padding(); });
  }
  /// Number of elements `position` holds (padding excluded).
  template <class E>
  DEVMESH_HOST_DEVICE constexpr tensor_index local_size(const E& ext, int position) const {
    tensor_index n = 1;
    for (tensor_index e : local_shape(ext, position)) n = detail::checked_mul(n, e, "a block's element count");
    return n;
  }
  /// local_shape() of the position at mesh coordinate c (in the submesh holding position 0).
  template <class E>
  DEVMESH_HOST_DEVICE constexpr auto local_shape_at(const E& ext, const std::array<int, L.nprimary>& c) const {
    return local_shape(ext, mesh().rank_at(c));
  }
  /// global_offset() of the position at mesh coordinate c.
  template <class E>
  DEVMESH_HOST_DEVICE constexpr auto global_offset_at(const E& ext, const std::array<int, L.nprimary>& c) const {
    return global_offset(ext, mesh().rank_at(c));
  }
  /// The exact index map: the global index, along tensor dim t, of local index i of
  /// `position`'s block (i in [0, local_shape()[t])).
  template <class E>
  DEVMESH_HOST_DEVICE constexpr tensor_index global_index(const E& ext, int position, int t, tensor_index i) const {
    (void)checked(ext);
    if (t < 0 || t >= E::rank_value) detail::fail_sharding("global_index: tensor dim", t, E::rank_value);
    const auto m = map_of(ext, position, t);
    if (i < 0 || i >= m.length()) detail::fail_sharding("global_index: local index", i, m.length());
    return m.global_index(i);
  }

  /// The global indices `position` holds along tensor dim t, as a function: length(),
  /// global_index(i), contains(g), contiguous() (index_map.hpp). What a planner intersects.
  template <class E>
  DEVMESH_HOST_DEVICE constexpr detail::dim_map<N> held(const E& ext, int position, int t) const {
    (void)checked(ext);
    if (t < 0 || t >= E::rank_value) detail::fail_sharding("held: tensor dim", t, E::rank_value);
    return map_of(ext, position, t);
  }

  // ---- per element -----------------------------------------------------------------------
  /// The positions that hold global element g (one index per tensor dim): the group of the
  /// dims that do not shard (replicated and partial ones) at the coordinates that own g, in
  /// the submesh holding `member`. O(number of mesh dims).
  template <class E>
  DEVMESH_HOST_DEVICE constexpr rank_group<primary_modes> owners(const E& ext,
                                                                 const std::array<tensor_index, E::rank_value>& g,
                                                                 int member = 0) const {
    const auto t = checked(ext);
    check_position(member);
    int sizes[N > 0 ? N : 1]{}, coords[N > 0 ? N : 1]{};
    sizes_into(sizes);
    constexpr auto order = application_order;  // a local copy: device code cannot read the static
    for (int k = 0; k < E::rank_value; ++k) {
      if (g[k] < 0 || g[k] >= ext.extent(k)) detail::fail_sharding("owners: global index", g[k], ext.extent(k));
      detail::locate_index(t, order, sizes, k, ext.extent(k), g[k], coords);
    }
    return group_at(t, coords, member);
  }
  /// True if `position` holds global element g.
  template <class E>
  DEVMESH_HOST_DEVICE constexpr bool holds(const E& ext, int position,
                                           const std::array<tensor_index, E::rank_value>& g) const {
    return owners(ext, g, position).contains(position);
  }

  // ---- per mesh dim, per spec ------------------------------------------------------------
  /// The element counts of the blocks of the ranks of dim Name's group holding `position`, in
  /// group order (a v-collective's counts along Name): a view, computed per element.
  template <fixed_string Name, class E>
  DEVMESH_HOST_DEVICE constexpr auto local_sizes(const E& ext, int position) const {
    auto g = mesh().template group<Name>(position);
    return local_sizes_view<basic_sharding, E, decltype(g)>(*this, ext, g);
  }
  /// True if every rank holds a block of the same shape: each sharded extent is a multiple of
  /// its number of shards (chunking::padded: after padding, always).
  template <class E>
  DEVMESH_HOST_DEVICE constexpr bool is_even(const E& ext) const {
    const auto t = checked(ext);
    return t.rule == chunking::padded || detail::first_uneven_dim(t, mesh(), ext) < 0;
  }
  /// Runs the checks of a spec on a tensor: every sharded tensor dim exists, and chunking::even
  /// divides. Static: a compile error naming the dims; dynamic: mesh_error. Every query runs it.
  template <class E>
  DEVMESH_HOST_DEVICE constexpr void check(const E& ext) const {
    (void)checked(ext);
  }

 protected:
  /// A spec with a run-time table (dynamic_spec.hpp).
  DEVMESH_HOST_DEVICE constexpr basic_sharding(const Mesh& m, const placement_table<N>& t)
    requires(!Source::is_static)
      : detail::mesh_holder<Mesh>(m), Source{t} {}
  /// The stored table (dynamic specs only).
  constexpr placement_table<N>& stored_table()
    requires(!Source::is_static)
  {
    return this->stored;
  }

 private:
  DEVMESH_HOST_DEVICE constexpr void sizes_into(int* sizes) const {
    const auto& m = mesh();
    for (int d = 0; d < N; ++d) sizes[d] = m.size(d);
  }
  DEVMESH_HOST_DEVICE static constexpr void check_dim_index(const char* what, int d) {
    if (d < 0 || d >= N) detail::fail_sharding(what, d, N);
  }
  DEVMESH_HOST_DEVICE constexpr void check_position(int position) const {
    const int n = mesh().root_size();
    if (position < 0 || position >= n) detail::fail_sharding("position", position, n);
  }
  template <class E>
  DEVMESH_HOST_DEVICE constexpr placement_table<N> checked(const E& ext) const {
    const auto t = table();
    checks::check_tensor_dims(t, ext);
    checks::check_even(t, mesh(), ext);
    return t;
  }
  template <class E>
  DEVMESH_HOST_DEVICE constexpr detail::dim_map<N> map_of(const E& ext, int position, int k) const {
    check_position(position);
    const auto& m = mesh();
    int sizes[N > 0 ? N : 1]{}, coords[N > 0 ? N : 1]{};
    for (int d = 0; d < N; ++d) sizes[d] = m.size(d), coords[d] = m.coordinate_unchecked(position, d);
    constexpr auto order = application_order;  // a local copy: device code cannot read the static
    return detail::map_dim(table(), order, sizes, coords, k, ext.extent(k));
  }
  template <class E, class F>
  DEVMESH_HOST_DEVICE constexpr std::array<tensor_index, E::rank_value> per_dim(const E& ext, int position, F f) const {
    (void)checked(ext);
    std::array<tensor_index, E::rank_value> out{};
    for (int k = 0; k < E::rank_value; ++k) out[k] = f(map_of(ext, position, k));
    return out;
  }
  /// The group over the mesh's modes that no sharding dim has, at coordinates coords[d] along
  /// each sharding dim d, in the submesh holding `member`.
  DEVMESH_HOST_DEVICE constexpr rank_group<primary_modes> group_at(const placement_table<N>& t, const int* coords,
                                                                   int member) const {
    const auto& m = mesh();
    constexpr auto l = L;  // a local copy: device code cannot read the static
    int base = member;
    for (int p = 0; p < primary_modes; ++p) base -= ((member / m.mode_stride(p)) % m.mode_shape(p)) * m.mode_stride(p);
    dim_layout<primary_modes> free{};
    for (int p = 0; p < primary_modes; ++p) {
      bool sharded = false;
      for (int d = 0; d < N; ++d)
        for (int q = l.first[d]; q < l.first[d + 1]; ++q)
          sharded = sharded || (t.at[d].is_shard() && l.same_mode(p, q));
      if (!sharded) free.shape[free.count] = m.mode_shape(p), free.stride[free.count++] = m.mode_stride(p);
    }
    for (int d = 0; d < N; ++d) {
      if (!t.at[d].is_shard()) continue;
      int rest = coords[d];
      for (int q = l.first[d + 1] - 1; q >= l.first[d]; --q) {
        base += (rest % m.mode_shape(q)) * m.mode_stride(q);
        rest /= m.mode_shape(q);
      }
    }
    return rank_group<primary_modes>(base, free);
  }
};

/// A static spec: placements on Mesh's dims by name (dims not named are replicated).
/// Misuse is a compile error naming the dims (diagnostics.hpp). A class, not an alias of
/// basic_sharding: nvcc 13's host code spells the placement table of an alias as `__T0`.
template <class Mesh, sharding_clause... C>
class sharding : public basic_sharding<Mesh, detail::static_placements<detail::clause_table<
                                                 typename Mesh::names_type, Mesh::layout, C...>::value>> {
  using base = basic_sharding<Mesh, detail::static_placements<
                                        detail::clause_table<typename Mesh::names_type, Mesh::layout, C...>::value>>;

 public:
  using base::base;
};

/// A static spec on mesh m (dm::make_sharding<dm::on<"dp", dm::shard<0>>>(m)), for meshes
/// with dynamic sizes.
template <sharding_clause... C, class Mesh>
constexpr sharding<Mesh, C...> make_sharding(const Mesh& m) {
  return sharding<Mesh, C...>(m);
}

}  // namespace devmesh
