// Misuse: "tp" shards tensor dim 2 of a 2-D tensor
// expect: devmesh: sharding: a placement shards a tensor dim the tensor does not have
// expect: tensor_dim_out_of_range<.*name"tp".*tensor_dim_of<2>.*tensor_rank<2>
#include <devmesh/sharding.hpp>

namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

void misuse() {
  using spec = dm::sharding<mesh2d, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<2>>>;
  (void)spec{}.local_shape(dm::extents<13, 6>{}, 0);
}
