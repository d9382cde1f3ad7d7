// Misuse: unflatten in place of an alias whose ranks the mesh's own dims share, with sizes
// given at run time: only a compile-time cut can keep dp and tp whole
// compilers: gcc clang
// expect: devmesh: unflatten of an alias in place, whose ranks a dim of this mesh shares, needs static values
// expect: unflatten_needs_static_sizes<.*name"dp_tp".*shared_with<.*name"dp".*dynamic<.*sizes_given_at_run_time<.*name"x".*name"y"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

void misuse(int x) {
  constexpr auto f = dm::mesh<dm::dim<"dp", 4>, dm::dim<"tp", 2>>{}.flatten<"dp_tp", "dp", "tp">();
  (void)f.unflatten<"dp_tp", dm::dim<"x">, dm::dim<"y">>(x, dm::dynamic_size);
}
