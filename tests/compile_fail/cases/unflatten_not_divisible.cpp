// Misuse: unflatten of a flattened dim (a=4, b=3 of an (a, c, b) mesh: not contiguous, modes
// (4:6)(3:1)) into (3, 4): y's end (4) falls inside a, where PyTorch cannot cut it
// expect: devmesh: unflatten: a new dim's size puts its end inside a dim of the one being split
// expect: unflatten_not_divisible<.*name"y".*size_value<4>.*cut_from<.*name"ab".*inside<.*name"a"
// expect: sizes_that_cut<1, 3, 6, 12>
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

using mesh_acb = dm::mesh<dm::dim<"a", 4>, dm::dim<"c", 2>, dm::dim<"b", 3>>;
void misuse() {
  constexpr auto f = mesh_acb{}.flatten<"ab", "a", "b">().slice<"ab">();
  (void)f.unflatten<"ab", dm::dim<"x", 3>, dm::dim<"y", 4>>();
}
