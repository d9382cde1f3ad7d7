// devmesh/core/layout.hpp: the one representation of a mesh, as CuTe and PyTorch's
// _MeshLayout keep it: every dim is a layout over the root mesh's rank space.
//
// A dim's layout is a list of modes (shape : stride), most significant first: a plain dim
// has one mode, a flattened dim several (adjacent or not, in any order). With p a position
// (a rank of the root mesh's rank space, [0, root size), the root's ranks row-major):
//   digit of p in mode (n : s)          = (p / s) % n
//   coordinate of p along a dim         = its modes' digits, read row-major
//   first position of p's group over S  = p minus every digit of S's modes times its stride
// Every mode is a contiguous digit group of the root's row-major rank, so any two modes
// of one mesh are either the same mode or disjoint; slice, flatten and unflatten keep
// that true (an unflatten that cuts a mode cuts it in every dim that has it). Overlap
// checks and group keys are then comparisons of modes.
//
// Each value is static (a positive int, in the type) or dynamic (a slot of the mesh
// object's run-time values), as in std::extents: a static mesh stores nothing, and two
// meshes with the same names and layouts are the same type, whatever their history.
#pragma once
#include <cstddef>
#include <string_view>  // declares std::hash (as <functional> does, at a fraction of the cost)

#include "config.hpp"
#include "diagnostics.hpp"

namespace devmesh {

/// A mesh's layout, as a structural value (the first template argument of basic_mesh):
/// D dims (aliases included, after the mesh's own dims), M modes in all. shape and stride
/// hold a static value (> 0) or a dynamic slot (< 0, see dynamic_slot).
template <int D, int M>
struct layout {
  int shape[M > 0 ? M : 1]{};
  int stride[M > 0 ? M : 1]{};
  int first[D + 1]{};  // the modes of dim d are [first[d], first[d + 1])
  int nprimary = 0;    // dims [0, nprimary) are the mesh's dims; the rest are aliases
  int root = 1;        // number of positions: the ranks of the root mesh (its rank space)
  int ndynamic = 0;    // number of run-time values (slots)
  static constexpr int ndims = D;
  static constexpr int nmodes = M;

  /// Number of modes of dim d.
  DEVMESH_HOST_DEVICE constexpr int count(int d) const { return first[d + 1] - first[d]; }
  /// True if modes a and b are written alike (same shape and stride values or slots).
  constexpr bool equal_modes(int a, int b) const { return shape[a] == shape[b] && stride[a] == stride[b]; }
  /// True if modes a and b are the same digits of the root's rank. A static size-1 mode
  /// has no digits: it is the same as no mode (it is kept only for its stride, as a
  /// reshape keeps a size-1 dim's stride).
  constexpr bool same_mode(int a, int b) const { return shape[a] != 1 && equal_modes(a, b); }
  /// True if dim d has mode a.
  constexpr bool dim_has(int d, int a) const {
    for (int m = first[d]; m < first[d + 1]; ++m)
      if (same_mode(m, a)) return true;
    return false;
  }
  /// True if dims d and e share a mode (e.g. an alias and one of its own dims).
  constexpr bool overlap(int d, int e) const {
    for (int m = first[d]; m < first[d + 1]; ++m)
      if (dim_has(e, m)) return true;
    return false;
  }
  /// True if every value is static: the mesh object is empty.
  constexpr bool is_static() const { return ndynamic == 0; }
  /// True if dim d's size is static.
  constexpr bool static_dim(int d) const {
    for (int m = first[d]; m < first[d + 1]; ++m)
      if (shape[m] < 0) return false;
    return true;
  }
  /// Dim d's size, if static.
  constexpr int static_dim_size(int d) const {
    int n = 1;
    for (int m = first[d]; m < first[d + 1]; ++m) n *= shape[m];
    return n;
  }
};

namespace detail {
/// The encoding of dynamic slot k in a layout value.
DEVMESH_HOST_DEVICE constexpr int dynamic_slot(int k) { return -1 - k; }

/// Modes [first, first + K) as an array (K > 0 or a one-element placeholder).
template <int K>
struct mode_array {
  int m[K > 0 ? K : 1]{};
};
template <int K>
DEVMESH_HOST_DEVICE constexpr mode_array<K> mode_list(int first) {
  mode_array<K> r{};
  for (int i = 0; i < K; ++i) r.m[i] = first + i;
  return r;
}
/// True if modes (n1 : s1) and (n2 : s2), values resolved, of two meshes of one root cannot
/// be dims of one mesh: they share digits of its ranks, or they interleave. A mode is a
/// contiguous digit group, so it spans the place values [s, s * n); two modes share digits
/// when those ranges meet. Two modes cut from different runs of digits (an unflatten cuts a
/// run where its old dims' boundaries are not: ep = (4 : 1) of a (4, 3, 2) root, against its
/// dim dp = (4 : 6)) may miss each other and still interleave: the higher must start at a
/// multiple of where the lower ends (PyTorch's check_orthogonal). Size-1 modes have no digits.
DEVMESH_HOST_DEVICE constexpr bool modes_overlap(int n1, int s1, int n2, int s2) {
  if (n1 == 1 || n2 == 1) return false;
  const long long end1 = static_cast<long long>(s1) * n1, end2 = static_cast<long long>(s2) * n2;
  const bool below = end1 <= s2 && s2 % end1 == 0, above = end2 <= s1 && s1 % end2 == 0;
  return !below && !above;
}
}  // namespace detail

template <int M>
struct dim_layout;

/// The type every dim_layout<M>::coalesce() returns, whatever M: room for 30 modes. After
/// coalescing, every mode has a shape >= 2 and the shapes multiply to the dim's size, at
/// most INT_MAX (2^31 - 1) ranks: so at most 30 modes (2^30 <= INT_MAX < 2^31). One type for
/// every dim of every mesh, so that a coalesced layout can key a map (the runtime's
/// communicator cache).
using coalesced_layout = dim_layout<30>;

namespace detail {
// Not constexpr: a layout that coalesces into more modes than an int's bits allow is no
// layout of a mesh (its modes would multiply past INT_MAX).
[[noreturn]] DEVMESH_HOST_DEVICE inline void fail_coalesce_capacity() {
#if DEVMESH_DEVICE_PASS
  __trap();
  __builtin_unreachable();
#else
  throw_mesh_error("devmesh: dim_layout::coalesce: more than 30 modes of size >= 2 do not fit an int's ranks");
#endif
}
}  // namespace detail

/// One dim's layout with its values resolved: CuTe's (shape : stride) of the dim, as a
/// function from an index in the dim's groups to an offset in the root's rank space (what a
/// rank_group adds to its first position). Up to M modes; count says how many. Two dims have
/// the same groups, in the same order, exactly when their coalesced layouts are equal, which
/// makes coalesce() the key of a group (the runtime's communicator cache).
template <int M>
struct dim_layout {
  int count = 0;
  int shape[M > 0 ? M : 1]{};
  int stride[M > 0 ? M : 1]{};

  /// Number of indices: the product of the shapes (the size of each group).
  DEVMESH_HOST_DEVICE constexpr int size() const {
    int n = 1;
    for (int k = 0; k < count; ++k) n *= shape[k];
    return n;
  }
  /// CuTe's coalesce: size-1 modes dropped, a mode merged into the one before it when
  /// they are contiguous (stride_prev == shape * stride). Two dims have the same groups,
  /// in the same order, exactly when their coalesced layouts are equal.
  DEVMESH_HOST_DEVICE constexpr coalesced_layout coalesce() const {
    coalesced_layout out{};
    for (int i = 0; i < count; ++i) {
      if (shape[i] == 1) continue;
      const int last = out.count - 1;
      if (last >= 0 && out.stride[last] == shape[i] * stride[i]) {
        out.shape[last] *= shape[i];
        out.stride[last] = stride[i];
        continue;
      }
      if (out.count == 30) detail::fail_coalesce_capacity();
      out.shape[out.count] = shape[i];
      out.stride[out.count] = stride[i];
      ++out.count;
    }
    return out;
  }
  /// The layout as a function, as in CuTe: where the i-th position of a group lies, counted
  /// from the group's first position (i read row-major over the modes).
  DEVMESH_HOST_DEVICE constexpr int operator()(int i) const { return at(0, i); }
  /// start + (*this)(i): the i-th position of the group whose first position is start
  /// (rank_group::operator[]). One sum from start, over all M modes of room with the unused
  /// ones skipped: with count == M, as in a group, the trip count is a constant and g++ and
  /// clang emit what hand-written digit arithmetic costs (bench/zero_cost).
  DEVMESH_HOST_DEVICE constexpr int at(int start, int i) const {
    for (int k = M - 1; k >= 0; --k) {
      if (k >= count) continue;
      start += (i % shape[k]) * stride[k];
      i /= shape[k];
    }
    return start;
  }
  /// The function's inverse: the index i with (*this)(i) == offset, or -1 if there is none
  /// (offset is not in a group's span of the rank space). O(count): each mode's digit of
  /// offset, read row-major, then one evaluation to confirm.
  DEVMESH_HOST_DEVICE constexpr int index_of(int offset) const {
    if (offset < 0) return -1;
    int i = 0;
    for (int k = 0; k < count; ++k) i = i * shape[k] + (offset / stride[k]) % shape[k];
    return (*this)(i) == offset ? i : -1;
  }
};

/// Same modes, in the same order (the capacities may differ: dims of different meshes).
/// Coalesce both first to ask whether two dims have the same groups.
template <int A, int B>
DEVMESH_HOST_DEVICE constexpr bool operator==(const dim_layout<A>& a, const dim_layout<B>& b) {
  if (a.count != b.count) return false;
  for (int i = 0; i < a.count; ++i)
    if (a.shape[i] != b.shape[i] || a.stride[i] != b.stride[i]) return false;
  return true;
}

namespace detail {
/// FNV-1a over a layout's modes as operator== compares them: equal layouts hash alike,
/// whatever their capacities.
template <int M>
constexpr std::size_t hash_layout(const dim_layout<M>& l) {
  std::size_t h = 14695981039346656037ULL;
  const auto mix = [&h](int v) { h = (h ^ static_cast<std::size_t>(static_cast<unsigned>(v))) * 1099511628211ULL; };
  mix(l.count);
  for (int i = 0; i < l.count; ++i) {
    mix(l.shape[i]);
    mix(l.stride[i]);
  }
  return h;
}
}  // namespace detail

}  // namespace devmesh

namespace std {
/// dim_layouts as keys of unordered containers (the runtime keys communicators by a
/// coalesced_layout): equal layouts (operator==) hash alike, across capacities.
template <int M>
struct hash<devmesh::dim_layout<M>> {
  /// The layout's hash (devmesh::detail::hash_layout).
  constexpr std::size_t operator()(const devmesh::dim_layout<M>& l) const { return devmesh::detail::hash_layout(l); }
};
}  // namespace std
