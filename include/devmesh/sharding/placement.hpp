// devmesh/sharding/placement.hpp: what a mesh dim does to a tensor (DTensor's placements),
// as types for specs known at compile time and as a value for specs built at run time.
//
//   dm::replicate              every rank of the dim holds the whole tensor dim (Replicate())
//   dm::shard<D>               tensor dim D split along the mesh dim (Shard(D), torch.chunk)
//   dm::partial<dm::reduction::sum>   each rank holds a partial value to be reduced (Partial("sum"))
//
// A spec names placements by mesh dim (dm::on<"tp", dm::shard<1>>); dims not named are
// replicated. dm::shard_order<D, "tp", "dp"> shards tensor dim D on several mesh dims in an
// explicit order (PyTorch's shard_order, which it encodes as _StridedShard).
#pragma once
#include <cstdint>

#include "../core/config.hpp"
#include "../core/fixed_string.hpp"
#include "../core/names.hpp"

namespace devmesh {

/// The reduction a Partial placement is waiting for (DTensor's Partial reduce_op). The core
/// cannot see the runtime's devmesh::op: to_op<devmesh::op>(k) maps it there.
enum class reduction : int { sum, avg, min, max };

/// The runtime's reduction operator for `k`, for any enum with members sum, avg, min and max
/// (devmesh::op in runtime/backend.hpp): constexpr, so a planner can map at compile time.
template <class Op>
DEVMESH_HOST_DEVICE constexpr Op to_op(reduction k) {
  switch (k) {
    case reduction::avg: return Op::avg;
    case reduction::min: return Op::min;
    case reduction::max: return Op::max;
    case reduction::sum: break;
  }
  return Op::sum;
}

/// PyTorch's spelling of a reduction: "sum", "avg", "min", "max".
constexpr const char* reduction_name(reduction k) {
  switch (k) {
    case reduction::avg: return "avg";
    case reduction::min: return "min";
    case reduction::max: return "max";
    case reduction::sum: break;
  }
  return "sum";
}

/// Which of DTensor's three placements.
enum class placement_kind : int { replicate, shard, partial };

/// One mesh dim's placement as a value: what a planner reads per mesh dim and a parser
/// builds. tensor_dim is the sharded tensor dim (shard only); op the pending reduction
/// (partial only); split_factor > 1 makes a shard PyTorch's _StridedShard as written (a view
/// op's, say), where an explicit shard order (shard_order, dynamic_sharding::order) derives it.
struct placement {
  placement_kind kind = placement_kind::replicate;
  int tensor_dim = -1;
  reduction op = reduction::sum;
  std::int64_t split_factor = 1;

  /// Replicate().
  DEVMESH_HOST_DEVICE static constexpr placement replicated() { return {}; }
  /// Shard(d).
  DEVMESH_HOST_DEVICE static constexpr placement sharded(int d) { return {placement_kind::shard, d, reduction::sum}; }
  /// _StridedShard(d, split_factor=f): tensor dim d cut into f pieces (torch.chunk), each piece
  /// split along the mesh dim, the rank keeping its sub-chunk of every piece.
  DEVMESH_HOST_DEVICE static constexpr placement strided(int d, std::int64_t f) {
    return {placement_kind::shard, d, reduction::sum, f};
  }
  /// Partial(op).
  DEVMESH_HOST_DEVICE static constexpr placement partial_of(reduction op) { return {placement_kind::partial, -1, op}; }
  /// True for Shard(d) (any d).
  DEVMESH_HOST_DEVICE constexpr bool is_shard() const { return kind == placement_kind::shard; }
  /// True for Partial(op) (any op).
  DEVMESH_HOST_DEVICE constexpr bool is_partial() const { return kind == placement_kind::partial; }
  /// True for Replicate().
  DEVMESH_HOST_DEVICE constexpr bool is_replicate() const { return kind == placement_kind::replicate; }
  /// Same kind, tensor dim and reduction.
  friend constexpr bool operator==(const placement&, const placement&) = default;
};

/// How a sharded tensor dim is cut into chunks.
///  - uneven (default): torch.chunk, as DTensor: ceil-sized chunks, trailing ones smaller or empty.
///  - even: as uneven, and every chunk must be equal: a static extent that does not divide
///    is a compile error, a dynamic one a mesh_error.
///  - padded: FSDP's flat parameters: equal chunks of ceil(n / shards) over the dim's shards
///    in shard order, the last ones padded; padding() reports how much.
enum class chunking : int { uneven, even, padded };

/// Replicate() as a type, for dm::on<"dp", dm::replicate>.
struct replicate {
  static constexpr placement value = placement::replicated();
  using devmesh_placement_tag = void;
};
/// Shard(D) as a type: tensor dim D split along the mesh dim it is placed on.
template <int D>
struct shard {
  static constexpr placement value = placement::sharded(D);
  using devmesh_placement_tag = void;
};
/// _StridedShard(D, split_factor=F) as a type (prefer shard_order, which derives F).
template <int D, std::int64_t F>
struct strided_shard {
  static_assert(F >= 1, "devmesh: strided_shard<D, F>: the split factor F must be >= 1");
  static constexpr placement value = placement::strided(D, F);
  using devmesh_placement_tag = void;
};
/// Partial(Op) as a type.
template <reduction Op>
struct partial {
  static constexpr placement value = placement::partial_of(Op);
  using devmesh_placement_tag = void;
};

/// A type is a placement if it is replicate, shard<D> or partial<Op>.
template <class P>
concept placement_type = requires { typename P::devmesh_placement_tag; };

// ---- the clauses of a spec (dm::sharding<Mesh, clauses...>) ------------------------------

/// Placement P on mesh dim Name (a dim or an alias of the mesh).
template <fixed_string Name, placement_type P>
struct on {
  using entry_names = names<name_t<Name>>;
  static constexpr int count = 1;
  static constexpr placement placements[1] = {P::value};
  static constexpr int ordered_tensor_dim = -1;
  using devmesh_clause_tag = void;
};

/// Tensor dim D sharded on mesh dims Names..., split by the first one first (PyTorch's
/// ShardOrderEntry(D, (dims...))); the other mesh dims of the spec shard other tensor dims.
template <int D, fixed_string... Names>
struct shard_order {
  static_assert(sizeof...(Names) > 0, "devmesh: shard_order<D, names...> needs at least one mesh dim");
  using entry_names = names<name_t<Names>...>;
  static constexpr int count = sizeof...(Names);
  static constexpr placement placements[count] = {(static_cast<void>(Names), placement::sharded(D))...};
  static constexpr int ordered_tensor_dim = D;
  using devmesh_clause_tag = void;
};

/// The chunking rule of a spec (default chunking::uneven, DTensor's).
template <chunking Rule>
struct chunks {
  using entry_names = names<>;
  static constexpr int count = 0;
  static constexpr placement placements[1] = {};
  static constexpr int ordered_tensor_dim = -1;
  static constexpr chunking rule = Rule;
  using devmesh_clause_tag = void;
};

/// A type is a clause of a spec: on<...>, shard_order<...> or chunks<...>.
template <class C>
concept sharding_clause = requires { typename C::devmesh_clause_tag; };

}  // namespace devmesh
