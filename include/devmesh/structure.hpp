// devmesh/structure.hpp: the shape algebra behind every mesh, as constexpr values.
//
// A mesh lives in the rank space of its root mesh, a row-major mixed-radix number.
// That number is cut into *atoms*: contiguous digit groups, each with a size and a
// stride (the product of the sizes of the atoms after it). A root mesh has one atom per
// dim; unflatten cuts atoms into finer ones. Every dim of a mesh is an ordered list of
// atoms (most significant first): a plain dim has one, a flattened dim several (possibly
// non-adjacent, in any order). This is CuTe's (shape, stride) layout restricted to
// digit-aligned modes, which is what makes every query O(ndim):
//   digit of rank r in atom a   = (r / stride[a]) % size[a]
//   coordinate of r along dim d = the digits of d's atoms, read row-major
//   base of r's group over dims S = r minus the digits of S's atoms times their strides
//
// A structure holds *which* atoms each dim has; the atom sizes live next to it, as
// constants for static sizes or as run-time values for dynamic ones. Dims [0, nprimary)
// are the mesh's dims; the rest are aliases (flattened names, or dims kept reachable
// after a slice) that can be named but do not count in ndim, size() or coordinate().
#pragma once
#include <climits>

#include "config.hpp"

namespace devmesh::detail {

inline constexpr int scratch_capacity = 64;  // atoms, and dims (aliases included)
inline constexpr int scratch_entries = 512;  // atoms of all dims together

enum error_code : int {
  ok = 0,
  overlap = 1,        // error_a, error_b: two requested dims share an atom
  not_divisible = 2,  // error_a: new dim, error_b: its size
  needs_static = 3,   // a multi-atom dim split with dynamic sizes
  dims_full = 4,      // error_a: the dims needed (> scratch_capacity)
  atoms_full = 5,     // error_a: the atoms needed (> scratch_capacity)
  entries_full = 6,   // error_a: the atom entries needed (> scratch_entries)
};

/// The product of `sizes` (dynamic_size counted as 1), saturated at INT_MAX + 1: it never
/// overflows, and a result > INT_MAX means "more ranks than an int can count".
constexpr long long saturating_product(const int* sizes, int n) {
  long long p = 1;
  for (int i = 0; i < n; ++i) {
    if (sizes[i] != dynamic_size) p *= sizes[i];
    if (p > INT_MAX || p < -INT_MAX) return INT_MAX + 1LL;
  }
  return p;
}

/// A structure under construction: fixed capacity, compacted into `structure` after.
/// Every capacity overflow is recorded in `error` (the first one wins) and the addition is
/// skipped, so the arrays are never overrun and the caller reports it as a diagnostic.
struct scratch {
  int natoms = 0;
  int atom_size[scratch_capacity]{};  // static size, or dynamic_size
  int ndims = 0;
  int nprimary = 0;
  int dim_first[scratch_capacity]{};
  int dim_count[scratch_capacity]{};
  int nentries = 0;
  int dim_atoms[scratch_entries]{};
  // Where each dim came from: >= 0 an index into the parent's dims, < 0 new dim -(k+1).
  int source[scratch_capacity]{};
  // Diagnostics: 0 if fine, else an error code with two values (dims or sizes).
  int error = 0;
  int error_a = 0;
  int error_b = 0;

  /// True (and recorded, if first) if `needed` exceeds `limit`.
  constexpr bool full(error_code what, int needed, int limit) {
    if (needed <= limit) return false;
    if (error == ok) {
      error = what;
      error_a = needed;
    }
    return true;
  }

  constexpr void add_dim(const int* atoms, int count, int src) {
    if (full(dims_full, ndims + 1, scratch_capacity) || full(entries_full, nentries + count, scratch_entries)) return;
    dim_first[ndims] = nentries;
    dim_count[ndims] = count;
    source[ndims] = src;
    for (int i = 0; i < count; ++i) dim_atoms[nentries++] = atoms[i];
    ++ndims;
  }
};

/// The compacted, structural form used as a template argument.
template <int A, int D, int T>
struct structure {
  int atom_size[A];
  int dim_first[D];
  int dim_count[D];
  int dim_atoms[T];
  int source[D];
  int nprimary;
  static constexpr int natoms = A;
  static constexpr int ndims = D;
  static constexpr int nentries = T;
};

template <int A, int D, int T>
constexpr structure<A, D, T> compact(const scratch& s) {
  structure<A, D, T> r{};
  for (int i = 0; i < A; ++i) r.atom_size[i] = s.atom_size[i];
  for (int i = 0; i < D; ++i) {
    r.dim_first[i] = s.dim_first[i];
    r.dim_count[i] = s.dim_count[i];
    r.source[i] = s.source[i];
  }
  for (int i = 0; i < T; ++i) r.dim_atoms[i] = s.dim_atoms[i];
  r.nprimary = s.nprimary;
  return r;
}

template <int A, int D, int T>
constexpr scratch expand(const structure<A, D, T>& s) {
  scratch r{};
  r.natoms = A;
  for (int i = 0; i < A; ++i) r.atom_size[i] = s.atom_size[i];
  r.ndims = D;
  r.nprimary = s.nprimary;
  for (int i = 0; i < D; ++i) {
    r.dim_first[i] = s.dim_first[i];
    r.dim_count[i] = s.dim_count[i];
    r.source[i] = i;
  }
  r.nentries = T;
  for (int i = 0; i < T; ++i) r.dim_atoms[i] = s.dim_atoms[i];
  return r;
}

/// A root mesh: one atom per dim, in order.
template <int N>
constexpr scratch make_root(const int (&sizes)[N]) {
  scratch r{};
  r.natoms = N;
  for (int i = 0; i < N; ++i) {
    r.atom_size[i] = sizes[i];
    const int atom[1] = {i};
    r.add_dim(atom, 1, -(i + 1));
  }
  r.nprimary = N;
  return r;
}

constexpr bool has_atom(const scratch& s, int d, int atom) {
  for (int i = 0; i < s.dim_count[d]; ++i)
    if (s.dim_atoms[s.dim_first[d] + i] == atom) return true;
  return false;
}

constexpr bool dims_share_atom(const scratch& s, int d1, int d2) {
  for (int i = 0; i < s.dim_count[d1]; ++i)
    if (has_atom(s, d2, s.dim_atoms[s.dim_first[d1] + i])) return true;
  return false;
}

/// Appends to `out` every dim of `in` not yet in `out` whose atoms all lie in out's
/// primary dims: after a slice or flatten such dims stay nameable as aliases.
constexpr void keep_covered_aliases(const scratch& in, scratch& out, const bool* taken) {
  for (int d = 0; d < in.ndims; ++d) {
    if (taken[d]) continue;
    bool covered = true;
    for (int i = 0; i < in.dim_count[d] && covered; ++i) {
      const int atom = in.dim_atoms[in.dim_first[d] + i];
      bool found = false;
      for (int p = 0; p < out.nprimary && !found; ++p) found = has_atom(out, p, atom);
      covered = found;
    }
    if (covered)
      out.add_dim(in.dim_atoms + in.dim_first[d], in.dim_count[d], d);
  }
}

/// Records in out.error the first two dims of `sel` that share an atom (an alias named
/// together with one of its own dims), for the callers' diagnostics.
template <int K>
constexpr void record_overlap(const scratch& in, const int (&sel)[K], scratch& out) {
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < i; ++j)
      if (out.error == ok && dims_share_atom(in, sel[i], sel[j])) {
        out.error = overlap;
        out.error_a = sel[j];
        out.error_b = sel[i];
      }
}

/// slice: dims `sel` (any dims of `in`, any order) become the primary dims.
template <int K>
constexpr scratch slice(const scratch& in, const int (&sel)[K]) {
  scratch out{};
  out.natoms = in.natoms;
  for (int i = 0; i < in.natoms; ++i) out.atom_size[i] = in.atom_size[i];
  record_overlap(in, sel, out);
  bool taken[scratch_capacity]{};
  for (int i = 0; i < K; ++i) {
    out.add_dim(in.dim_atoms + in.dim_first[sel[i]], in.dim_count[sel[i]], sel[i]);
    taken[sel[i]] = true;
  }
  out.nprimary = K;
  keep_covered_aliases(in, out, taken);
  return out;
}

/// flatten into an alias: `in` plus one new dim made of the atoms of `sel`, in order.
template <int K>
constexpr scratch flatten_alias(const scratch& in, const int (&sel)[K]) {
  scratch out = in;
  for (int d = 0; d < in.ndims; ++d) out.source[d] = d;
  record_overlap(in, sel, out);
  int atoms[scratch_capacity]{};
  int n = 0;
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < in.dim_count[sel[i]] && n < scratch_capacity; ++j)  // n < capacity unless overlapping
      atoms[n++] = in.dim_atoms[in.dim_first[sel[i]] + j];
  out.add_dim(atoms, n, -1);
  return out;
}

/// flatten the whole mesh (PyTorch _flatten): one primary dim made of all primary atoms;
/// the former dims stay reachable as aliases.
constexpr scratch flatten_all(const scratch& in) {
  scratch out{};
  out.natoms = in.natoms;
  for (int i = 0; i < in.natoms; ++i) out.atom_size[i] = in.atom_size[i];
  int atoms[scratch_capacity]{};
  int n = 0;
  for (int d = 0; d < in.nprimary; ++d)
    for (int j = 0; j < in.dim_count[d]; ++j) atoms[n++] = in.dim_atoms[in.dim_first[d] + j];
  out.add_dim(atoms, n, -1);
  out.nprimary = 1;
  bool taken[scratch_capacity]{};
  keep_covered_aliases(in, out, taken);
  return out;
}

/// Replaces atom `a` of `s` by consecutive atoms of the given sizes (most significant
/// first), in the atom list and in every dim that uses it. Strides stay row-major.
constexpr scratch split_atom(const scratch& s, int a, const int* sizes, int k) {
  scratch out{};
  if (out.full(atoms_full, s.natoms + k - 1, scratch_capacity)) return out;
  out.natoms = 0;
  for (int i = 0; i < s.natoms; ++i) {
    if (i == a)
      for (int j = 0; j < k; ++j) out.atom_size[out.natoms++] = sizes[j];
    else
      out.atom_size[out.natoms++] = s.atom_size[i];
  }
  out.nprimary = s.nprimary;
  for (int d = 0; d < s.ndims; ++d) {
    int atoms[scratch_capacity]{};
    int n = 0;
    for (int i = 0; i < s.dim_count[d]; ++i) {
      const int old = s.dim_atoms[s.dim_first[d] + i];
      if (old == a)
        for (int j = 0; j < k; ++j) atoms[n++] = a + j;
      else
        atoms[n++] = old < a ? old : old + k - 1;
    }
    out.add_dim(atoms, n, s.source[d]);
  }
  return out;
}

/// unflatten dim `d` into K new dims of the given sizes (most significant first). When
/// d is one atom, that atom is cut into K atoms (one size may be dynamic_size, inferred
/// at run time). When d is flattened from several atoms, all sizes must be static and
/// every boundary between new dims must fall on a digit boundary of d's atoms, or cut an
/// atom into divisible parts. The new dims take d's place; other dims that used a cut
/// atom now use all its parts, so they keep their ranks.
template <int K>
constexpr scratch unflatten(const scratch& in, int d, const int (&sizes)[K]) {
  scratch s = in;
  for (int i = 0; i < s.ndims; ++i) s.source[i] = i;
  int new_atoms[K][scratch_capacity]{};
  int new_count[K]{};
  const int m = in.dim_count[d];
  const int* dim_atoms = in.dim_atoms + in.dim_first[d];
  if (m == 1) {
    const int a = dim_atoms[0];
    s = split_atom(s, a, sizes, K);
    if (s.error != ok) return s;
    for (int j = 0; j < K; ++j) {
      new_atoms[j][0] = a + j;
      new_count[j] = 1;
    }
  } else {
    for (int j = 0; j < K; ++j)
      if (sizes[j] == dynamic_size) s.error = needs_static;
    for (int i = 0; i < m; ++i)
      if (in.atom_size[dim_atoms[i]] == dynamic_size) s.error = needs_static;
    if (s.error != ok) return s;
    // Digit ranges, counted from the least significant end of the dim: new dim j spans
    // (low_new[j], low_new[j] * sizes[j]], atom i spans (low_atom[i], low_atom[i] * size].
    long long low_new[K]{};
    long long low = 1;
    for (int j = K - 1; j >= 0; --j) {
      low_new[j] = low;
      low *= sizes[j];
    }
    long long low_atom[scratch_capacity]{};
    low = 1;
    for (int i = m - 1; i >= 0; --i) {
      low_atom[i] = low;
      low *= in.atom_size[dim_atoms[i]];
    }
    // Cut each atom at the new-dim boundaries strictly inside it.
    int pieces[scratch_capacity][scratch_capacity]{};  // per atom of d: piece sizes, high first
    int npieces[scratch_capacity]{};
    for (int i = 0; i < m; ++i) {
      const long long lo = low_atom[i], hi = lo * in.atom_size[dim_atoms[i]];
      long long prev = hi;
      for (int j = 0; j < K; ++j) {  // boundaries low_new[j], descending with j
        const long long b = low_new[j];
        // b == prev: a new dim of size 1 ends where the previous one did; no empty piece.
        if (b > lo && b < hi && b != prev) {
          if (prev % b != 0 || b % lo != 0) {
            s.error = not_divisible;
            s.error_a = j;
            s.error_b = sizes[j];
            return s;
          }
          pieces[i][npieces[i]++] = static_cast<int>(prev / b);
          prev = b;
        }
      }
      pieces[i][npieces[i]++] = static_cast<int>(prev / lo);
    }
    // Also every atom boundary inside a new dim must divide evenly (digit alignment).
    for (int j = 0; j < K; ++j) {
      const long long lo = low_new[j], hi = lo * sizes[j];
      for (int i = 0; i < m; ++i) {
        const long long b = low_atom[i];
        if (b > lo && b < hi && (b % lo != 0 || hi % b != 0)) {
          s.error = not_divisible;
          s.error_a = j;
          s.error_b = sizes[j];
          return s;
        }
      }
    }
    // Apply the cuts, highest atom index first so that lower indices stay valid.
    int order[scratch_capacity]{};
    for (int i = 0; i < m; ++i) order[i] = i;
    for (int i = 0; i < m; ++i)
      for (int k = i + 1; k < m; ++k)
        if (dim_atoms[order[k]] > dim_atoms[order[i]]) {
          const int t = order[i];
          order[i] = order[k];
          order[k] = t;
        }
    for (int q = 0; q < m; ++q) {
      const int i = order[q];
      if (npieces[i] > 1) s = split_atom(s, dim_atoms[i], pieces[i], npieces[i]);
      if (s.error != ok) return s;
    }
    // New index of the first piece of each atom of d.
    int first_piece[scratch_capacity]{};
    for (int i = 0; i < m; ++i) {
      int shift = 0;
      for (int k = 0; k < m; ++k)
        if (dim_atoms[k] < dim_atoms[i]) shift += npieces[k] - 1;
      first_piece[i] = dim_atoms[i] + shift;
    }
    // Hand out the pieces, in d's order, to the new dim whose digit range holds them.
    for (int i = 0; i < m; ++i) {
      long long hi = low_atom[i] * in.atom_size[dim_atoms[i]];
      for (int p = 0; p < npieces[i]; ++p) {
        const long long lo = hi / pieces[i][p];
        // The first (most significant) new dim whose range holds the piece takes it: a
        // piece of size 1 sits on a boundary and would otherwise go to two dims.
        for (int j = 0; j < K; ++j)
          if (lo >= low_new[j] && hi <= low_new[j] * sizes[j]) {
            new_atoms[j][new_count[j]++] = first_piece[i] + p;
            break;
          }
        hi = lo;
      }
    }
  }
  scratch out{};
  out.natoms = s.natoms;
  for (int i = 0; i < s.natoms; ++i) out.atom_size[i] = s.atom_size[i];
  for (int i = 0; i < s.ndims; ++i) {
    if (i == d) {
      for (int j = 0; j < K; ++j) out.add_dim(new_atoms[j], new_count[j], -(j + 1));
    } else {
      out.add_dim(s.dim_atoms + s.dim_first[i], s.dim_count[i], i);
    }
  }
  out.nprimary = d < in.nprimary ? in.nprimary + K - 1 : in.nprimary;
  return out;
}

}  // namespace devmesh::detail
