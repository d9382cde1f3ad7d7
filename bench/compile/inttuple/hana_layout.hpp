// bench/compile/inttuple/hana_layout.hpp: a mesh layout in the Boost.Hana / CuTe IntTuple
// style, for the compile-cost comparison of README.md (not part of devmesh).
//
// An IntTuple is an integer, static (hana::int_<N>) or dynamic (int), or a hana::tuple of
// IntTuples. A layout is (shape, stride): a hana::tuple with one IntTuple per mesh dim, over
// the root mesh's row-major rank space. A root dim is one integer; a flattened dim is a
// tuple of its modes. Static values live in the type, dynamic ones in the object, so
// derivations (slice, flatten, unflatten, coalesce) are plain functions of the object and
// arithmetic on hana::int_ stays in the type (int_<2> * int_<3> is int_<6>; int_<2> * int
// is int). All generic functions recurse on "tuple or integer", as CuTe's do.
//
// With HL_LEAN defined (an ablation, README.md): the same representation and API, but the
// IntTuple functions (product, crd, crd2idx, coordinates, rank_at, group_base) are written
// as CuTe writes them, with std::index_sequence and fold expressions over hana::at_c,
// instead of Hana's algorithms (fold_left, zip, reverse, transform, pair).
#pragma once
#include <boost/hana/at.hpp>
#include <boost/hana/back.hpp>
#include <boost/hana/concat.hpp>
#include <boost/hana/core/is_a.hpp>
#include <boost/hana/div.hpp>
#include <boost/hana/drop_back.hpp>
#include <boost/hana/drop_front.hpp>
#include <boost/hana/flatten.hpp>
#include <boost/hana/fold_left.hpp>
#include <boost/hana/fold_right.hpp>
#include <boost/hana/integral_constant.hpp>
#include <boost/hana/is_empty.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/minus.hpp>
#include <boost/hana/mod.hpp>
#include <boost/hana/mult.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/plus.hpp>
#include <boost/hana/prepend.hpp>
#include <boost/hana/append.hpp>
#include <boost/hana/reverse.hpp>
#include <boost/hana/take_front.hpp>
#include <boost/hana/transform.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/zip.hpp>
#include <type_traits>
#include <utility>

namespace hl {
namespace hana = boost::hana;

/// A static value.
template <int N>
inline constexpr hana::int_<N> C{};

template <class T>
inline constexpr bool is_tuple = hana::is_a<hana::tuple_tag, std::remove_cvref_t<T>>;
template <class T>
inline constexpr bool is_static = hana::is_a<hana::integral_constant_tag<int>, std::remove_cvref_t<T>>;

/// shape and stride: hana::tuples of IntTuples, one per dim.
template <class Shape, class Stride>
struct layout {
  [[no_unique_address]] Shape shape;  // a static layout is an empty object, as CuTe's
  [[no_unique_address]] Stride stride;
};
template <class Shape, class Stride>
constexpr auto make_layout(Shape shape, Stride stride) {
  return layout<Shape, Stride>{shape, stride};
}

// ---- IntTuple functions (CuTe's product, flatten, crd, crd2idx) -------------------------

#ifndef HL_LEAN
/// Product of an IntTuple's integers (static if they all are).
template <class X>
constexpr auto product(X x) {
  if constexpr (is_tuple<X>)
    return hana::fold_left(x, C<1>, [](auto acc, auto e) { return acc * product(e); });
  else
    return x;
}
/// An IntTuple's integers as one flat tuple (a dim's modes, most significant first).
template <class X>
constexpr auto modes(X x) {
  if constexpr (is_tuple<X>)
    return hana::flatten(hana::transform(x, [](auto e) { return modes(e); }));
  else
    return hana::make_tuple(x);
}
/// Coordinate of rank r in (shape : stride), its modes' digits (r / s) % n read row-major.
template <class Shape, class Stride>
constexpr auto crd(int r, Shape n, Stride s) {
  if constexpr (is_tuple<Shape>)
    return hana::fold_left(hana::zip(n, s), C<0>, [r](auto c, auto p) {
      return c * product(hana::at_c<0>(p)) + crd(r, hana::at_c<0>(p), hana::at_c<1>(p));
    });
  else
    return (r / s) % n;
}
/// The layout as a function: offset of index i (read row-major over the modes).
template <class I, class Shape, class Stride>
constexpr auto crd2idx(I i, Shape n, Stride s) {
  if constexpr (is_tuple<Shape>) {
    auto out = hana::fold_left(hana::reverse(hana::zip(n, s)), hana::make_pair(i, C<0>), [](auto acc, auto p) {
      const auto size = product(hana::at_c<0>(p));
      return hana::make_pair(hana::first(acc) / size,
                             hana::second(acc) + crd2idx(hana::first(acc) % size, hana::at_c<0>(p), hana::at_c<1>(p)));
    });
    return hana::second(out);
  } else {
    return i * s;
  }
}

#else
template <class T>
inline constexpr std::size_t rank_v = decltype(hana::length(std::declval<T>()))::value;
template <class T>
using seq = std::make_index_sequence<rank_v<T>>;

template <class X>
constexpr auto product(X x);
template <class X, std::size_t... I>
constexpr auto product_seq(X x, std::index_sequence<I...>) {
  return (C<1> * ... * product(hana::at_c<I>(x)));
}
/// Product of an IntTuple's integers (static if they all are).
template <class X>
constexpr auto product(X x) {
  if constexpr (is_tuple<X>)
    return product_seq(x, seq<X>{});
  else
    return x;
}
/// An IntTuple's integers as one flat tuple (a dim's modes, most significant first).
template <class X>
constexpr auto modes(X x) {
  if constexpr (is_tuple<X>)
    return hana::flatten(hana::transform(x, [](auto e) { return modes(e); }));
  else
    return hana::make_tuple(x);
}
template <class Shape, class Stride>
constexpr int crd(int r, Shape n, Stride s);
template <class Shape, class Stride, std::size_t... I>
constexpr int crd_seq(int r, Shape n, Stride s, std::index_sequence<I...>) {
  int c = 0;
  ((c = c * int(product(hana::at_c<I>(n))) + crd(r, hana::at_c<I>(n), hana::at_c<I>(s))), ...);
  return c;
}
/// Coordinate of rank r in (shape : stride), its modes' digits (r / s) % n read row-major.
template <class Shape, class Stride>
constexpr int crd(int r, Shape n, Stride s) {
  if constexpr (is_tuple<Shape>)
    return crd_seq(r, n, s, seq<Shape>{});
  else
    return (r / s) % n;
}
template <class Shape, class Stride>
constexpr int crd2idx(int i, Shape n, Stride s);
template <class Shape, class Stride, std::size_t... I>
constexpr int crd2idx_seq(int i, Shape n, Stride s, std::index_sequence<I...>) {
  constexpr std::size_t K = sizeof...(I);
  int off = 0;
  ((off += crd2idx(i % int(product(hana::at_c<K - 1 - I>(n))), hana::at_c<K - 1 - I>(n), hana::at_c<K - 1 - I>(s)),
    i /= int(product(hana::at_c<K - 1 - I>(n)))),
   ...);
  return off;
}
/// The layout as a function: offset of index i (read row-major over the modes).
template <class Shape, class Stride>
constexpr int crd2idx(int i, Shape n, Stride s) {
  if constexpr (is_tuple<Shape>)
    return crd2idx_seq(i, n, s, seq<Shape>{});
  else
    return i * s;
}

#endif

// ---- a mesh -------------------------------------------------------------------------------

/// A root mesh of the given sizes (hana::int_<N> or int): one mode per dim, row-major strides.
template <class... Sizes>
constexpr auto make_root(Sizes... sizes) {
  const auto shape = hana::make_tuple(sizes...);
  const auto st = hana::fold_right(shape, hana::make_pair(hana::make_tuple(), C<1>), [](auto n, auto acc) {
    return hana::make_pair(hana::prepend(hana::first(acc), hana::second(acc)), hana::second(acc) * n);
  });
  return make_layout(shape, hana::first(st));
}

/// Number of ranks of the mesh.
template <class L>
constexpr auto size(const L& m) {
  return product(m.shape);
}
/// Size of dim D.
template <int D, class L>
constexpr auto size(const L& m) {
  return product(hana::at_c<D>(m.shape));
}
/// Coordinate of rank r along dim D.
template <int D, class L>
constexpr int coordinate(const L& m, int r) {
  return crd(r, hana::at_c<D>(m.shape), hana::at_c<D>(m.stride));
}
#ifndef HL_LEAN
/// Coordinates of rank r along every dim (a hana::tuple of int).
template <class L>
constexpr auto coordinates(const L& m, int r) {
  return hana::transform(hana::zip(m.shape, m.stride), [r](auto p) { return crd(r, hana::at_c<0>(p), hana::at_c<1>(p)); });
}
template <int I, class T>
constexpr auto get(const T& t) {
  return hana::at_c<I>(t);
}
template <class... I>
constexpr auto make_coord(I... i) {
  return hana::make_tuple(i...);
}
/// Rank at coordinate c (one integer per dim) in the submesh of rank 0: the inner product.
template <class L, class Coord>
constexpr int rank_at(const L& m, const Coord& c) {
  return hana::fold_left(hana::zip(c, m.shape, m.stride), C<0>, [](auto acc, auto t) {
    return acc + crd2idx(hana::at_c<0>(t), hana::at_c<1>(t), hana::at_c<2>(t));
  });
}
/// r minus its digits in the given modes: the first rank of r's group over them.
template <class Shape, class Stride>
constexpr int group_base(int r, Shape n, Stride s) {
  return hana::fold_left(hana::zip(modes(n), modes(s)), r, [r](int acc, auto p) {
    return acc - ((r / hana::at_c<1>(p)) % hana::at_c<0>(p)) * hana::at_c<1>(p);
  });
}
#else
template <class L, std::size_t... I>
constexpr auto coordinates_seq(const L& m, int r, std::index_sequence<I...>) {
  return hana::make_tuple(crd(r, hana::at_c<I>(m.shape), hana::at_c<I>(m.stride))...);
}
/// Coordinates of rank r along every dim (a hana::tuple of int).
template <class L>
constexpr auto coordinates(const L& m, int r) {
  return coordinates_seq(m, r, seq<decltype(m.shape)>{});
}
template <int I, class T>
constexpr auto get(const T& t) {
  return hana::at_c<I>(t);
}
template <class... I>
constexpr auto make_coord(I... i) {
  return hana::make_tuple(i...);
}
template <class L, class Coord, std::size_t... I>
constexpr int rank_at_seq(const L& m, const Coord& c, std::index_sequence<I...>) {
  return (0 + ... + crd2idx(hana::at_c<I>(c), hana::at_c<I>(m.shape), hana::at_c<I>(m.stride)));
}
/// Rank at coordinate c (one integer per dim) in the submesh of rank 0: the inner product.
template <class L, class Coord>
constexpr int rank_at(const L& m, const Coord& c) {
  return rank_at_seq(m, c, seq<decltype(m.shape)>{});
}
template <class Shape, class Stride, std::size_t... I>
constexpr int group_base_seq(int r, Shape n, Stride s, std::index_sequence<I...>) {
  return (r - ... - (((r / hana::at_c<I>(s)) % hana::at_c<I>(n)) * hana::at_c<I>(s)));
}
/// r minus its digits in the given modes: the first rank of r's group over them.
template <class Shape, class Stride>
constexpr int group_base(int r, Shape n, Stride s) {
  const auto ns = modes(n);
  return group_base_seq(r, ns, modes(s), seq<decltype(ns)>{});
}
#endif
/// The i-th rank of the group over all of the mesh's dims that contains rank r.
template <class L>
constexpr int group_at(const L& m, int r, int i) {
  return group_base(r, m.shape, m.stride) + crd2idx(i, m.shape, m.stride);
}
struct split_args {
  int color, key;
};
/// (color, key) of rank r for the groups of dim D: first rank of r's group, r's index in it.
template <int D, class L>
constexpr split_args split(const L& m, int r) {
  return {group_base(r, hana::at_c<D>(m.shape), hana::at_c<D>(m.stride)), coordinate<D>(m, r)};
}
/// (color, key) of rank r for the groups over all of the mesh's dims.
template <class L>
constexpr split_args split_all(const L& m, int r) {
  return {group_base(r, m.shape, m.stride), crd(r, m.shape, m.stride)};
}
/// Dim D's layout as a function: offset of its i-th rank from its group's first rank.
template <int D, class L>
constexpr int offset(const L& m, int i) {
  return crd2idx(i, hana::at_c<D>(m.shape), hana::at_c<D>(m.stride));
}

// ---- the algebra ----------------------------------------------------------------------------

/// Dims I... (any order) as a new mesh.
template <int... I, class L>
constexpr auto slice(const L& m) {
  return make_layout(hana::make_tuple(hana::at_c<I>(m.shape)...), hana::make_tuple(hana::at_c<I>(m.stride)...));
}
/// The mesh plus one dim made of the modes of dims I... (in that order).
template <int... I, class L>
constexpr auto flatten(const L& m) {
  return make_layout(hana::append(m.shape, hana::flatten(hana::make_tuple(modes(hana::at_c<I>(m.shape))...))),
                     hana::append(m.stride, hana::flatten(hana::make_tuple(modes(hana::at_c<I>(m.stride))...))));
}
/// Dim D, one static mode (A*B : s), split in its place into dims (A : s*B) and (B : s).
template <int D, int A, int B, class L>
constexpr auto unflatten(const L& m) {
  const auto n = hana::at_c<D>(m.shape);
  const auto s = hana::at_c<D>(m.stride);
  static_assert(is_static<std::remove_cvref_t<decltype(n)>>, "unflatten: the dim must be one static mode");
  static_assert(std::remove_cvref_t<decltype(n)>::value == A * B, "unflatten: the sizes must multiply to the dim's size");
  const auto at = hana::size_c<D>;
  const auto after = hana::size_c<D + 1>;
  return make_layout(
      hana::concat(hana::concat(hana::take_front(m.shape, at), hana::make_tuple(C<A>, C<B>)), hana::drop_front(m.shape, after)),
      hana::concat(hana::concat(hana::take_front(m.stride, at), hana::make_tuple(s * C<B>, s)), hana::drop_front(m.stride, after)));
}
namespace detail {
template <class N>
constexpr bool static_one() {
  if constexpr (is_static<N>)
    return N::value == 1;
  else
    return false;
}
/// True if mode (n : s) continues mode (prev_shape : prev_stride), all of them static.
template <class PN, class PS, class N, class S>
constexpr bool static_contiguous() {
  if constexpr (is_static<PN> && is_static<PS> && is_static<N> && is_static<S>)
    return PS::value == N::value * S::value;
  else
    return false;
}
/// One step of coalesce: acc is (shapes, strides) so far, (n : s) the next mode.
template <class Acc, class N, class S>
constexpr auto coalesce_step(Acc acc, N n, S s) {
  const auto shapes = hana::first(acc);
  const auto strides = hana::second(acc);
  if constexpr (static_one<N>()) {
    return acc;
  } else if constexpr (decltype(hana::is_empty(shapes))::value) {
    return hana::make_pair(hana::append(shapes, n), hana::append(strides, s));
  } else if constexpr (static_contiguous<std::remove_cvref_t<decltype(hana::back(shapes))>,
                                         std::remove_cvref_t<decltype(hana::back(strides))>, N, S>()) {
    return hana::make_pair(hana::append(hana::drop_back(shapes), hana::back(shapes) * n), hana::append(hana::drop_back(strides), s));
  } else {
    return hana::make_pair(hana::append(shapes, n), hana::append(strides, s));
  }
}
}  // namespace detail

/// CuTe's coalesce of dim D's modes, as a 1-dim mesh: static size-1 modes dropped, a mode
/// merged into the previous one when both are static and contiguous (stride_prev ==
/// shape * stride). Dynamic modes are kept as they are (the result's type cannot depend on
/// a run-time value), as in CuTe.
template <int D, class L>
constexpr auto coalesce(const L& m) {
  const auto out = hana::fold_left(hana::zip(modes(hana::at_c<D>(m.shape)), modes(hana::at_c<D>(m.stride))),
                                   hana::make_pair(hana::make_tuple(), hana::make_tuple()),
                                   [](auto acc, auto p) { return detail::coalesce_step(acc, hana::at_c<0>(p), hana::at_c<1>(p)); });
  return make_layout(hana::make_tuple(hana::first(out)), hana::make_tuple(hana::second(out)));
}

}  // namespace hl
