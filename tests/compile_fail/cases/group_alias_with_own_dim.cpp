// Misuse: a group names a dim together with an alias that contains it
// compilers: gcc clang
// expect: devmesh: a slice or group names an alias together with one of its own dims
// expect: dims_overlap<.*name"dp"
// expect: dims_overlap<.*name"dp_cp"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr auto f = mesh3d{}.flatten<"dp_cp", "dp", "cp">();
  (void)f.group<"dp", "dp_cp">(0);
}
