// The fixed capacities of the compile-time layout: 64 dims (aliases included), 64 atoms,
// 512 atom entries. A layout exactly at a limit works, with every dim still there; one
// past it is a devmesh: diagnostic, never a silent drop or an array-bounds error (the
// compile-fail cases too_many_dims, flatten_too_many_dims, flatten_all_too_many_dims,
// unflatten_too_many_atoms, flatten_too_many_atom_entries).
#include <devmesh/devmesh.hpp>

#include <algorithm>
#include <array>

namespace dm = devmesh;

namespace {
#define D(i) dm::dim<#i, 1>
#define D8(a, b, c, d, e, f, g, h) D(a), D(b), D(c), D(d), D(e), D(f), D(g), D(h)
using mesh32 = dm::mesh<D8(0, 1, 2, 3, 4, 5, 6, 7), D8(8, 9, 10, 11, 12, 13, 14, 15),
                        D8(16, 17, 18, 19, 20, 21, 22, 23), D8(24, 25, 26, 27, 28, 29, 30, 31)>;
// 63 dims: "0" ... "61" of size 1, then "62" of size 6.
using mesh63 = dm::mesh<D8(0, 1, 2, 3, 4, 5, 6, 7), D8(8, 9, 10, 11, 12, 13, 14, 15),
                        D8(16, 17, 18, 19, 20, 21, 22, 23), D8(24, 25, 26, 27, 28, 29, 30, 31),
                        D8(32, 33, 34, 35, 36, 37, 38, 39), D8(40, 41, 42, 43, 44, 45, 46, 47),
                        D8(48, 49, 50, 51, 52, 53, 54, 55), D(56), D(57), D(58), D(59), D(60), D(61),
                        dm::dim<"62", 6>>;
#undef D8
#undef D

// 64 dims: a whole-mesh flatten of 63 dims keeps all 63 as aliases next to the new one.
constexpr auto all = mesh63{}.flatten<"all">();
static_assert(decltype(all)::ndim == 1 && decltype(all)::ndim_with_aliases == 64);
static_assert(all.size() == 6 && all.size<"all">() == 6 && all.size<"62">() == 6 && all.size<"0">() == 1);
static_assert(std::ranges::equal(all.group<"62">(4), std::array{0, 1, 2, 3, 4, 5}));

// 64 atoms: a slice keeps the root's 63 atoms; unflatten cuts one of them in two.
constexpr auto cut = mesh63{}.slice<"62">().unflatten<"62", dm::dim<"hi", 2>, dm::dim<"lo", 3>>();
static_assert(decltype(cut)::structure.natoms == 64);
static_assert(cut.shape() == std::array{2, 3});
static_assert(std::ranges::equal(cut.group<"hi">(1), std::array{1, 4}));

// 512 atom entries: 32 dims of one atom each, and 15 aliases of all 32 (32 + 15 * 32).
template <dm::fixed_string Alias, class M>
constexpr auto alias_all(const M& m) {
  return m.template flatten<Alias, "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14",
                            "15", "16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28",
                            "29", "30", "31">();
}
constexpr auto a5 = alias_all<"a4">(alias_all<"a3">(alias_all<"a2">(alias_all<"a1">(alias_all<"a0">(mesh32{})))));
constexpr auto a10 = alias_all<"a9">(alias_all<"a8">(alias_all<"a7">(alias_all<"a6">(alias_all<"a5">(a5)))));
constexpr auto a15 = alias_all<"e">(alias_all<"d">(alias_all<"c">(alias_all<"b">(alias_all<"a">(a10)))));
static_assert(decltype(a15)::structure.nentries == 512 && decltype(a15)::ndim_with_aliases == 47);
static_assert(a15.size<"e">() == 1 && a15.size<"a0">() == 1 && a15.group<"e">(0).size() == 1);
}  // namespace

int main() { return 0; }
