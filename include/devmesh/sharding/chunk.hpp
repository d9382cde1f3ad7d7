// devmesh/sharding/chunk.hpp: the arithmetic of one sharding step on one tensor dim, as
// PyTorch 2.15 does it (placement_types.py), without materializing index lists.
//
// A step splits the list of global indices a rank holds along a tensor dim (its "current"
// list, of some length) among the n ranks of one mesh dim and keeps chunk c:
//  - Shard (split factor 1): torch.chunk: chunks of ceil(len / n), the trailing ones smaller
//    or empty (Shard.local_shard_size_and_offset).
//  - _StridedShard (split factor f > 1): torch.chunk into f pieces, each piece torch.chunk'ed
//    into n, and chunk c is the concatenation of every piece's c-th sub-chunk
//    (_StridedShard._split_tensor). It is how PyTorch writes an explicit shard order.
// Each function below is O(1): the pieces are full (ceil(len / f) long) except one. Their
// products and sums are checked (core/checked.hpp): an extent up to INT64_MAX is right, never
// wrapped.
#pragma once
#include "../core/checked.hpp"
#include "../core/config.hpp"
#include "extents.hpp"

namespace devmesh::detail {

/// ceil(a / b) for a >= 0, b > 0 (0 if b is 0), without forming a + b - 1.
DEVMESH_HOST_DEVICE constexpr tensor_index ceil_div(tensor_index a, tensor_index b) {
  return b == 0 ? 0 : a / b + (a % b != 0);
}
/// a * b and a + b for the chunk arithmetic, checked.
DEVMESH_HOST_DEVICE constexpr tensor_index mul_index(tensor_index a, tensor_index b) {
  return checked_mul(a, b, "a tensor dim's chunk arithmetic");
}
DEVMESH_HOST_DEVICE constexpr tensor_index add_index(tensor_index a, tensor_index b) {
  return checked_add(a, b, "a tensor dim's chunk arithmetic");
}
DEVMESH_HOST_DEVICE constexpr tensor_index min_index(tensor_index a, tensor_index b) { return a < b ? a : b; }

/// One chunk of a list: where it starts in the list and how long it is.
struct chunk_range {
  tensor_index start = 0;
  tensor_index size = 0;
};

/// Chunk c of n of a list of length len, as torch.chunk (the missing trailing chunks empty,
/// starting at len).
DEVMESH_HOST_DEVICE constexpr chunk_range torch_chunk(tensor_index len, int n, int c) {
  const tensor_index cs = ceil_div(len, n);
  const tensor_index start = min_index(mul_index(cs, c), len);
  return {start, min_index(len - start, cs)};
}

/// One step: the mesh dim's size n, this rank's coordinate c along it, the split factor.
struct shard_step {
  int n = 1;
  int c = 0;
  tensor_index split_factor = 1;
};

/// The pieces of a strided step: `full` pieces of length `piece`, then one of `rest` (< piece).
struct strided_pieces {
  tensor_index piece = 0;
  tensor_index full = 0;
  tensor_index rest = 0;
};
DEVMESH_HOST_DEVICE constexpr strided_pieces pieces_of(tensor_index len, tensor_index f) {
  const tensor_index piece = ceil_div(len, f);
  const tensor_index full = piece == 0 ? 0 : len / piece;
  return {piece, full, len - mul_index(full, piece)};
}

/// Length of the list after step s, from a list of length len.
DEVMESH_HOST_DEVICE constexpr tensor_index step_length(tensor_index len, const shard_step& s) {
  if (s.split_factor == 1) return torch_chunk(len, s.n, s.c).size;
  const auto p = pieces_of(len, s.split_factor);
  return add_index(mul_index(p.full, torch_chunk(p.piece, s.n, s.c).size), torch_chunk(p.rest, s.n, s.c).size);
}

/// Where position i of the list after step s lies in the list before it (of length len).
DEVMESH_HOST_DEVICE constexpr tensor_index step_to_parent(tensor_index len, const shard_step& s, tensor_index i) {
  if (s.split_factor == 1) return add_index(torch_chunk(len, s.n, s.c).start, i);
  const auto p = pieces_of(len, s.split_factor);
  const auto in_full = torch_chunk(p.piece, s.n, s.c);
  const tensor_index in_pieces = mul_index(p.full, in_full.size);
  if (i < in_pieces)
    return add_index(add_index(mul_index(i / in_full.size, p.piece), in_full.start), i % in_full.size);
  return add_index(add_index(mul_index(p.full, p.piece), torch_chunk(p.rest, s.n, s.c).start), i - in_pieces);
}

/// Which chunk holds position i of a list of length len, and where in it.
struct located {
  int c = 0;
  tensor_index at = 0;
};
DEVMESH_HOST_DEVICE constexpr located step_locate(tensor_index len, int n, tensor_index f, tensor_index i) {
  if (f == 1) {
    const tensor_index cs = ceil_div(len, n);
    return {static_cast<int>(i / cs), i % cs};
  }
  const auto p = pieces_of(len, f);
  const tensor_index j = i / p.piece;
  const tensor_index q = i - mul_index(j, p.piece);
  const tensor_index cs = ceil_div(j < p.full ? p.piece : p.rest, n);
  const int c = static_cast<int>(q / cs);
  return {c, add_index(mul_index(j, torch_chunk(p.piece, n, c).size), q % cs)};
}

}  // namespace devmesh::detail
