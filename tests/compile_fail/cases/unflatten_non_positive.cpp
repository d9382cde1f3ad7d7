// Misuse: unflatten into a new dim of size 0
// compilers: gcc clang
// expect: devmesh: a dim size must be positive
// expect: non_positive_size<.*name"b".*size_value<0>
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr mesh3d m{};
  (void)m.unflatten<"dp", dm::dim<"a", 2>, dm::dim<"b", 0>>();
}
