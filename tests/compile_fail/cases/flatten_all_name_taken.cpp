// Misuse: flatten<"dp">() of the whole mesh into a name it already has
// compilers: gcc clang
// expect: devmesh: the new dim name is already taken
// expect: name_taken<.*name"dp"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr mesh3d m{};
  (void)m.flatten<"dp">();
}
