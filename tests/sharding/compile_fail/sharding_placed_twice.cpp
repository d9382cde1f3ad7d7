// Misuse: two placements for one mesh dim: the alias "dp_tp" together with its own dim "tp"
// expect: devmesh: sharding: a mesh dim has two placements
// expect: placed_twice<.*name"dp_tp".*name"tp"
#include <devmesh/sharding.hpp>

#include <type_traits>

namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
using flat = std::remove_const_t<decltype(mesh2d{}.flatten<"dp_tp", "dp", "tp">())>;

void misuse() { (void)dm::sharding<flat, dm::on<"tp", dm::replicate>, dm::on<"dp_tp", dm::shard<0>>>{}; }
