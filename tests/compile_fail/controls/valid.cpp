// Control: correct uses of everything the cases misuse. It must compile under every
// compiler with the same command line as the cases (proves the flags and paths work),
// and the harness must reject it as a compile-fail case.
// expect: devmesh:
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;
using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;

constexpr mesh3d m{};
static_assert(m.size<"tp">() == 2 && m.local_rank<"cp">(6) == 1 && mesh3d::dim_index<"tp">() == 2);
static_assert(m.group<"dp", "cp">(1).size() == 4 && m.comm_split<"tp">(5).color == 4);
static_assert(m.slice<"tp", "dp">().size() == 4 && m["tp"_dim].size() == 2);
static_assert(m.coordinate(7)[2] == 1 && m.rank_at({1, 1, 1}) == 7);
constexpr auto f = m.flatten<"dp_cp", "dp", "cp">();
static_assert(f.size<"dp_cp">() == 4 && f.slice<"dp_cp", "tp">().size() == 8);
static_assert(m.flatten<"all">().size<"all">() == 8);
static_assert(m.unflatten<"dp", dm::dim<"a", 1>, dm::dim<"b", 2>>().size<"b">() == 2);

int use() {
  const hsdp h(2);
  const auto w = hsdp::for_world(8);
  const auto u = h.unflatten<"replicate", dm::dim<"r1">, dm::dim<"r2", 2>>();
  return h.size() + w.size() + u.size<"r1">();
}
