// devmesh/core/names.hpp: the list of dim names of a mesh type, and the compile-time
// name search, uniqueness and repeat checks behind every named query.
//
// Plain C++20, not Boost.Hana: a name is a type (name<'t', 'p'>), so a search is a fold
// of std::is_same over the list. The same searches as hana::index_if / hana::count /
// hana::at_c over hana::tuple_t cost 8-10x the compile CPU time (g++ and nvcc; 5x clang)
// on a TU of 320 lookups (docs/design.md).
#pragma once
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

#include "config.hpp"
#include "diagnostics.hpp"
#include "fixed_string.hpp"

namespace devmesh {

namespace detail {
/// The text of a name type (name<'t', 'p'>::view).
template <class N>
struct name_chars {
  static constexpr std::string_view view = N::view;
};
}  // namespace detail

/// The names of a mesh's dims, in order (primary dims first, then aliases); each a name<'t', 'p'>.
template <class... N>
struct names {
  static constexpr int count = sizeof...(N);
  /// The names as string_views, in order (host only: for printing and run-time lookup).
  static constexpr std::string_view views[count > 0 ? count : 1] = {N::view...};
};

namespace detail {
/// Index of Name in N..., or -1. (Name types are equal exactly when their strings are.)
template <class Name, class... N>
constexpr int find_name(names<N...>) {
  constexpr bool same[] = {std::is_same_v<Name, N>..., false};
  for (int i = 0; i < static_cast<int>(sizeof...(N)); ++i)
    if (same[i]) return i;
  return -1;
}

/// How often Name occurs in N...
template <class Name, class... N>
inline constexpr int occurrences = (0 + ... + static_cast<int>(std::is_same_v<Name, N>));

/// The first name that occurs more than once in N..., as an index, or -1.
template <class... N>
constexpr int first_duplicate(names<N...>) {
  constexpr bool dup[] = {(occurrences<N, N...> > 1)..., false};
  for (int i = 0; i < static_cast<int>(sizeof...(N)); ++i)
    if (dup[i]) return i;
  return -1;
}

/// name_at's helpers: a class with one base per name, indexed<I, name>.
template <std::size_t I, class T>
struct indexed {
  using type = T;
};
template <class Seq, class... N>
struct name_list;
template <std::size_t... I, class... N>
struct name_list<std::index_sequence<I...>, N...> : indexed<I, N>... {};
template <std::size_t I, class T>
indexed<I, T> pick(const indexed<I, T>&);

/// The I-th name of N... (overload resolution picks the one base class with index I).
template <int I, class... N>
using name_at = typename decltype(pick<I>(name_list<std::index_sequence_for<N...>, N...>{}))::type;

template <class Names, int I>
struct name_of_impl;
template <class... N, int I>
struct name_of_impl<names<N...>, I> {
  using type = name_at<I, N...>;
};
/// The I-th name of a names<...> list.
template <class Names, int I>
using name_of = typename name_of_impl<Names, I>::type;

/// The first K names of N... joined by '_' ("dp_cp"): PyTorch's default _flatten name.
template <int K, class... N>
constexpr auto joined_names(names<N...>) {
  constexpr std::string_view views[] = {N::view..., {}};
  constexpr std::size_t length = [&] {
    std::size_t n = K > 1 ? K - 1 : 0;
    for (int i = 0; i < K; ++i) n += views[i].size();
    return n;
  }();
  char text[length + 1]{};
  std::size_t at = 0;
  for (int i = 0; i < K; ++i) {
    if (i > 0) text[at++] = '_';
    for (char c : views[i]) text[at++] = c;
  }
  return fixed_string<length + 1>(text);
}
/// The first K names of a names<...> list.
template <class Names, class Seq>
struct first_names_of;
template <class... N, std::size_t... I>
struct first_names_of<names<N...>, std::index_sequence<I...>> {
  using type = names<name_at<static_cast<int>(I), N...>...>;
};
template <int K, class Names>
using first_names = typename first_names_of<Names, std::make_index_sequence<K>>::type;

/// joined_names as a constant (a variable template: computed only when a default flatten asks).
template <class Names, int K>
inline constexpr auto default_flatten_name = joined_names<K>(Names{});

template <class Names>
struct as_existing;
template <class... N>
struct as_existing<names<N...>> {
  using type = existing_dims<N...>;
  using as_dims = dims<N...>;
};

/// Index of dim Name in Names; a compile error naming Name and the existing dims if absent.
template <class Names, class Name>
struct dim_index {
  static constexpr int found = find_name<Name>(Names{});
  static constexpr bool check = (require<(found >= 0), error::unknown_dim<Name, typename as_existing<Names>::type>>(), true);
  static constexpr int value = found >= 0 ? found : 0;  // 0 after the error: no cascade
};

/// Checks that a list of requested names has no repeats (dim_repeated<name, requested<...>>).
template <class... N>
constexpr bool check_no_repeat() {
  constexpr int dup = first_duplicate(names<N...>{});
  if constexpr (dup >= 0) require<false, error::dim_repeated<name_at<dup, N...>, requested<N...>>>();
  return dup < 0;
}

}  // namespace detail
}  // namespace devmesh
