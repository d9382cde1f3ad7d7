// devmesh/core/cut.hpp: how unflatten cuts a dim, on values: PyTorch 2.15's rule
// (_MeshLayout: the dim's layout is coalesced, then composed with the new sizes, row-major).
//
// Read a dim's index (its coordinate, [0, N)) as digits of its coalesced modes, least
// significant last. Mode u spans the index's place values [P_u, P_u+1) (P_0 = 1, P_n = N, the
// product of the modes below). New dim j, with below_j the product of the new sizes after it,
// spans [below_j, below_j * size_j). A new dim's end b is a place where the index can be cut:
// at a mode's end, or inside mode u where P_u divides b and b divides P_u+1. PyTorch refuses
// exactly the sizes that put an end anywhere else (_FlatLayout.composition's divisibility
// assertion; recorded answers in tests/core/data hold devmesh to it). Each new dim is then
// the pieces of the modes it spans: piece [a, b) of mode (n : s) is (b/a : s * a/P_u).
//
// Used at compile time (a static dim's cut, and the sizes a diagnostic lists) and at run
// time (an unflatten whose sizes or modes are run-time values, and its messages).
#pragma once
#include <string_view>

#include "config.hpp"
#include "diagnostics.hpp"
#include "layout.hpp"

namespace devmesh::detail {

/// A dim's layout coalesced (size-1 modes dropped, contiguous neighbours merged), with every
/// mode's place values in the dim's index: mode u (least significant first) spans [low[u], low[u + 1]).
template <int M>
struct place_values {
  int count = 0;
  int shape[M > 0 ? M : 1]{};   // least significant first
  int stride[M > 0 ? M : 1]{};
  long long low[M + 1]{};
  /// The dim's size N.
  DEVMESH_HOST_DEVICE constexpr long long size() const { return low[count]; }
  /// True if the index can be cut at place value b (1 <= b <= N): the end of a mode, or
  /// inside mode u where low[u] divides b and b divides low[u + 1].
  DEVMESH_HOST_DEVICE constexpr bool can_cut_at(long long b) const {
    for (int u = 0; u < count; ++u)
      if (low[u] < b && b < low[u + 1]) return b % low[u] == 0 && low[u + 1] % b == 0;
    return b >= 1 && b <= size();
  }
};

/// The place values of layout l's modes; with `coalesced`, of its coalesced modes.
template <int M>
DEVMESH_HOST_DEVICE constexpr place_values<M> place_values_of(const dim_layout<M>& l, bool coalesced = true) {
  place_values<M> p{};
  p.low[0] = 1;
  for (int i = l.count - 1; i >= 0; --i) {
    if (l.shape[i] == 1) continue;
    const int last = p.count - 1;
    if (coalesced && last >= 0 && l.stride[i] == p.shape[last] * p.stride[last]) {
      p.shape[last] *= l.shape[i];
    } else {
      p.shape[p.count] = l.shape[i];
      p.stride[p.count++] = l.stride[i];
    }
  }
  for (int u = 0; u < p.count; ++u) p.low[u + 1] = p.low[u] * p.shape[u];
  return p;
}

/// A dim's layout cut into K new dims (PyTorch's _unflatten of that dim): new dim j is
/// count[j] pieces, most significant first (at most one per coalesced mode). fault >= 0: the
/// new dim whose upper end cannot be cut (PyTorch refuses the sizes); fault_mode is the mode
/// of the layout as given (not coalesced) that the end falls in, below the product of the new
/// sizes after the faulty dim.
template <int M, int K>
struct layout_cut {
  int count[K > 0 ? K : 1]{};
  int shape[K > 0 ? K : 1][M > 0 ? M : 1]{};
  int stride[K > 0 ? K : 1][M > 0 ? M : 1]{};
  int fault = -1;
  int fault_mode = -1;
  long long below = 1;
};

/// The mode of l (as given) whose place values hold b strictly inside, or -1.
template <int M>
DEVMESH_HOST_DEVICE constexpr int mode_holding(const dim_layout<M>& l, long long b) {
  long long lo = 1;
  for (int i = l.count - 1; i >= 0; --i) {
    const long long hi = lo * l.shape[i];
    if (lo < b && b < hi) return i;
    lo = hi;
  }
  return -1;
}

/// Layout l (size N) cut into K new dims of the given sizes (positive, multiplying to N: the
/// caller's check). Pieces are written most significant first.
template <int M, int K>
DEVMESH_HOST_DEVICE constexpr layout_cut<M, K> cut_layout(const dim_layout<M>& l, const int* sizes) {
  layout_cut<M, K> c{};
  const auto p = place_values_of(l);
  long long lo = 1;
  for (int j = K - 1; j >= 0; --j) {  // from the least significant new dim: the first bad end is its own
    const long long hi = lo * sizes[j];
    if (!p.can_cut_at(hi)) {
      c.fault = j, c.fault_mode = mode_holding(l, hi), c.below = lo;
      return c;
    }
    for (int u = p.count - 1; u >= 0; --u) {
      const long long a = lo > p.low[u] ? lo : p.low[u];
      const long long b = hi < p.low[u + 1] ? hi : p.low[u + 1];
      if (a >= b) continue;
      c.shape[j][c.count[j]] = static_cast<int>(b / a);
      c.stride[j][c.count[j]++] = static_cast<int>(p.stride[u] * (a / p.low[u]));
    }
    lo = hi;
  }
  return c;
}

/// The sizes a new dim could have where its lower end is `below` (the product of the new
/// sizes after it) in layout l: every k dividing N / below whose end below * k can be cut,
/// ascending, at most Cap of them (out[0, returned count)).
template <int M, int Cap>
DEVMESH_HOST_DEVICE constexpr int sizes_that_would_cut(const dim_layout<M>& l, long long below, int (&out)[Cap]) {
  const auto p = place_values_of(l);
  const long long room = p.size() / below;
  int n = 0;
  long long root = 1;  // the divisors k <= sqrt(room) ascending, then room / k for those k descending
  while ((root + 1) * (root + 1) <= room) ++root;
  for (long long k = 1; k <= root && n < Cap; ++k)
    if (room % k == 0 && p.can_cut_at(below * k)) out[n++] = static_cast<int>(k);
  for (long long k = root; k >= 1 && n < Cap; --k)
    if (room % k == 0 && room / k != k && p.can_cut_at(below * (room / k))) out[n++] = static_cast<int>(room / k);
  return n;
}

/// The stride at place value `low` of a dim (p: its coalesced place values, l: its layout):
/// what a size-1 piece there keeps, as a reshape keeps a size-1 dim's stride.
template <int M>
DEVMESH_HOST_DEVICE constexpr int stride_at(const place_values<M>& p, long long low, const dim_layout<M>& l) {
  for (int u = p.count - 1; u >= 0; --u)
    if (p.low[u] <= low) return static_cast<int>(p.stride[u] * (low / p.low[u]));
  return l.count > 0 ? l.stride[l.count - 1] : 1;
}

/// What a refused cut's message says (throw_cut_error).
struct cut_error_text {
  std::string_view new_dim;  // the new dim whose end cannot be cut
  int size;                  // its size
  std::string_view dim;      // the dim being split
  std::string_view inside;   // the dim of the mesh the end falls inside (dim itself if none)
  int inside_size;
  const int* shape;          // dim's layout
  const int* stride;
  int modes;
  long long below;           // the product of the new sizes after new_dim
  const int* work;           // the sizes new_dim could have instead
  int nwork;
};

/// PyTorch cannot cut the dim where a new dim's size puts its end: mesh_error naming the new
/// dim, its size, the dim it falls inside and the sizes that would work. Built once here.
[[noreturn]] inline void throw_cut_error(const cut_error_text& t) {
  message m;
  m << DEVMESH_MSG_UNFLATTEN_SPLIT ": new dim '" << t.new_dim << "' of size " << t.size << " ends inside dim '"
    << t.inside << "' (size " << t.inside_size << ")";
  if (t.inside != t.dim) m << " of '" << t.dim << "'";
  m << " (layout (";
  for (int i = 0; i < t.modes; ++i) m << (i ? ", " : "") << t.shape[i];
  m << "):(";
  for (int i = 0; i < t.modes; ++i) m << (i ? ", " : "") << t.stride[i];
  m << ")); with the new dims after it as they are (" << t.below << (t.below == 1 ? " rank" : " ranks")
    << "), sizes of '" << t.new_dim << "' that can be cut:";
  for (int i = 0; i < t.nwork; ++i) m << (i ? ", " : " ") << t.work[i];
  throw_mesh_error(m);
}

}  // namespace devmesh::detail
