// Misuse: a dynamic mesh constructed from floating-point sizes (they would be truncated)
// expect: devmesh: a mesh size must be an integer
// expect: size_not_integer<.*name"a".*double
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using two = dm::mesh<dm::dim<"a">, dm::dim<"b">>;

void misuse() { (void)two(2.9, 4.5); }
