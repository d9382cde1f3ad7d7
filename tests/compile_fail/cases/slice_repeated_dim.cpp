// Misuse: the same dim twice in a slice
// expect: devmesh: the same dim is named twice
// expect: dim_repeated<.*name"tp"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr mesh3d m{};
  (void)m.slice<"tp", "dp", "tp">();
}
