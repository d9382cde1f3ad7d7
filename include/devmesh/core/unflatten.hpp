// devmesh/core/unflatten.hpp: the steps of basic_mesh::unflatten that do not need the mesh's
// type: the new sizes read and resolved against the dim's size, PyTorch's cut of the dim's
// layout (cut.hpp), and the values of the new dims' modes; each fault throws mesh_error naming
// the dims (a trap in device code, a compile error in a constant expression).
//
// basic_mesh keeps what must be its members: the operations on its layout (nvcc 13 spells a
// derived mesh's type right only from a member operation, see indexed_mesh.hpp) and the mesh
// each step gives.
#pragma once
#include <climits>
#include <cstddef>
#include <string_view>
#include <utility>

#include "config.hpp"
#include "cut.hpp"
#include "diagnostics.hpp"
#include "derivation.hpp"
#include "layout.hpp"
#include "mesh_checks.hpp"
#include "names.hpp"
#include "sizes.hpp"

namespace devmesh::detail {

// Not constexpr: reaching one in a constant expression is a compile error naming it (g++
// and clang also quote the calling line, whose comment says what went wrong). In device
// code (no exceptions) they trap.

/// The new sizes do not multiply to dim d's size `whole` (or, one inferred, do not divide it).
template <class Names>
[[noreturn]] DEVMESH_HOST_DEVICE void fail_unflatten(int d, const resolved_sizes& r, int whole) {
#if DEVMESH_DEVICE_PASS
  (void)d, (void)r, (void)whole;
  __trap();
  __builtin_unreachable();
#else
  throw_unflatten_error(r, Names::views[d], whole);
#endif
}
/// Run-time sizes that do not fit dim d (as fail_unflatten, naming the new dim at fault).
template <class Names, class... New>
[[noreturn]] DEVMESH_HOST_DEVICE void fail_new_sizes(int d, const resolved_sizes& r, int whole, const int* sizes,
                                                     const int* fixed) {
#if DEVMESH_DEVICE_PASS
  (void)d, (void)r, (void)whole, (void)sizes, (void)fixed;
  __trap();
  __builtin_unreachable();
#else
  const std::string_view* views = names<typename New::name_type...>::views;
  throw_new_sizes_error(r, Names::views[d], whole, views, sizes, fixed, sizeof...(New));
#endif
}
/// New dim j's size v is not a positive int (nor dynamic_size).
template <class... New>
[[noreturn]] DEVMESH_HOST_DEVICE void fail_new_size(int j, long long v) {
#if DEVMESH_DEVICE_PASS
  (void)j, (void)v;
  __trap();
  __builtin_unreachable();
#else
  throw_new_size_error(names<typename New::name_type...>::views[j], v);
#endif
}
/// PyTorch cannot cut dim d of mesh m at new dim c.fault's end: the message names it, its
/// size, d, the dim of m it falls inside and the sizes that would work.
template <class Mesh, class... New, int M, int K>
[[noreturn]] DEVMESH_HOST_DEVICE void fail_cut(const Mesh& m, int d, const layout_cut<M, K>& c, const int* sizes) {
#if DEVMESH_DEVICE_PASS
  (void)m, (void)d, (void)c, (void)sizes;
  __trap();
  __builtin_unreachable();
#else
  using names_of_mesh = typename Mesh::names_type;
  const std::string_view* views = names<typename New::name_type...>::views;
  const auto l = m.dim_layout(d);
  const int in = mesh_checks<Mesh::layout, names_of_mesh>::dim_with_mode(d, Mesh::layout.first[d] + c.fault_mode);
  int work[32]{};
  const int nwork = sizes_that_would_cut(l, c.below, work);
  throw_cut_error({.new_dim = views[c.fault], .size = sizes[c.fault], .dim = names_of_mesh::views[d],
                   .inside = names_of_mesh::views[in], .inside_size = m.size(in), .shape = l.shape,
                   .stride = l.stride, .modes = l.count, .below = c.below, .work = work, .nwork = nwork});
#endif
}

/// Fails unless static sizes Sizes... multiply to dim D's size `whole` (a dynamic one among
/// them: divide it). Resolved at compile time where D's size is static in L.
template <auto L, class Names, int D, int... Sizes>
DEVMESH_HOST_DEVICE constexpr void check_unflatten_sizes(int whole) {
  constexpr int sizes[] = {Sizes...};
  constexpr auto given = resolve_given({.given = sizes, .n = sizeof...(Sizes)});
  if constexpr (L.static_dim(D)) {
    constexpr auto r = resolve_total(given, L.static_dim_size(D));
    if constexpr (!r.ok()) fail_unflatten<Names>(D, r, whole);  // (a static size that an inferred one does not divide)
  } else {
    const auto r = resolve_total(given, whole);
    if (!r.ok()) fail_unflatten<Names>(D, r, whole);
  }
}

/// Whether N run-time sizes fit new dims New...: one per new dim, or one per dynamic new dim
/// (else the diagnostic, naming the three counts).
template <std::size_t N, class... New>
constexpr bool check_new_size_count() {
  constexpr int given = static_cast<int>(N), all = static_cast<int>(sizeof...(New));
  constexpr int dynamic_new = ((New::size == dynamic_size ? 1 : 0) + ... + 0);
  if constexpr (given != all && given != dynamic_new)
    require<false, error::unflatten_size_count<size_value<given>, size_value<dynamic_new>, size_value<all>>>();
  return given == all || given == dynamic_new;
}

/// The new dims' sizes from those given at run time, into out[0, sizeof...(New)): one size per
/// new dim, or one per dynamic new dim (the static ones kept); dynamic_size stays (inferred).
template <class... New, class... I>
DEVMESH_HOST_DEVICE constexpr void read_new_sizes(int* out, I... sizes) {
  constexpr int given = static_cast<int>(sizeof...(I)), all = static_cast<int>(sizeof...(New));
  constexpr int fixed[] = {New::size...};
  const long long in[] = {static_cast<long long>(sizes)...};
  for (int j = 0, k = 0; j < all; ++j) {
    const long long v = given == all ? in[j] : fixed[j] == dynamic_size ? in[k++] : fixed[j];
    out[j] = v == dynamic_size ? dynamic_size : v < 1 || v > INT_MAX ? 0 : static_cast<int>(v);
    if (out[j] == 0) fail_new_size<New...>(j, v);  // devmesh: not a positive int
  }
}

/// Whether unflatten<N, New...>() of a mesh of layout L cuts dim D at compile time (its one
/// mode, or static values that tell how the sizes cut it), and the new sizes of that cut (an
/// inferred size resolved where D's size is static).
template <auto L, int D, class... New>
struct compile_time_cut {
  static constexpr int given[] = {New::size...};
  static constexpr long long whole = L.static_dim(D) ? L.static_dim_size(D) : no_total;
  static constexpr auto r = resolve_sizes({.given = given, .n = sizeof...(New), .total = whole});
  static constexpr bool one_mode = L.count(D) <= 1;
  static constexpr int size_of_new(int j) {
    return !one_mode && given[j] == dynamic_size && r.ok() && r.inferred >= 0 ? r.inferred_size : given[j];
  }
  template <std::size_t... J>
  static constexpr bool needs_values(std::index_sequence<J...>) {
    return unflatten_op<L, D, size_of_new(J)...>::cut.needs_values;
  }
  static constexpr bool value = one_mode || (whole != no_total && r.ok() && !needs_values(std::index_sequence_for<New...>{}));
};

/// Dim D of mesh m cut into New... with sizes `given` (dynamic_size: inferred), at run time:
/// the sizes resolved against D's size, then PyTorch's cut of D's layout (cut.hpp). Writes
/// the inputs of unflatten_values_op<L, D, K> into out: m's dynamic values (`own`), then P
/// pieces (shape, stride) per new dim.
template <class Mesh, int D, class... New>
DEVMESH_HOST_DEVICE constexpr void cut_values(const Mesh& m, const int* own, const int* given, int* out) {
  constexpr auto L = Mesh::layout;
  for (int k = 0; k < L.ndynamic; ++k) out[k] = own[k];
  out += L.ndynamic;
  constexpr int K = static_cast<int>(sizeof...(New));
  constexpr int fixed[] = {New::size...};
  const auto r = resolve_sizes({.given = given, .n = K, .fixed = fixed, .total = m.size(D)});
  if (!r.ok()) fail_new_sizes<typename Mesh::names_type, New...>(D, r, m.size(D), given, fixed);  // devmesh: the new sizes do not fit the dim
  int sizes[K]{};
  for (int j = 0; j < K; ++j) sizes[j] = j == r.inferred ? r.inferred_size : given[j];
  const auto l = m.dim_layout(D);
  const auto c = cut_layout<L.nmodes, K>(l, sizes);
  if (c.fault >= 0) fail_cut<Mesh, New...>(m, D, c, sizes);  // devmesh: PyTorch cannot cut the dim there
  constexpr int P = pieces_per_new_dim(L, D);
  const auto p = place_values_of(l);
  long long low = 1;
  for (int j = K - 1; j >= 0; --j) {
    int* slot = out + 2 * j * P;
    for (int q = 0; q < P; ++q) {  // the pieces, then size-1 modes at the dim's place
      const bool piece = q < c.count[j];
      slot[2 * q] = piece ? c.shape[j][q] : 1;
      slot[2 * q + 1] = piece ? c.stride[j][q] : stride_at(p, low, l);
    }
    low *= sizes[j];
  }
}

}  // namespace devmesh::detail
