// Control: the devmesh diagnostic comes first but another error follows it (what a
// cascade looks like), so the harness must reject this case.
// expect: devmesh: unknown dim
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

constexpr int pp_index = mesh3d::dim_index<"pp">();  // evaluated here, so its error comes first
int not_a_devmesh_error = "a string";
