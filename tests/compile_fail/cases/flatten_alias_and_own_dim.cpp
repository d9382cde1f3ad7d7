// Misuse: a flatten names an alias together with one of its own dims
// compilers: gcc clang
// expect: devmesh: a flatten names a dim twice, or an alias together with one of its own dims
// expect: flatten_overlaps_itself<.*name"x"
// expect: name"cp"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr auto f = mesh3d{}.flatten<"dp_cp", "dp", "cp">();
  (void)f.flatten<"x", "dp_cp", "cp">();
}
