// Misuse: unflatten with two dynamic new dims
// expect: devmesh: unflatten: at most one new dim may have a dynamic size
// expect: unflatten_two_dynamic<.*name"replicate"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;

void misuse() { (void)hsdp(2).unflatten<"replicate", dm::dim<"a">, dm::dim<"b">>(); }
