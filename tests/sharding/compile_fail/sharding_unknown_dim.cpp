// Misuse: a placement on a dim the mesh does not have ("pp"); the diagnostic lists the mesh's dims
// expect: devmesh: sharding: a placement names a dim the mesh does not have
// expect: placement_on_unknown_dim<.*name"pp".*existing_dims<.*name"dp".*name"tp"
#include <devmesh/sharding.hpp>

namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

void misuse() { (void)dm::sharding<mesh2d, dm::on<"dp", dm::shard<0>>, dm::on<"pp", dm::shard<1>>>{}; }
