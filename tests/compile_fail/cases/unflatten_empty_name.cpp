// Misuse: unflatten into a new dim with an empty name
// compilers: gcc clang
// expect: devmesh: a dim name must not be empty
// expect: empty_dim_name<.*size_value<2>
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr mesh3d m{};
  (void)m.unflatten<"dp", dm::dim<"a", 1>, dm::dim<"", 2>>();
}
