// devmesh/core/algebra.hpp: the layout algebra, as constexpr functions over layout values.
//
//   root       one mode per dim, row-major strides
//   slice      selects dims' layouts (any dims, any order)
//   flatten    concatenates dims' modes into one dim
//   unflatten  splits a dim's modes into several dims
//   concatenate  the dims of two meshes of one root, side by side
//
// Each operation writes a draft (room bounded by its input, no fixed capacity) that
// make_exact then trims and renumbers. A value the operation derives (a stride, an
// inferred size) is static when its inputs are; otherwise it gets a fresh slot with a
// recipe (a product or a quotient of two values) that the mesh evaluates at run time.
#pragma once
#include "cut.hpp"
#include "layout.hpp"
#include "sizes.hpp"

namespace devmesh::detail {

enum recipe_op : int { input = 0, times = 1, divided = 2 };

/// A layout under construction, with room for D dims, M modes and S slots.
template <int D, int M, int S>
struct draft {
  layout<D, M> l{};
  int nd = 0;
  int nm = 0;
  int slots = 0;
  int source[D > 0 ? D : 1]{};  // per dim: >= 0 the input dim it copies, < 0 new dim -(k+1)
  int op[S > 0 ? S : 1]{};      // per slot: input, or the recipe that computes it
  int arg_a[S > 0 ? S : 1]{};
  int arg_b[S > 0 ? S : 1]{};

  constexpr void add_mode(int shape, int stride) {
    l.shape[nm] = shape;
    l.stride[nm] = stride;
    ++nm;
  }
  constexpr void end_dim(int src) {
    source[nd] = src;
    l.first[++nd] = nm;
  }
  template <int D2, int M2>
  constexpr void copy_dim(const layout<D2, M2>& in, int d) {
    for (int m = in.first[d]; m < in.first[d + 1]; ++m) add_mode(in.shape[m], in.stride[m]);
    end_dim(d);
  }
  constexpr int input() { return dynamic_slot(slots++); }
  constexpr int recipe(recipe_op o, int a, int b) {
    op[slots] = o;
    arg_a[slots] = a;
    arg_b[slots] = b;
    return dynamic_slot(slots++);
  }
  constexpr int mul(int a, int b) {
    if (a > 0 && b > 0) return a * b;
    if (a == 1 || b == 1) return a == 1 ? b : a;
    return recipe(times, a, b);
  }
  constexpr int div(int a, int b) {
    if (a > 0 && b > 0) return a / b;
    return b == 1 ? a : recipe(divided, a, b);
  }
};

/// A draft that starts from layout `in`: its slots are the inputs' values.
template <int D, int M, int S, int D0, int M0>
constexpr draft<D, M, S> draft_from(const layout<D0, M0>& in) {
  draft<D, M, S> r{};
  for (int k = 0; k < in.ndynamic; ++k) (void)r.input();
  r.l.root = in.root;
  r.l.nprimary = in.nprimary;
  return r;
}

/// A draft made exact: its layout with dynamic slots renumbered in order of first use
/// (root, then each mode's shape and stride), so that equal layouts are equal values.
/// from[k]: the draft slot that slot k reads; source: the draft's dim sources.
template <int D, int M, int Slots>
struct exact {
  layout<D, M> value{};
  int from[Slots > 0 ? Slots : 1]{};
  int source[D > 0 ? D : 1]{};
};

template <int D, int M, int Slots, int DD, int DM, int DS>
constexpr exact<D, M, Slots> make_exact(const draft<DD, DM, DS>& in) {
  exact<D, M, Slots> out{};
  int renamed[Slots > 0 ? Slots : 1]{};  // draft slot -> exact slot + 1 (0: not yet used)
  int n = 0;
  auto rename = [&](int v) {
    if (v > 0) return v;
    const int k = -1 - v;
    if (renamed[k] == 0) {
      out.from[n] = k;
      renamed[k] = ++n;
    }
    return dynamic_slot(renamed[k] - 1);
  };
  out.value.root = rename(in.l.root);
  for (int m = 0; m < M; ++m) {
    out.value.shape[m] = rename(in.l.shape[m]);
    out.value.stride[m] = rename(in.l.stride[m]);
  }
  for (int d = 0; d <= D; ++d) out.value.first[d] = in.l.first[d];
  for (int d = 0; d < D; ++d) out.source[d] = in.source[d];
  out.value.nprimary = in.l.nprimary;
  out.value.ndynamic = n;
  return out;
}

/// An operation's result, computed once per operation type (Op::draft() returns its draft).
/// Keyed by a type, not by the draft value: a large value as a template argument would be
/// compared and mangled at every use.
template <class Op>
struct derivation {
  static constexpr auto draft = Op::draft();
  static constexpr auto exact = make_exact<draft.nd, draft.nm, draft.slots>(draft);
  /// True if every slot is an input (slice, flatten): the values are copies, no recipe.
  static constexpr bool copies_only = [] {
    for (int k = 0; k < draft.slots; ++k)
      if (draft.op[k] != input) return false;
    return true;
  }();
};

// ---- the operations ---------------------------------------------------------------------

/// A root mesh of the given sizes (static, or dynamic_size: the k-th dynamic size is
/// input slot k): one mode per dim.
template <int N>
constexpr draft<N, N, 2 * N + 1> root(const int (&sizes)[N]) {
  draft<N, N, 2 * N + 1> r{};
  int shape[N]{};
  for (int i = 0; i < N; ++i) shape[i] = sizes[i] == dynamic_size ? r.input() : sizes[i];
  int stride[N]{};
  int next = 1;
  for (int i = N - 1; i >= 0; --i) {
    stride[i] = next;
    next = r.mul(next, shape[i]);
  }
  r.l.root = next;
  for (int i = 0; i < N; ++i) {
    r.add_mode(shape[i], stride[i]);
    r.end_dim(-(i + 1));
  }
  r.l.nprimary = N;
  return r;
}

/// concatenate: the mesh's dims of `a`, then those of `b` (a mesh of the same root), as one
/// mesh; b's slots follow a's, and aliases are dropped. b's dims are the new dims -(k+1).
/// Whether their modes are disjoint is the caller's check (on values).
template <int S, int DA, int MA, int DB, int MB>
constexpr draft<DA + DB, MA + MB, S> concatenate(const layout<DA, MA>& a, const layout<DB, MB>& b) {
  draft<DA + DB, MA + MB, S> r{};
  for (int k = 0; k < a.ndynamic + b.ndynamic; ++k) (void)r.input();
  r.l.root = a.root;
  const auto shifted = [&](int v) { return v > 0 ? v : v - a.ndynamic; };  // b's slot k: slot a.ndynamic + k
  for (int d = 0; d < a.nprimary; ++d) r.copy_dim(a, d);
  for (int d = 0; d < b.nprimary; ++d) {
    for (int m = b.first[d]; m < b.first[d + 1]; ++m) r.add_mode(shifted(b.shape[m]), shifted(b.stride[m]));
    r.end_dim(-(d + 1));
  }
  r.l.nprimary = a.nprimary + b.nprimary;
  return r;
}

/// The first pair of dims (a's, b's) of two static layouts of one root whose modes share
/// digits, or {-1, -1}.
template <int DA, int MA, int DB, int MB>
constexpr auto first_shared_digits(const layout<DA, MA>& a, const layout<DB, MB>& b) {
  struct pair_of_dims {
    int first = -1, second = -1;
  };
  for (int i = 0; i < a.nprimary; ++i)
    for (int j = 0; j < b.nprimary; ++j)
      for (int m = a.first[i]; m < a.first[i + 1]; ++m)
        for (int n = b.first[j]; n < b.first[j + 1]; ++n)
          if (modes_overlap(a.shape[m], a.stride[m], b.shape[n], b.stride[n])) return pair_of_dims{i, j};
  return pair_of_dims{};
}

/// Two dims, by index ({-1, -1}: none).
struct dim_pair {
  int first, second;
};

/// The first two dims of `sel` that share a mode, or {-1, -1}.
template <int D, int M, int K>
constexpr dim_pair first_overlap(const layout<D, M>& in, const int (&sel)[K]) {
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < i; ++j)
      if (in.overlap(sel[j], sel[i])) return {sel[j], sel[i]};
  return {-1, -1};
}

/// True if every mode of dim e of `in` is also a mode of a dim of `sel`.
template <int D, int M, int K>
constexpr bool covered(const layout<D, M>& in, int e, const int (&sel)[K]) {
  for (int m = in.first[e]; m < in.first[e + 1]; ++m) {
    bool found = false;
    for (int i = 0; i < K; ++i)
      for (int n = in.first[sel[i]]; n < in.first[sel[i] + 1]; ++n) found = found || in.equal_modes(m, n);
    if (!found) return false;
  }
  return true;
}

/// slice: dims `sel` (disjoint) become the mesh's dims, in that order. Every other dim
/// whose modes they cover stays nameable, as an alias.
template <int S, int D, int M, int K>
constexpr draft<D, M, S> slice(const layout<D, M>& in, const int (&sel)[K]) {
  auto r = draft_from<D, M, S>(in);
  for (int i = 0; i < K; ++i) r.copy_dim(in, sel[i]);
  for (int e = 0; e < D; ++e) {
    bool selected = false;
    for (int i = 0; i < K; ++i) selected = selected || sel[i] == e;
    if (!selected && covered(in, e, sel)) r.copy_dim(in, e);
  }
  r.l.nprimary = K;
  return r;
}

/// flatten into an alias: `in` plus one dim made of the modes of `sel`, in order.
template <int S, int D, int M, int K>
constexpr draft<D + 1, 2 * M, S> flatten_alias(const layout<D, M>& in, const int (&sel)[K]) {
  auto r = draft_from<D + 1, 2 * M, S>(in);
  for (int e = 0; e < D; ++e) r.copy_dim(in, e);
  for (int i = 0; i < K; ++i)
    for (int m = in.first[sel[i]]; m < in.first[sel[i] + 1]; ++m) r.add_mode(in.shape[m], in.stride[m]);
  r.end_dim(-1);
  return r;
}

/// flatten the whole mesh (PyTorch's _flatten): one dim made of the mesh's modes; every
/// former dim stays nameable, as an alias.
template <int S, int D, int M>
constexpr draft<D + 1, 2 * M, S> flatten_all(const layout<D, M>& in) {
  auto r = draft_from<D + 1, 2 * M, S>(in);
  for (int m = 0; m < in.first[in.nprimary]; ++m) r.add_mode(in.shape[m], in.stride[m]);
  r.end_dim(-1);
  for (int e = 0; e < D; ++e) r.copy_dim(in, e);
  r.l.nprimary = 1;
  return r;
}

/// How unflatten cuts the modes of the dim it splits: mode i of the dim becomes pieces
/// (most significant first), each owned by one new dim. A run of contiguous modes that the new
/// dims cut across their own boundaries is cut as one coalesced mode (PyTorch's rule,
/// cut.hpp): its pieces sit on the run's first mode and every mode of the run is `merged` (no
/// other dim can keep it). error_dim >= 0: the new dim whose upper end PyTorch cannot cut
/// (error_mode: the dim's mode it falls in; below: the product of the new sizes after it).
/// needs_values: whether the sizes cut the dim depends on values this layout does not hold.
template <int M, int K>
struct cut {
  int npieces[M > 0 ? M : 1]{};
  int shape[M > 0 ? M : 1][K]{};
  int stride[M > 0 ? M : 1][K]{};
  int owner[M > 0 ? M : 1][K]{};
  bool merged[M > 0 ? M : 1]{};
  long long unit_lo[M > 0 ? M : 1]{};  // on a merged run's top mode: the run's place values and lowest stride
  long long unit_hi[M > 0 ? M : 1]{};
  int unit_stride[M > 0 ? M : 1]{};
  int error_dim = -1;
  int error_mode = -1;
  long long below = 1;
  bool needs_values = false;
};

/// Cuts a one-mode dim (n : s) into parts of the given sizes; one may be dynamic_size, inferred.
template <int M, int K, class Draft>
constexpr cut<M, K> cut_one(Draft& r, int n, int s, const int (&sizes)[K]) {
  cut<M, K> c{};
  // The size resolver (sizes.hpp): the static sizes' product, and whether a static n is a
  // multiple of it. One that is not is refused at run time, before the layout is used; its
  // parts get fresh slots, so that they cannot pass for other modes meanwhile.
  const auto resolved = resolve_sizes({.given = sizes, .n = K, .total = n > 0 ? n : no_total});
  const int known = static_cast<int>(resolved.known);
  int part[K]{};
  const int inferred = resolved.fault == size_fault::not_multiple ? r.recipe(divided, n, known) : r.div(n, known);
  for (int j = 0; j < K; ++j) part[j] = sizes[j] == dynamic_size ? inferred : sizes[j];
  int stride = s;
  int t[K]{};
  for (int j = K - 1; j >= 0; --j) {
    t[j] = stride;
    stride = r.mul(stride, part[j]);
  }
  for (int j = 0; j < K; ++j) {  // size-1 parts too: a reshape keeps their strides
    c.shape[0][j] = part[j];
    c.stride[0][j] = t[j];
    c.owner[0][j] = j;
  }
  c.npieces[0] = K;
  return c;
}

/// The new dims' pieces of one unit of the dim being cut: a mode, or a run of modes cut as one,
/// spanning the dim's place values [lo, hi) with stride s; written on mode i of the cut.
template <int M, int K, class Draft>
constexpr void cut_unit(Draft& r, cut<M, K>& c, int i, long long lo, long long hi, int s, const long long* new_low) {
  long long top = hi;
  for (int j = 1; j <= K && top > lo; ++j) {
    const long long b = new_low[j] > lo ? new_low[j] : lo;  // bottom of new dim j - 1, in this unit
    if (b >= top) continue;                                 // new dim j - 1 lies above this unit
    c.shape[i][c.npieces[i]] = static_cast<int>(top / b);
    c.stride[i][c.npieces[i]] = r.mul(s, static_cast<int>(b / lo));
    c.owner[i][c.npieces[i]++] = j - 1;
    top = b;
  }
}

/// True if the new dims' ends (new_low[1, K)) inside (lo, hi) divide or are divided by `end`:
/// a mode boundary at `end` can stay where the new dims cut.
template <int K>
constexpr bool ends_agree(const long long* new_low, long long lo, long long hi, long long end) {
  for (int j = 1; j < K; ++j)
    if (lo < new_low[j] && new_low[j] < hi && new_low[j] % end != 0 && end % new_low[j] != 0) return false;
  return true;
}

/// Marks as merged the modes of every run of contiguous modes of dim d (static values) whose
/// inner boundaries the new dims cross, and notes each such run's place values and lowest
/// stride on its top mode: the run is cut as one coalesced mode.
template <int M, int K, int D0, int M0>
constexpr void merge_runs(cut<M, K>& c, const layout<D0, M0>& in, int d, const long long* new_low) {
  const int first = in.first[d];
  long long lo = 1;
  for (int i = in.count(d) - 1; i >= 0;) {  // a run: modes [top, i], size-1 modes inside it included
    if (in.shape[first + i] == 1) {
      --i;
      continue;
    }
    int top = i;
    long long hi = lo * in.shape[first + i];
    long long inner[M > 0 ? M : 1]{};  // the run's inner mode boundaries
    int ninner = 0;
    for (int k = i - 1; k >= 0; --k) {
      const int m = first + k;
      if (in.shape[m] == 1) continue;
      if (in.stride[m] != in.shape[first + top] * in.stride[first + top]) break;
      inner[ninner++] = hi;
      hi *= in.shape[m];
      top = k;
    }
    bool split = true;
    for (int q = 0; q < ninner; ++q) split = split && ends_agree<K>(new_low, lo, hi, inner[q]);
    for (int k = top; k <= i && !split; ++k) c.merged[k] = true;
    if (!split) c.unit_lo[top] = lo, c.unit_hi[top] = hi, c.unit_stride[top] = in.stride[first + i];
    lo = hi;
    i = top - 1;
  }
}

/// Cuts a dim of several modes at the new dims' ends (place values counted from the dim's
/// least significant end: new dim j spans [new_low[j + 1], new_low[j])). Where every new end
/// divides or is divided by every mode's end, each mode is cut on its own and every dim that
/// shares it gets its pieces. Otherwise (static values) PyTorch's coalesced rule decides:
/// runs of contiguous modes the new dims cross are cut as one mode (merged), or the sizes are
/// refused (error_dim). With dynamic values there: needs_values.
template <int M, int K, class Draft, int D0, int M0>
constexpr cut<M, K> cut_many(Draft& r, const layout<D0, M0>& in, int d, const int (&sizes)[K]) {
  cut<M, K> c{};
  long long new_low[K + 1]{};
  new_low[K] = 1;
  for (int j = K - 1; j >= 0; --j) new_low[j] = new_low[j + 1] * sizes[j];
  const int first = in.first[d], n = in.count(d);
  bool split = true;
  long long end = 1;
  for (int i = n - 1; i >= 0; --i) split = split && ends_agree<K>(new_low, 0, new_low[0], end *= in.shape[first + i]);
  if (!split) {
    dim_layout<M0> values{};  // the dim's modes as values: what PyTorch's rule reads
    for (int i = 0; i < n; ++i) {
      if (in.shape[first + i] < 0 || in.stride[first + i] < 0) {
        c.needs_values = true;
        return c;
      }
      values.shape[values.count] = in.shape[first + i];
      values.stride[values.count++] = in.stride[first + i];
    }
    const auto pytorch = cut_layout<M0, K>(values, sizes);
    if (pytorch.fault >= 0) {
      c.error_dim = pytorch.fault, c.error_mode = pytorch.fault_mode, c.below = pytorch.below;
      return c;
    }
    merge_runs(c, in, d, new_low);
  }
  long long lo = 1;  // mode i spans [lo, hi)
  for (int i = n - 1; i >= 0; --i) {
    const int m = first + i;
    const long long hi = lo * in.shape[m];
    if (hi == lo) {  // a size-1 mode: kept (for its stride) by the new dim at its place
      int j = 0;
      while (j < K - 1 && !(new_low[j + 1] <= lo && lo <= new_low[j])) ++j;
      c.shape[i][0] = 1;
      c.stride[i][0] = in.stride[m];
      c.owner[i][c.npieces[i]++] = j;
    } else if (!c.merged[i]) {
      cut_unit(r, c, i, lo, hi, in.stride[m], new_low);
    } else if (c.unit_hi[i] > 0) {  // the top of a merged run: the whole run as one mode
      cut_unit(r, c, i, c.unit_lo[i], c.unit_hi[i], c.unit_stride[i], new_low);
    }
    lo = hi;
  }
  return c;
}

/// Where the modes of dim e of `in` go after dim d's cut: -1 if e shares a mode of a merged
/// run (it cannot keep its modes), else the number of modes it gets.
template <int M, int K, int D0, int M0>
constexpr int modes_after_cut(const layout<D0, M0>& in, int d, int e, const cut<M, K>& c) {
  int n = 0;
  for (int m = in.first[e]; m < in.first[e + 1]; ++m) {
    int k = 1;
    for (int i = 0; i < in.count(d); ++i)
      if (in.same_mode(in.first[d] + i, m)) {
        if (c.merged[i]) return -1;
        k = c.npieces[i];
      }
    n += k;
  }
  return n;
}

/// The cut of mode m of `in` (from the dim being split, whose first mode is `first`)
/// replaces it in every dim that has it.
template <int M, int K, class Draft, int D0, int M0>
constexpr void add_cut_or_copy(Draft& r, const layout<D0, M0>& in, int d, int m, const cut<M, K>& c) {
  for (int i = 0; i < in.count(d); ++i)
    if (in.same_mode(in.first[d] + i, m)) {
      for (int p = 0; p < c.npieces[i]; ++p) r.add_mode(c.shape[i][p], c.stride[i][p]);
      return;
    }
  r.add_mode(in.shape[m], in.stride[m]);
}

/// unflatten: dim d becomes K dims of the given sizes (most significant first), in its
/// place. The caller has checked the sizes (product, at most one dynamic). A cut PyTorch
/// refuses is reported in `error_dim`; an alias that shares a mode of a merged run is dropped
/// (the new dims cut across its digits), a mesh dim that does is reported in `straddled`; and
/// needs_values says this layout cannot tell how the sizes cut the dim (the caller cuts it at
/// run time, unflatten_values).
template <int S, int D, int M, int K>
struct unflatten_result {
  draft<D + K, M * K + 1, S + M * K + K + 1> value;
  int error_dim = -1;
  int error_mode = -1;
  long long below = 1;
  int straddled = -1;
  bool needs_values = false;
};
template <int S, int D, int M, int K>
constexpr unflatten_result<S, D, M, K> unflatten(const layout<D, M>& in, int d, const int (&sizes)[K]) {
  unflatten_result<S, D, M, K> out{};
  auto& r = out.value;
  r = draft_from<D + K, M * K + 1, S + M * K + K + 1>(in);
  const int m0 = in.first[d];
  const auto c = in.count(d) <= 1 ? cut_one<M>(r, in.count(d) ? in.shape[m0] : 1, in.count(d) ? in.stride[m0] : 1, sizes)
                                  : cut_many<M>(r, in, d, sizes);
  out.error_dim = c.error_dim, out.error_mode = c.error_mode, out.below = c.below, out.needs_values = c.needs_values;
  if (c.error_dim >= 0 || c.needs_values) return out;
  for (int e = 0; e < D; ++e) {
    if (e != d) {
      if (modes_after_cut(in, d, e, c) < 0) {
        if (e < in.nprimary && out.straddled < 0) out.straddled = e;
        continue;  // an alias across a merged run: dropped
      }
      for (int m = in.first[e]; m < in.first[e + 1]; ++m) add_cut_or_copy(r, in, d, m, c);
      r.end_dim(e);
      continue;
    }
    for (int j = 0; j < K; ++j) {
      for (int i = 0; i < in.count(d); ++i)
        for (int p = 0; p < c.npieces[i]; ++p)
          if (c.owner[i][p] == j) r.add_mode(c.shape[i][p], c.stride[i][p]);
      r.end_dim(-(j + 1));
    }
  }
  r.l.nprimary = d < in.nprimary ? in.nprimary + K - 1 : in.nprimary;
  return out;
}

/// Modes per new dim of an unflatten cut at run time: one for a dim of one mode (its cut is
/// one piece per new dim), else the dim's mode count (a new dim takes at most one piece of each
/// coalesced mode).
template <int D, int M>
constexpr int pieces_per_new_dim(const layout<D, M>& in, int d) {
  return in.count(d) > 1 ? in.count(d) : 1;
}

/// unflatten with the new dims' values given at run time (run-time sizes, or a cut that
/// depends on values the layout does not hold): dim d becomes K dims of P modes each
/// (pieces_per_new_dim), every shape and stride an input slot after the mesh's own: new dim
/// j's piece p is slots S + 2 * (j * P + p) (shape) and the next (stride). A dim of one mode
/// is cut in every dim that has it (dim j's one piece); with several modes, the aliases that
/// share its modes are dropped (which of them the sizes would cut depends on the values), and
/// a mesh dim that shares them is the caller's compile error.
template <int S, int K, int D, int M>
constexpr draft<D + K, M * K + K * (M > 0 ? M : 1), S + 2 * K * (M > 0 ? M : 1)> unflatten_values(const layout<D, M>& in,
                                                                                                  int d) {
  constexpr int room_m = M * K + K * (M > 0 ? M : 1), room_s = S + 2 * K * (M > 0 ? M : 1);
  auto r = draft_from<D + K, room_m, room_s>(in);
  const int P = pieces_per_new_dim(in, d);
  for (int k = 0; k < 2 * K * P; ++k) (void)r.input();
  const auto piece = [&](int j, int p) { r.add_mode(dynamic_slot(S + 2 * (j * P + p)), dynamic_slot(S + 2 * (j * P + p) + 1)); };
  for (int e = 0; e < D; ++e) {
    if (e == d) {
      for (int j = 0; j < K; ++j) {
        for (int p = 0; p < P; ++p) piece(j, p);
        r.end_dim(-(j + 1));
      }
    } else if (!in.overlap(e, d)) {
      r.copy_dim(in, e);
    } else if (P == 1) {
      for (int m = in.first[e]; m < in.first[e + 1]; ++m) {
        if (!in.same_mode(in.first[d], m)) r.add_mode(in.shape[m], in.stride[m]);
        for (int j = 0; j < K && in.same_mode(in.first[d], m); ++j) piece(j, 0);
      }
      r.end_dim(e);
    }
  }
  r.l.nprimary = d < in.nprimary ? in.nprimary + K - 1 : in.nprimary;
  return r;
}

/// The first mesh dim (not an alias) other than d that shares a mode with d, or -1.
template <int D, int M>
constexpr int first_sharing_dim(const layout<D, M>& in, int d) {
  for (int e = 0; e < in.nprimary; ++e)
    if (e != d && in.overlap(e, d)) return e;
  return -1;
}

}  // namespace devmesh::detail
