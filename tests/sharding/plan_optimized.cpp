// tests/sharding/plan_optimized.cpp: the planner of dynamic specs compiled at -O2 with every
// warning an error (sharding.plan_optimized): g++'s optimizer once saw a 1-D mesh's chains
// indexed past their bound (-Warray-bounds, at -O2 and -O3) where the -O0 test builds saw nothing.
#include <devmesh/sharding.hpp>

namespace dm = devmesh;

int plans(int a, int b, int c) {
  const dm::mesh<dm::dim<"dp">> m1(a);
  const dm::mesh<dm::dim<"dp">, dm::dim<"tp">> m2(a, b);
  const dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">> m3(a, b, c);
  return dm::plan_redistribute(dm::parse_sharding("S(0)", m1), dm::parse_sharding("S(1)", m1)).count +
         dm::plan_redistribute(dm::parse_sharding("S(0),S(0)", m2), dm::parse_sharding("R,S(1)", m2)).count +
         dm::plan_redistribute(dm::parse_sharding("S(0),S(1),P(sum)", m3), dm::parse_sharding("R,S(0),S(1)", m3)).count;
}
