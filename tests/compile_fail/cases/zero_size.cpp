// Misuse: a static dim of size 0
// expect: devmesh: a dim size must be positive
// expect: non_positive_size<.*name"tp"
// expect: size_value<0>
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

using bad = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 0>>;
void misuse() { (void)bad{}.size(); }
