// Misuse: chunking::even, but 13 rows do not divide among the 8 shards of "dp" and "tp"
// expect: devmesh: sharding: chunking::even, but the tensor dim's extent is not a multiple of its number of shards
// expect: extent_not_divisible<.*tensor_dim_of<0>.*extent_of<13(LL)?>.*shard_count<8(LL)?>.*name"dp".*name"tp"
#include <devmesh/sharding.hpp>

namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

void misuse() {
  using spec =
      dm::sharding<mesh2d, dm::chunks<dm::chunking::even>, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<0>>>;
  (void)spec{}.local_shape(dm::extents<13, 6>{}, 0);
}
