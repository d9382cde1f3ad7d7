// Misuse: an explicit shard order that names "tp" twice
// expect: devmesh: sharding: a shard_order names a mesh dim twice
// expect: shard_order_repeats_dim<.*name"tp".*tensor_dim_of<0>
#include <devmesh/sharding.hpp>

namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

void misuse() { (void)dm::sharding<mesh2d, dm::shard_order<0, "tp", "dp", "tp">>{}; }
