// Misuse: unflatten<"dp">() with no new dims
// expect: devmesh: unflatten needs at least one new dim
// expect: unflatten_without_dims<.*name"dp"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr mesh3d m{};
  (void)m.unflatten<"dp">();
}
