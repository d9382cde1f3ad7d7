// devmesh/names.hpp: the list of dim names of a mesh type, and the compile-time
// name search, uniqueness and overlap checks behind every named query (Boost.Hana).
#pragma once
#include <string_view>
#include <type_traits>

#include <boost/hana/count.hpp>
#include <boost/hana/equal.hpp>
#include <boost/hana/index_if.hpp>
#include <boost/hana/optional.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>

#include "config.hpp"
#include "diagnostics.hpp"
#include "fixed_string.hpp"

namespace devmesh {

/// The names of a mesh's dims, in order (primary dims first, then aliases).
/// Each name is a boost::hana::string.
namespace detail {
template <class N>
struct name_chars;
template <char... C>
struct name_chars<boost::hana::string<C...>> {
  static constexpr char value[] = {C..., '\0'};
  static constexpr std::string_view view{value, sizeof...(C)};
};
}  // namespace detail

template <class... N>
struct names {
  static constexpr int count = sizeof...(N);
  /// The names as string_views, in order (host only: for printing and run-time lookup).
  static constexpr std::string_view views[count > 0 ? count : 1] = {detail::name_chars<N>::view...};
};

namespace detail {
namespace hana = boost::hana;

/// Index of Name in N..., or -1 (hana::index_if over the name tuple).
template <class Name, class... N>
constexpr int find_name(names<N...>) {
  constexpr auto found = hana::index_if(hana::make_tuple(N{}...), hana::equal.to(Name{}));
  if constexpr (hana::is_just(found))
    return static_cast<int>(std::remove_cvref_t<decltype(*found)>::value);
  else
    return -1;
}

/// The first name that occurs more than once in N..., as an index, or -1.
template <class... N>
constexpr int first_duplicate(names<N...>) {
  constexpr auto all = hana::make_tuple(N{}...);
  constexpr bool dup[] = {(decltype(hana::count(all, N{}))::value > 1)..., false};
  for (int i = 0; i < static_cast<int>(sizeof...(N)); ++i)
    if (dup[i]) return i;
  return -1;
}

template <int I, class... N>
using name_at = std::remove_cvref_t<decltype(hana::at_c<I>(hana::make_tuple(N{}...)))>;

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
