// Misuse: unflatten in place of an alias (dp_cp, contiguous: one coalesced mode of 6) into
// (x=3, y=2): y ends inside cp, and x spans part of cp and dp, which the mesh keeps as its own
// dims: the cut would split them across their ranks
// compilers: gcc clang
// expect: devmesh: unflatten of an alias in place: the new dims cut across a dim of this mesh
// expect: unflatten_cuts_mesh_dim<.*name"dp_cp".*name"dp"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

void misuse() {
  constexpr auto f = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 3>>{}.flatten<"dp_cp", "dp", "cp">();
  (void)f.unflatten<"dp_cp", dm::dim<"x", 3>, dm::dim<"y", 2>>();
}
