// Misuse: ten flatten aliases of all 48 dims of a mesh: 48 + 10 * 48 = 528 atom entries (the limit is 512)
// expect: devmesh: too many atom entries: the dims of a mesh, aliases included, hold at most 512
// expect: too_many_atom_entries<.*size_value<528>.*size_value<512>
// compilers: gcc
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

#define D(i) dm::dim<#i, 1>
using wide = dm::mesh<
    D(0), D(1), D(2), D(3), D(4), D(5), D(6), D(7),
    D(8), D(9), D(10), D(11), D(12), D(13), D(14), D(15),
    D(16), D(17), D(18), D(19), D(20), D(21), D(22), D(23),
    D(24), D(25), D(26), D(27), D(28), D(29), D(30), D(31),
    D(32), D(33), D(34), D(35), D(36), D(37), D(38), D(39),
    D(40), D(41), D(42), D(43), D(44), D(45), D(46), D(47)>;
#undef D

// Alias k flattens all 48 dims ("0", ..., "47").
template <dm::fixed_string Alias, class M>
constexpr auto alias_all(const M& m) {
  return m.template flatten<Alias, "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14",
                            "15", "16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28",
                            "29", "30", "31", "32", "33", "34", "35", "36", "37", "38", "39", "40", "41", "42",
                            "43", "44", "45", "46", "47">();
}
void misuse() {
  constexpr auto m9 = alias_all<"a8">(alias_all<"a7">(alias_all<"a6">(alias_all<"a5">(
      alias_all<"a4">(alias_all<"a3">(alias_all<"a2">(alias_all<"a1">(alias_all<"a0">(wide{})))))))));
  (void)alias_all<"a9">(m9);
}
