// Misuse: unflatten into a new dim whose name another dim already has
// compilers: gcc clang
// expect: devmesh: the new dim name is already taken
// expect: name_taken<.*name"tp"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr mesh3d m{};
  (void)m.unflatten<"dp", dm::dim<"a", 1>, dm::dim<"tp", 2>>();
}
