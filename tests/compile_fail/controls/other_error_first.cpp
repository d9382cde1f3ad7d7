// Control: a plain error comes before the devmesh diagnostic, so the harness must
// reject this case (the devmesh static_assert has to be the first error).
// expect: devmesh: unknown dim
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

int not_a_devmesh_error = "a string";
int misuse() { return mesh3d{}.size<"pp">(); }
