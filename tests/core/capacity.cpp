// No fixed capacity: a layout is sized by what it holds (layout.hpp), so meshes past the
// limits of the former representation (64 dims with aliases, 64 atoms, 512 atom entries)
// work, with every dim still there and every query right.
#include <devmesh/devmesh.hpp>

#include <algorithm>
#include <array>

namespace dm = devmesh;

namespace {
#define D(i) dm::dim<#i, 1>
#define D8(a, b, c, d, e, f, g, h) D(a), D(b), D(c), D(d), D(e), D(f), D(g), D(h)
using mesh32 = dm::mesh<D8(0, 1, 2, 3, 4, 5, 6, 7), D8(8, 9, 10, 11, 12, 13, 14, 15),
                        D8(16, 17, 18, 19, 20, 21, 22, 23), D8(24, 25, 26, 27, 28, 29, 30, 31)>;
// 65 dims: "0" ... "63" of size 1, then "64" of size 6.
using mesh65 = dm::mesh<D8(0, 1, 2, 3, 4, 5, 6, 7), D8(8, 9, 10, 11, 12, 13, 14, 15),
                        D8(16, 17, 18, 19, 20, 21, 22, 23), D8(24, 25, 26, 27, 28, 29, 30, 31),
                        D8(32, 33, 34, 35, 36, 37, 38, 39), D8(40, 41, 42, 43, 44, 45, 46, 47),
                        D8(48, 49, 50, 51, 52, 53, 54, 55), D8(56, 57, 58, 59, 60, 61, 62, 63),
                        dm::dim<"64", 6>>;
#undef D

static_assert(mesh65::ndim == 65 && mesh65{}.size() == 6 && mesh65{}.size<"64">() == 6);

// 66 dims: a whole-mesh flatten keeps all 65 former dims as aliases next to the new one.
constexpr auto all = mesh65{}.flatten<"all">();
static_assert(decltype(all)::ndim == 1 && decltype(all)::ndim_with_aliases == 66);
static_assert(all.size() == 6 && all.size<"all">() == 6 && all.size<"64">() == 6 && all.size<"0">() == 1);
static_assert(std::ranges::equal(all.group<"64">(4), std::array{0, 1, 2, 3, 4, 5}));

// 66 modes: a slice keeps the root's rank space; unflatten cuts its last mode in two.
constexpr auto cut = mesh65{}.slice<"64">().unflatten<"64", dm::dim<"hi", 2>, dm::dim<"lo", 3>>();
static_assert(cut.shape() == std::array{2, 3} && cut.root_size() == 6);
static_assert(std::ranges::equal(cut.group<"hi">(1), std::array{1, 4}));

// 544 mode entries: 32 dims of one mode each, and 16 aliases of all 32 (32 + 16 * 32).
template <dm::fixed_string Alias, class M>
constexpr auto alias_all(const M& m) {
  return dm::flatten<Alias, "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14",
                            "15", "16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28",
                            "29", "30", "31">(m);
}
constexpr auto a5 = alias_all<"a4">(alias_all<"a3">(alias_all<"a2">(alias_all<"a1">(alias_all<"a0">(mesh32{})))));
constexpr auto a10 = alias_all<"a9">(alias_all<"a8">(alias_all<"a7">(alias_all<"a6">(alias_all<"a5">(a5)))));
constexpr auto a16 =
    alias_all<"f">(alias_all<"e">(alias_all<"d">(alias_all<"c">(alias_all<"b">(alias_all<"a">(a10))))));
static_assert(decltype(a16)::layout.nmodes == 544 && decltype(a16)::ndim_with_aliases == 48);
static_assert(a16.size<"f">() == 1 && a16.size<"a0">() == 1 && a16.group<"f">(0).size() == 1);

// The most modes a coalesced layout holds: 30 dims of size 2 (2^30 ranks, the largest power of
// two an int counts) flattened in reverse order, so that no two modes merge.
#define D(i) dm::dim<#i, 2>
using mesh30 = dm::mesh<D8(0, 1, 2, 3, 4, 5, 6, 7), D8(8, 9, 10, 11, 12, 13, 14, 15),
                        D8(16, 17, 18, 19, 20, 21, 22, 23), D(24), D(25), D(26), D(27), D(28), D(29)>;
#undef D
constexpr auto reversed = mesh30{}.flatten<"r", "29", "28", "27", "26", "25", "24", "23", "22", "21", "20", "19", "18", "17",
                                           "16", "15", "14", "13", "12", "11", "10", "9", "8", "7", "6", "5", "4", "3",
                                           "2", "1", "0">();
static_assert(mesh30{}.size() == 1 << 30);
static_assert(reversed.dim_layout(reversed.dim_index<"r">()).coalesce().count == 30);
static_assert(mesh30{}.flatten<"all">().dim_layout(0).coalesce().count == 1);  // in order: one mode
#undef D8
}  // namespace

int main() { return 0; }
