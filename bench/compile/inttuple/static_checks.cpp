// bench/compile/inttuple/static_checks.cpp: what stays static on each side (compile only).
//   g++-12 -std=c++20 -fsyntax-only -I bench/compile/inttuple bench/compile/inttuple/static_checks.cpp
#include <type_traits>

#include "hana_layout.hpp"
#include "struct_layout.hpp"

namespace hana = boost::hana;

// A static mesh: empty objects, every size a constant, coalesce merges in the type.
constexpr auto hm = hl::make_root(hl::C<2>, hl::C<4>, hl::C<3>);
static_assert(sizeof(hm) <= 2);  // no run-time value (two empty tuples that may not share an address)
static_assert(std::is_same_v<decltype(hl::size(hm)), hana::int_<24>>);
constexpr auto hg = hl::slice<2, 3>(hl::flatten<0, 1>(hm));  // (tp, dp_cp)
constexpr auto hc = hl::coalesce<1>(hg);                      // dp_cp: (2:12),(4:3) -> (8:3)
static_assert(std::is_same_v<std::remove_cvref_t<decltype(hc.shape)>, hana::tuple<hana::tuple<hana::int_<8>>>>);
static_assert(std::is_same_v<std::remove_cvref_t<decltype(hc.stride)>, hana::tuple<hana::tuple<hana::int_<3>>>>);
constexpr auto hu = hl::unflatten<1, 2, 2>(hm);               // cp (4:3) -> (2:6),(2:3)
static_assert(std::is_same_v<std::remove_cvref_t<decltype(hu.stride)>,
                             hana::tuple<hana::int_<12>, hana::int_<6>, hana::int_<3>, hana::int_<1>>>);
static_assert(hl::group_at(hl::slice<2, 0>(hm), 5, 1) == 15 && hl::coordinate<1>(hm, 7) == 2);

using SM = decltype(sl::make_root<2, 4, 3>());
static_assert(std::is_empty_v<SM> && SM::layout.nslots == 0);
constexpr auto sm = sl::make_root<2, 4, 3>();
constexpr auto sc = sl::coalesce<1>(sl::slice<2, 3>(sl::flatten<0, 1>(sm)));
static_assert(decltype(sc)::layout.nmodes == 1 && decltype(sc)::layout.shape[0] == 8 && decltype(sc)::layout.stride[0] == 3);
constexpr auto su = sl::unflatten<1, 2, 2>(sm);
static_assert(decltype(su)::layout.stride[1] == 6 && decltype(su)::layout.nslots == 0);
static_assert(sl::group_at(sl::slice<2, 0>(sm), 5, 1) == 15 && sl::coordinate<1>(sm, 7) == 2);

// Dynamic dp and tp: dp's stride (4 * tp) is a run-time value on both sides; unflattening cp
// (stride tp) needs its outer stride 2 * tp at run time: an int on the Hana side, a new slot
// (recipe tp * 2) on the struct side.
inline int dynamic_check(int n) {
  const auto h = hl::unflatten<1, 2, 2>(hl::make_root(n, hl::C<4>, n + 1));
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(h.shape)>, hana::tuple<int, hana::int_<2>, hana::int_<2>, int>>);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(h.stride)>, hana::tuple<int, int, int, hana::int_<1>>>);
  const auto s = sl::unflatten<1, 2, 2>(sl::make_root<-1, 4, -1>(n, n + 1));
  static_assert(decltype(s)::layout.nslots == 4);  // dp, tp, dp's stride, the new outer stride
  return hl::coordinate<1>(h, 7) - sl::coordinate<1>(s, 7);
}
