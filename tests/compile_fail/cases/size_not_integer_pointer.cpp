// Misuse: a pointer given as a size (here a C string), for the dynamic dim of hsdp
// compilers: gcc clang
// expect: devmesh: a mesh size must be an integer
// expect: size_not_integer<.*name"replicate".*const char ?\*
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;

void misuse() { (void)hsdp("2"); }
