// Misuse: a flatten names the same dim twice
// expect: devmesh: a flatten names a dim twice
// expect: flatten_overlaps_itself<.*name"x"
// expect: name"dp"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr mesh3d m{};
  (void)m.flatten<"x", "dp", "dp">();
}
