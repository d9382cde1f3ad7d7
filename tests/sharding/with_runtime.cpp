// The sharding layer next to the runtime (devmesh.hpp with the MPI backend, both include
// orders are the two TUs of this test): no name collides (the runtime has a free function
// devmesh::reduce; its rank placement is detail::rank_placement), and a Partial's reduction
// maps to the runtime's operator at compile time.
#ifdef DEVMESH_SHARDING_FIRST
#include <devmesh/sharding.hpp>
#include <devmesh/devmesh.hpp>
#else
#include <devmesh/devmesh.hpp>
#include <devmesh/sharding.hpp>
#endif

namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
using spec = dm::sharding<mesh2d, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::partial<dm::reduction::avg>>>;
static_assert(dm::to_op<dm::op>(spec{}.placement_on<"tp">().op) == dm::op::avg);
static_assert(dm::to_op<dm::op>(dm::reduction::min) == dm::op::min);

#ifndef DEVMESH_SHARDING_FIRST
int main() { return spec{}.local_shape(dm::extents<13>{}, 4)[0] == 6 ? 0 : 1; }
#endif
