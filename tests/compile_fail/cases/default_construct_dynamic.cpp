// Misuse: default-constructing a mesh that has a dynamic dim
// expect: devmesh: a mesh with dynamic dims cannot be default-constructed
// expect: default_constructed_dynamic_mesh<.*dims<devmesh::name"replicate"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;

void misuse() {
  hsdp h;
  (void)h;
}
