// Control: the expected diagnostic fires, but for another dim than the one expected,
// so the harness must reject this case.
// expect: devmesh: unknown dim
// expect: unknown_dim<.*name"qq"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

int misuse() { return mesh3d{}.size<"pp">(); }
