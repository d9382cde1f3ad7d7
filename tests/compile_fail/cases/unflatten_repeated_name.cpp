// Misuse: unflatten into two new dims of the same name
// compilers: gcc clang
// expect: devmesh: the same dim is named twice
// expect: dim_repeated<.*name"a"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr mesh3d m{};
  (void)m.unflatten<"dp", dm::dim<"a", 1>, dm::dim<"a", 2>>();
}
