// Misuse: slice<>() without dim names
// expect: devmesh: slice<>\(\) needs at least one dim name
// expect: slice_without_dims<.*name"dp"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr mesh3d m{};
  (void)m.slice<>();
}
