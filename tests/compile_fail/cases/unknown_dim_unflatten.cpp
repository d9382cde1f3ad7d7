// Misuse: unflatten<"pp", ...>() splitting an unknown dim
// compilers: gcc clang
// expect: devmesh: unknown dim
// expect: unknown_dim<.*name"pp"
// expect: existing_dims<.*name"dp".*name"cp".*name"tp"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr mesh3d m{};
  (void)m.unflatten<"pp", dm::dim<"a", 1>, dm::dim<"b", 2>>();
}
