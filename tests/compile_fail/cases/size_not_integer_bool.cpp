// Misuse: a bool given as the size of the second dynamic dim (true would become 1)
// compilers: gcc clang
// expect: devmesh: a mesh size must be an integer
// expect: size_not_integer<.*name"b".*bool
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using two = dm::mesh<dm::dim<"a">, dm::dim<"b">>;

void misuse() { (void)two(2, true); }
