// bench/compile/inttuple/struct_layout.hpp: the same mesh layout as hana_layout.hpp, in the
// style of devmesh's layout.hpp / algebra.hpp, for the compile-cost comparison of README.md
// (not part of devmesh).
//
// A layout is one constexpr struct used as a class-type template argument: per mode a shape
// and a stride, each a static value (> 0) or a dynamic slot (< 0: slot -1 - v of the mesh
// object's run-time values); first[] says which modes belong to which dim. Derivations are
// constexpr functions from layout to layout; a value a derivation computes from dynamic ones
// (a row-major stride past a dynamic size, an unflatten's outer stride) gets a fresh slot
// with a recipe (a product of two values) that the derived mesh evaluates at run time.
// Compared with devmesh this leaves out: names, aliases, diagnostics, slot renumbering (a
// derived mesh keeps its parent's slots, used or not), unflatten of multi-mode dims and of
// dynamic sizes.
#pragma once
#include <utility>

namespace sl {

template <int D, int M>
struct layout {
  int shape[M > 0 ? M : 1]{};
  int stride[M > 0 ? M : 1]{};
  int first[D + 1]{};  // the modes of dim d are [first[d], first[d + 1])
  int nslots = 0;      // the mesh object's run-time values
  static constexpr int ndims = D;
  static constexpr int nmodes = M;
  constexpr int count(int d) const { return first[d + 1] - first[d]; }
};
constexpr int slot(int k) { return -1 - k; }

/// A derivation's result: the layout, and the recipes of the slots it adds: slot
/// nbase + k is the product of values a[k] and b[k] (static, or earlier slots).
template <int D, int M, int S>
struct derived {
  layout<D, M> l{};
  int nbase = 0;
  int nnew = 0;
  int a[S > 0 ? S : 1]{};
  int b[S > 0 ? S : 1]{};
  /// a * b: static if both are; otherwise a new slot with that recipe.
  constexpr int mul(int x, int y) {
    if (x > 0 && y > 0) return x * y;
    if (x == 1 || y == 1) return x == 1 ? y : x;
    a[nnew] = x;
    b[nnew] = y;
    return slot(nbase + nnew++);
  }
};

template <int N>
struct values {
  int v[N]{};
};
template <>
struct values<0> {};

/// A mesh: a layout in the type, its dynamic values in the object (none: an empty object).
template <auto L>
struct mesh : values<L.nslots> {
  static constexpr auto layout = L;
  constexpr int val(int x) const {
    if constexpr (L.nslots == 0)
      return x;
    else
      return x > 0 ? x : this->v[-1 - x];
  }
  constexpr int shape(int m) const { return val(L.shape[m]); }
  constexpr int stride(int m) const { return val(L.stride[m]); }
};

/// The mesh of derivation R of mesh m: m's values, then R's new slots.
template <auto R, class Mesh>
constexpr auto derive(const Mesh& m) {
  mesh<R.l> out{};
  if constexpr (R.l.nslots > 0) {
    for (int k = 0; k < R.nbase; ++k) out.v[k] = m.v[k];
    for (int k = 0; k < R.nnew; ++k) out.v[R.nbase + k] = out.val(R.a[k]) * out.val(R.b[k]);
  }
  return out;
}

template <int N>
struct ints {
  int v[N > 0 ? N : 1]{};
};
template <int I, int N>
constexpr int get(const ints<N>& x) {
  return x.v[I];
}
template <class... I>
constexpr ints<sizeof...(I)> make_coord(I... i) {
  return {{i...}};
}
struct split_args {
  int color, key;
};

// ---- a mesh -------------------------------------------------------------------------------

/// The root layout of sizes S... (> 0 static, -1 dynamic: the next input slot).
template <int... S>
constexpr auto root_layout() {
  constexpr int N = sizeof...(S);
  constexpr int sizes[] = {S...};
  constexpr int inputs = ((S < 0 ? 1 : 0) + ... + 0);
  derived<N, N, N> r{};
  r.nbase = inputs;
  for (int i = 0, k = 0; i < N; ++i) r.l.shape[i] = sizes[i] < 0 ? slot(k++) : sizes[i];
  int next = 1;
  for (int i = N - 1; i >= 0; --i) {
    r.l.stride[i] = next;
    if (i > 0) next = r.mul(next, r.l.shape[i]);
  }
  for (int i = 0; i <= N; ++i) r.l.first[i] = i;
  r.l.nslots = inputs + r.nnew;
  return r;
}
/// A root mesh of sizes S... (-1: dynamic, given in order as arguments).
template <int... S, class... I>
constexpr auto make_root(I... dynamic) {
  constexpr auto R = root_layout<S...>();
  static_assert(sizeof...(I) == R.nbase, "make_root: one argument per dynamic size");
  mesh<R.l> out{};
  if constexpr (R.l.nslots > 0) {
    int k = 0;
    ((out.v[k++] = dynamic), ...);
    for (int j = 0; j < R.nnew; ++j) out.v[R.nbase + j] = out.val(R.a[j]) * out.val(R.b[j]);
  }
  return out;
}

/// Number of ranks of the mesh.
template <class Mesh>
constexpr int size(const Mesh& m) {
  int n = 1;
  for (int i = 0; i < Mesh::layout.nmodes; ++i) n *= m.shape(i);
  return n;
}
/// Size of dim D.
template <int D, class Mesh>
constexpr int size(const Mesh& m) {
  int n = 1;
  for (int i = Mesh::layout.first[D]; i < Mesh::layout.first[D + 1]; ++i) n *= m.shape(i);
  return n;
}
/// Coordinate of rank r along dim D: its modes' digits (r / s) % n read row-major.
template <int D, class Mesh>
constexpr int coordinate(const Mesh& m, int r) {
  int c = 0;
  for (int i = Mesh::layout.first[D]; i < Mesh::layout.first[D + 1]; ++i) c = c * m.shape(i) + (r / m.stride(i)) % m.shape(i);
  return c;
}
template <class Mesh, int... D>
constexpr ints<sizeof...(D)> coordinates_of(const Mesh& m, int r, std::integer_sequence<int, D...>) {
  return {{coordinate<D>(m, r)...}};
}
/// Coordinates of rank r along every dim.
template <class Mesh>
constexpr auto coordinates(const Mesh& m, int r) {
  return coordinates_of(m, r, std::make_integer_sequence<int, Mesh::layout.ndims>{});
}
/// Rank at coordinate c (one per dim) in the submesh of rank 0: the inner product.
template <class Mesh, int N>
constexpr int rank_at(const Mesh& m, const ints<N>& c) {
  constexpr auto L = Mesh::layout;
  int r = 0;
  for (int d = 0; d < N; ++d) {
    int rest = c.v[d];
    for (int i = L.first[d + 1] - 1; i >= L.first[d]; --i) {
      r += (rest % m.shape(i)) * m.stride(i);
      rest /= m.shape(i);
    }
  }
  return r;
}
/// r minus its digits in modes [b, e): the first rank of r's group over them.
template <class Mesh>
constexpr int group_base(const Mesh& m, int r, int b, int e) {
  int base = r;
  for (int i = b; i < e; ++i) base -= ((r / m.stride(i)) % m.shape(i)) * m.stride(i);
  return base;
}
/// Offset of index i over modes [b, e), read row-major: the layout as a function.
template <class Mesh>
constexpr int offset_over(const Mesh& m, int i, int b, int e) {
  int off = 0;
  for (int k = e - 1; k >= b; --k) {
    off += (i % m.shape(k)) * m.stride(k);
    i /= m.shape(k);
  }
  return off;
}
/// The i-th rank of the group over all of the mesh's dims that contains rank r.
template <class Mesh>
constexpr int group_at(const Mesh& m, int r, int i) {
  constexpr int n = Mesh::layout.nmodes;
  return group_base(m, r, 0, n) + offset_over(m, i, 0, n);
}
/// (color, key) of rank r for the groups of dim D: first rank of r's group, r's index in it.
template <int D, class Mesh>
constexpr split_args split(const Mesh& m, int r) {
  return {group_base(m, r, Mesh::layout.first[D], Mesh::layout.first[D + 1]), coordinate<D>(m, r)};
}
/// (color, key) of rank r for the groups over all of the mesh's dims.
template <class Mesh>
constexpr split_args split_all(const Mesh& m, int r) {
  constexpr int n = Mesh::layout.nmodes;
  int key = 0;
  for (int i = 0; i < n; ++i) key = key * m.shape(i) + (r / m.stride(i)) % m.shape(i);
  return {group_base(m, r, 0, n), key};
}
/// Dim D's layout as a function: offset of its i-th rank from its group's first rank.
template <int D, class Mesh>
constexpr int offset(const Mesh& m, int i) {
  return offset_over(m, i, Mesh::layout.first[D], Mesh::layout.first[D + 1]);
}

// ---- the algebra ----------------------------------------------------------------------------

template <auto L, int... I>
constexpr auto slice_layout() {
  constexpr int sel[] = {I...};
  derived<sizeof...(I), (L.count(I) + ... + 0), 0> r{};
  r.nbase = L.nslots;
  int n = 0;
  for (int j = 0; j < static_cast<int>(sizeof...(I)); ++j) {
    for (int i = L.first[sel[j]]; i < L.first[sel[j] + 1]; ++i, ++n) {
      r.l.shape[n] = L.shape[i];
      r.l.stride[n] = L.stride[i];
    }
    r.l.first[j + 1] = n;
  }
  r.l.nslots = L.nslots;
  return r;
}
/// Dims I... (any order) as a new mesh.
template <int... I, class Mesh>
constexpr auto slice(const Mesh& m) {
  return derive<slice_layout<Mesh::layout, I...>()>(m);
}

template <auto L, int... I>
constexpr auto flatten_layout() {
  constexpr int sel[] = {I...};
  constexpr int D = L.ndims;
  derived<D + 1, L.nmodes + (L.count(I) + ... + 0), 0> r{};
  r.nbase = L.nslots;
  for (int i = 0; i < L.nmodes; ++i) {
    r.l.shape[i] = L.shape[i];
    r.l.stride[i] = L.stride[i];
  }
  for (int d = 0; d <= D; ++d) r.l.first[d] = L.first[d];
  int n = L.nmodes;
  for (int j = 0; j < static_cast<int>(sizeof...(I)); ++j)
    for (int i = L.first[sel[j]]; i < L.first[sel[j] + 1]; ++i, ++n) {
      r.l.shape[n] = L.shape[i];
      r.l.stride[n] = L.stride[i];
    }
  r.l.first[D + 1] = n;
  r.l.nslots = L.nslots;
  return r;
}
/// The mesh plus one dim made of the modes of dims I... (in that order).
template <int... I, class Mesh>
constexpr auto flatten(const Mesh& m) {
  return derive<flatten_layout<Mesh::layout, I...>()>(m);
}

template <auto L, int D, int A, int B>
constexpr auto unflatten_layout() {
  static_assert(L.count(D) == 1 && L.shape[L.first[D]] > 0, "unflatten: the dim must be one static mode");
  static_assert(L.shape[L.first[D]] == A * B, "unflatten: the sizes must multiply to the dim's size");
  derived<L.ndims + 1, L.nmodes + 1, 1> r{};
  r.nbase = L.nslots;
  const int cut = L.first[D];
  for (int i = 0, n = 0; i < L.nmodes; ++i, ++n) {
    if (i == cut) {
      r.l.shape[n] = A;
      r.l.stride[n] = r.mul(L.stride[i], B);
      ++n;
      r.l.shape[n] = B;
      r.l.stride[n] = L.stride[i];
    } else {
      r.l.shape[n] = L.shape[i];
      r.l.stride[n] = L.stride[i];
    }
  }
  for (int d = 0; d <= L.ndims; ++d) r.l.first[d + (d > D ? 1 : 0)] = L.first[d] + (d > D ? 1 : 0);
  r.l.first[D + 1] = cut + 1;
  r.l.nslots = L.nslots + r.nnew;
  return r;
}
/// Dim D, one static mode (A*B : s), split in its place into dims (A : s*B) and (B : s).
template <int D, int A, int B, class Mesh>
constexpr auto unflatten(const Mesh& m) {
  return derive<unflatten_layout<Mesh::layout, D, A, B>()>(m);
}

/// CuTe's coalesce of dim D's modes into at most M modes; count: how many.
template <int M>
struct coalesced {
  int count = 0;
  int shape[M > 0 ? M : 1]{};
  int stride[M > 0 ? M : 1]{};
};
template <auto L, int D>
constexpr auto coalesce_modes() {
  coalesced<L.count(D)> out{};
  for (int i = L.first[D]; i < L.first[D + 1]; ++i) {
    const int n = L.shape[i], s = L.stride[i];
    if (n == 1) continue;
    const int last = out.count - 1;
    // Merged only when static (as in CuTe: a run-time value cannot change the type).
    if (last >= 0 && n > 0 && s > 0 && out.stride[last] > 0 && out.shape[last] > 0 && out.stride[last] == n * s) {
      out.shape[last] *= n;
      out.stride[last] = s;
    } else {
      out.shape[out.count] = n;
      out.stride[out.count++] = s;
    }
  }
  return out;
}
template <auto L, int D>
constexpr auto coalesce_layout() {
  constexpr auto c = coalesce_modes<L, D>();
  derived<1, c.count, 0> r{};
  r.nbase = L.nslots;
  for (int i = 0; i < c.count; ++i) {
    r.l.shape[i] = c.shape[i];
    r.l.stride[i] = c.stride[i];
  }
  r.l.first[1] = c.count;
  r.l.nslots = L.nslots;
  return r;
}
/// CuTe's coalesce of dim D's modes, as a 1-dim mesh: static size-1 modes dropped, a mode
/// merged into the previous one when both are static and contiguous.
template <int D, class Mesh>
constexpr auto coalesce(const Mesh& m) {
  return derive<coalesce_layout<Mesh::layout, D>()>(m);
}

}  // namespace sl
