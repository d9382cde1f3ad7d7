// Misuse: a slice names an alias together with one of its own dims
// expect: devmesh: a slice or group names an alias together with one of its own dims
// expect: dims_overlap<.*name"dp_cp"
// expect: dims_overlap<.*name"cp"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr auto f = mesh3d{}.flatten<"dp_cp", "dp", "cp">();
  (void)f.slice<"dp_cp", "cp">();
}
