// Misuse: static sizes whose product overflows even a 64-bit integer (INT_MAX cubed)
// compilers: gcc clang
// expect: devmesh: the mesh has more ranks than an int can count
// expect: size_overflow<.*name"x".*name"y".*name"z"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

using bad = dm::mesh<dm::dim<"x", 2147483647>, dm::dim<"y", 2147483647>, dm::dim<"z", 2147483647>>;
void misuse() { (void)bad{}.size(); }
