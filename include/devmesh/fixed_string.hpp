// devmesh/fixed_string.hpp: string literals as template arguments, and their
// Boost.Hana spelling (hana::string<'t','p'>), which is what diagnostics print.
#pragma once
#include <cstddef>
#include <string_view>
#include <utility>

#include <boost/hana/string.hpp>

#include "config.hpp"

namespace devmesh {

/// A string literal usable as a template argument: dim<"tp", 2>.
template <std::size_t N>
struct fixed_string {
  char data[N]{};
  /// From a string literal (implicit, so that dim<"tp", 2> works).
  constexpr fixed_string(const char (&s)[N]) {  // NOLINT: implicit by design
    for (std::size_t i = 0; i < N; ++i) data[i] = s[i];
  }
  /// Length without the terminating zero.
  static constexpr std::size_t size() { return N - 1; }
  /// The string as a std::string_view.
  constexpr std::string_view view() const { return {data, N - 1}; }
};

namespace detail {
template <auto S, class Seq>
struct to_hana_string_impl;
template <auto S, std::size_t... I>
struct to_hana_string_impl<S, std::index_sequence<I...>> {
  using type = boost::hana::string<S.data[I]...>;
};
}  // namespace detail

/// The type-level name of a dim: boost::hana::string<'t','p'>.
template <auto S>
using name_t = typename detail::to_hana_string_impl<S, std::make_index_sequence<S.size()>>::type;

/// A dim name as a value, for `mesh["tp"_dim]`.
template <fixed_string S>
struct dim_name {
  static constexpr auto value = S;
  using devmesh_dim_name_tag = void;
};

namespace literals {
/// "tp"_dim: names a dim in operator[].
template <fixed_string S>
constexpr dim_name<S> operator""_dim() {
  return {};
}
}  // namespace literals

}  // namespace devmesh
