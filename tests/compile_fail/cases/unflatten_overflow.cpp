// Misuse: unflatten into static sizes whose product (2^64) cannot fit in an int, with one inferred dim
// compilers: gcc clang
// expect: devmesh: the mesh has more ranks than an int can count
// expect: size_overflow<.*name"w".*name"x".*name"y".*name"z".*name"q"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using one = dm::mesh<dm::dim<"dp">>;

void misuse() {
  (void)one(4).unflatten<"dp", dm::dim<"w", 65536>, dm::dim<"x", 65536>, dm::dim<"y", 65536>,
                         dm::dim<"z", 65536>, dm::dim<"q">>();
}
