// devmesh/hana.hpp: Boost.Hana views of devmesh's names and mesh types, opt-in (include it
// next to <devmesh/devmesh.hpp>; the umbrella does not). The core stays Hana-free on purpose:
// a name search written with Hana costs 5-11x the compile time of the core's C++20 folds
// (docs/design.md, "Names without Hana"). This header only converts, at the edge:
//   - a dim name to and from a hana::string: dm::hana_name<"tp">, dm::to_hana("tp"_dim), and
//     dm::from_hana(s) (a fixed_string: m.size<dm::from_hana(BOOST_HANA_STRING("tp"))>()),
//     dm::as_dim_name(s) (for m[...]);
//   - a mesh's dims as a hana::tuple of dm::hana_dim, a Hana Product of (name, size):
//     dm::hana_dims<M> from the type, dm::to_hana(m) from an object. Names are hana::strings,
//     static sizes hana::int_<N>; a dynamic size is an int read from the object (to_hana(m)),
//     or hana::int_<dm::dynamic_size> from the type alone, as in dim<"dp">::size. Aliases (the
//     names of flattened dims, and dims kept reachable after a slice) come after the mesh's own
//     dims, with is_alias set.
#pragma once
#include <cstddef>
#include <type_traits>
#include <utility>

#include <boost/hana/bool.hpp>
#include <boost/hana/core/make.hpp>
#include <boost/hana/equal.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/integral_constant.hpp>
#include <boost/hana/not_equal.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>

#include "core/basic_mesh.hpp"
#include "core/config.hpp"
#include "core/fixed_string.hpp"
#include "core/mesh_checks.hpp"
#include "core/names.hpp"

namespace devmesh {

// ---- names ---------------------------------------------------------------------------------

/// A dim name type (name<'t', 'p'>) as a hana::string: BOOST_HANA_STRING("tp").
template <char... C>
constexpr boost::hana::string<C...> to_hana(name<C...>) {
  return {};
}
/// A dim name value (`"tp"_dim`, a `dim_name`) as a hana::string. (Matched by its tag, not as
/// `dim_name<S>`: nvcc 13 fails to deduce a class-type template argument.)
template <class DimName>
  requires requires { typename DimName::devmesh_dim_name_tag; }
constexpr auto to_hana(DimName) {
  return to_hana(name_t<DimName::value>{});
}
/// The hana::string of a dim name: hana_name<"tp"> == BOOST_HANA_STRING("tp").
template <fixed_string S>
inline constexpr auto hana_name = to_hana(name_t<S>{});

/// A hana::string as a devmesh dim name, a fixed_string usable as a template argument wherever
/// a dim name is expected: m.size<dm::from_hana(BOOST_HANA_STRING("tp"))>(), dim<from_hana(s), 2>.
template <char... C>
constexpr fixed_string<sizeof...(C) + 1> from_hana(boost::hana::string<C...>) {
  const char text[] = {C..., '\0'};
  return fixed_string<sizeof...(C) + 1>(text);
}
/// A hana::string as a dim name value, for operator[]: m[dm::as_dim_name(BOOST_HANA_STRING("tp"))].
template <char... C>
constexpr dim_name<from_hana(boost::hana::string<C...>{})> as_dim_name(boost::hana::string<C...>) {
  return {};
}

// ---- dims ----------------------------------------------------------------------------------

/// The Hana tag of hana_dim (a Product: hana::first, hana::second, hana::make).
struct hana_dim_tag {};

/// One dim of a mesh, Hana's way: a Product of its name (hana::first: a hana::string) and its
/// size (hana::second: hana::int_<N> when static, int when dynamic), and whether it is an alias
/// (is_alias: hana::true_ for a flattened name or a dim kept reachable, not counted in ndim).
template <class Name, class Size, bool Alias>
struct hana_dim {
  using hana_tag = hana_dim_tag;
  Name name;
  Size size;
  static constexpr boost::hana::bool_<Alias> is_alias{};
};

/// hana_dims compare as Products, as hana::pair does: equal names and sizes (a hana::bool_
/// when both are compile-time values, a bool otherwise).
template <class N1, class S1, bool A1, class N2, class S2, bool A2>
constexpr auto operator==(const hana_dim<N1, S1, A1>& a, const hana_dim<N2, S2, A2>& b) {
  return boost::hana::equal(a, b);
}
/// The negation of operator== (hana::not_equal).
template <class N1, class S1, bool A1, class N2, class S2, bool A2>
constexpr auto operator!=(const hana_dim<N1, S1, A1>& a, const hana_dim<N2, S2, A2>& b) {
  return boost::hana::not_equal(a, b);
}

namespace detail {

/// A mesh type of the core (mesh<...> or any basic_mesh): what hana_dims and to_hana read.
template <class M>
concept core_mesh = requires {
  typename M::names_type;
  M::layout;
  M::ndim;
  M::ndim_with_aliases;
};

/// The hana_dim type of dim D of mesh type M, with its size as Size.
template <class M, int D, class Size>
using hana_dim_t = hana_dim<decltype(to_hana(name_of<typename M::names_type, D>{})), Size, (D >= M::ndim)>;

/// Dim D of M from the type alone: a dynamic size is hana::int_<dynamic_size>.
template <class M, int D>
constexpr auto static_hana_dim() {
  constexpr bool fixed = M::layout.static_dim(D);
  constexpr int size = fixed ? M::layout.static_dim_size(D) : dynamic_size;
  return hana_dim_t<M, D, boost::hana::int_<size>>{};
}

/// Dim D of the mesh m: a dynamic size is m's value (an int).
template <int D, class M>
constexpr auto hana_dim_of(const M& m) {
  if constexpr (M::layout.static_dim(D))
    return static_hana_dim<M, D>();
  else
    return hana_dim_t<M, D, int>{{}, m.dim_size(D)};
}

template <class M, int... D>
constexpr auto static_hana_dims(std::integer_sequence<int, D...>) {
  return boost::hana::make_tuple(static_hana_dim<M, D>()...);
}
template <class M, int... D>
constexpr auto hana_dims_of(const M& m, std::integer_sequence<int, D...>) {
  return boost::hana::make_tuple(hana_dim_of<D>(m)...);
}

}  // namespace detail

/// The dims of mesh type M (its own, then its aliases) as a hana::tuple of hana_dim; dynamic
/// sizes are hana::int_<dynamic_size> (to_hana(m) reads them from a mesh object).
template <detail::core_mesh M>
inline constexpr auto hana_dims =
    detail::static_hana_dims<M>(std::make_integer_sequence<int, M::ndim_with_aliases>{});

/// The dims of mesh m (its own, then its aliases) as a hana::tuple of hana_dim, dynamic sizes
/// read from m.
template <auto L, class Names>
constexpr auto to_hana(const basic_mesh<L, Names>& m) {
  return detail::hana_dims_of(m, std::make_integer_sequence<int, L.ndims>{});
}

}  // namespace devmesh

// hana_dim as a Hana Product.
namespace boost::hana {
/// hana::first of a devmesh::hana_dim: its name, a hana::string.
template <>
struct first_impl<devmesh::hana_dim_tag> {
  /// The dim's name.
  template <class D>
  static constexpr auto apply(const D& d) {
    return d.name;
  }
};
/// hana::second of a devmesh::hana_dim: its size, hana::int_<N> or int.
template <>
struct second_impl<devmesh::hana_dim_tag> {
  /// The dim's size.
  template <class D>
  static constexpr auto apply(const D& d) {
    return d.size;
  }
};
/// hana::make<devmesh::hana_dim_tag>(name, size): one of the mesh's own dims (not an alias).
template <>
struct make_impl<devmesh::hana_dim_tag> {
  /// A hana_dim of `n` and `s`, not an alias.
  template <class Name, class Size>
  static constexpr auto apply(Name&& n, Size&& s) {
    return devmesh::hana_dim<std::decay_t<Name>, std::decay_t<Size>, false>{static_cast<Name&&>(n),
                                                                            static_cast<Size&&>(s)};
  }
};
}  // namespace boost::hana
