// devmesh/core/fixed_string.hpp: string literals as template arguments, and the type-level
// name of a dim, name<'t', 'p'>, which is what diagnostics print.
#pragma once
#include <cstddef>
#include <string_view>
#include <utility>

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

/// The type-level name of a dim: name<'t', 'p'>, one type per name (two names are the
/// same type exactly when their strings are equal). Its arguments are chars, not one
/// fixed_string: nvcc 13's host code cannot spell a class-type argument inside a type
/// argument (`'__T0' was not declared`). Diagnostics print it as name<'t', 'p'> under
/// clang and nvcc and, under g++, which prints a char array as text, as
/// name<devmesh::fixed_string<3>{"tp"}> (detail::spelled_t in diagnostics.hpp; that is
/// why the parameter is `auto`).
template <auto... C>
struct name {
  /// The name's characters, zero-terminated.
  static constexpr char chars[] = {C..., '\0'};
  /// The name as a std::string_view.
  static constexpr std::string_view view{chars, sizeof...(C)};
  using devmesh_name_tag = void;
};

namespace detail {
template <auto S, class Seq>
struct to_name;
template <auto S, std::size_t... I>
struct to_name<S, std::index_sequence<I...>> {
  using type = name<S.data[I]...>;
};
}  // namespace detail

/// The type-level name of a dim with name S (a fixed_string): name<'t', 'p'>.
template <auto S>
using name_t = typename detail::to_name<S, std::make_index_sequence<S.size()>>::type;

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
