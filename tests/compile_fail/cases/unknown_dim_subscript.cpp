// Misuse: m["pp"_dim] with an unknown dim
// expect: devmesh: unknown dim
// expect: unknown_dim<.*hana::string<'p', 'p'>
// expect: existing_dims<.*hana::string<'d', 'p'>.*hana::string<'c', 'p'>.*hana::string<'t', 'p'>
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr mesh3d m{};
  (void)m["pp"_dim];
}
