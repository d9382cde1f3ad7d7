// Misuse: unflatten of a flattened (2 x 3) dim into (3, 2): the new dims straddle the old
// ones
// expect: devmesh: unflatten: the new sizes do not split the modes
// expect: unflatten_not_divisible<.*name"ab"
// expect: size_value<[23]>
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

using mesh23 = dm::mesh<dm::dim<"a", 2>, dm::dim<"b", 3>>;
void misuse() {
  constexpr auto f = mesh23{}.flatten<"ab", "a", "b">();
  (void)f.unflatten<"ab", dm::dim<"x", 3>, dm::dim<"y", 2>>();
}
