// Misuse: tensor dim 0 has an explicit shard order over "tp", and "dp" shards it outside that order
// expect: devmesh: sharding: a tensor dim with a shard_order is sharded by another clause too
// expect: shard_order_not_exclusive<.*name"dp".*tensor_dim_of<0>
#include <devmesh/sharding.hpp>

namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

void misuse() { (void)dm::sharding<mesh2d, dm::shard_order<0, "tp">, dm::on<"dp", dm::shard<0>>>{}; }
