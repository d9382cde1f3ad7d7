// Misuse: unflatten whose new sizes multiply to 6 for a dim of size 4
// expect: devmesh: unflatten: the product of the new dims
// expect: unflatten_product_mismatch<.*name"dp"
// expect: size_value<4>.*size_value<6>
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

using mesh2d = dm::mesh<dm::dim<"dp", 4>, dm::dim<"tp", 2>>;
void misuse() { (void)mesh2d{}.unflatten<"dp", dm::dim<"a", 2>, dm::dim<"b", 3>>(); }
