// Misuse: for_world() on a mesh with two dynamic dims
// expect: devmesh: for_world\(\) can infer at most one dynamic dim
// expect: for_world_ambiguous<.*name"dp".*name"tp"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

using two = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;
void misuse() { (void)two::for_world(8); }
