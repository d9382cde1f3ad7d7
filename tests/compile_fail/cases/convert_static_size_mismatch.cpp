// Misuse: a static (2, 8) mesh converted to the static (2, 4) mesh type: tp's sizes differ
// expect: devmesh: mesh conversion: a static value of the target mesh type differs from the mesh's
// expect: converted_value_differs<.*name"tp"
// expect: converted_value_differs<.*size_of_mode.*size_value<4>.*size_value<8>
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;

using mesh24 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
using mesh28 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 8>>;
void misuse() {
  const mesh24 m = mesh28{};
  (void)m;
}
