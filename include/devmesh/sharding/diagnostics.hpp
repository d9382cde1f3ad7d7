// devmesh/sharding/diagnostics.hpp: the sharding layer's misuses, as the core's
// (core/diagnostics.hpp): at compile time a class template in devmesh::error whose
// arguments name the dims (fire() holds the static_assert); at run time a mesh_error with
// the same text and the values.
#pragma once
#include "../core/diagnostics.hpp"

#define DEVMESH_MSG_PLACEMENT_UNKNOWN_DIM \
  "devmesh: sharding: a placement names a dim the mesh does not have (see error::placement_on_unknown_dim<name, existing_dims<...>>)"
#define DEVMESH_MSG_PLACED_TWICE \
  "devmesh: sharding: a mesh dim has two placements: named twice, or an alias together with one of its own dims (see error::placed_twice<dim, other, placed<...>>)"
#define DEVMESH_MSG_ORDER_REPEATS \
  "devmesh: sharding: a shard_order names a mesh dim twice (see error::shard_order_repeats_dim<dim, tensor_dim_of<d>, in_order<...>>)"
#define DEVMESH_MSG_ORDER_NOT_EXCLUSIVE \
  "devmesh: sharding: a tensor dim with a shard_order is sharded by another clause too; list every mesh dim that shards it in its one shard_order (see error::shard_order_not_exclusive<dim, tensor_dim_of<d>>)"
#define DEVMESH_MSG_PARTIALS_DIFFER \
  "devmesh: sharding: Partial placements of different reductions (sum on one dim, max on another) have no one order of reduction; use one reduction for every Partial of a spec (see error::partial_reductions_differ<dim, other>)"
#define DEVMESH_MSG_TENSOR_DIM_RANGE \
  "devmesh: sharding: a placement shards a tensor dim the tensor does not have (see error::tensor_dim_out_of_range<mesh dim, tensor_dim_of<d>, tensor_rank<r>>)"
#define DEVMESH_MSG_NOT_DIVISIBLE \
  "devmesh: sharding: chunking::even, but the tensor dim's extent is not a multiple of its number of shards (see error::extent_not_divisible<tensor_dim_of<d>, extent_of<n>, shard_count<k>, dims<...>>)"

namespace devmesh {

/// Type-level values printed inside the sharding diagnostics.
template <int D>
struct tensor_dim_of {};
template <int R>
struct tensor_rank {};
template <long long N>
struct extent_of {};
template <long long K>
struct shard_count {};
template <class... Names>
struct placed {};
template <class... Names>
struct in_order {};

namespace error {
template <class Name, class Existing>
struct placement_on_unknown_dim {
  static constexpr void fire() { static_assert(always_false<Name>, DEVMESH_MSG_PLACEMENT_UNKNOWN_DIM); }
};
template <class Name, class Other, class Placed>
struct placed_twice {
  static constexpr void fire() { static_assert(always_false<Name>, DEVMESH_MSG_PLACED_TWICE); }
};
template <class Name, class TensorDim, class Order>
struct shard_order_repeats_dim {
  static constexpr void fire() { static_assert(always_false<Name>, DEVMESH_MSG_ORDER_REPEATS); }
};
template <class Name, class TensorDim>
struct shard_order_not_exclusive {
  static constexpr void fire() { static_assert(always_false<Name>, DEVMESH_MSG_ORDER_NOT_EXCLUSIVE); }
};
template <class Name, class Other>
struct partial_reductions_differ {
  static constexpr void fire() { static_assert(always_false<Name>, DEVMESH_MSG_PARTIALS_DIFFER); }
};
template <class Name, class TensorDim, class Rank>
struct tensor_dim_out_of_range {
  static constexpr void fire() { static_assert(always_false<Name>, DEVMESH_MSG_TENSOR_DIM_RANGE); }
};
template <class TensorDim, class Extent, class Shards, class Dims>
struct extent_not_divisible {
  static constexpr void fire() { static_assert(always_false<TensorDim>, DEVMESH_MSG_NOT_DIVISIBLE); }
};
}  // namespace error

}  // namespace devmesh
