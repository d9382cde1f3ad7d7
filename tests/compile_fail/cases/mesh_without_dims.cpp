// Misuse: mesh<> with no dims
// expect: devmesh: a mesh needs at least one dim
// expect: mesh_without_dims
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

void misuse() { (void)dm::mesh<>{}.size(); }
