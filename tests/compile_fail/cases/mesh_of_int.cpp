// Misuse: mesh<dim<"dp", 2>, int>: an argument that is not a dim
// expect: dim_spec
// expect-gcc: devmesh: every argument of mesh<...> must be a dim<"name", size>
// expect-clang: devmesh: every argument of mesh<...> must be a dim<"name", size>
// expect-clang: 'int' does not satisfy 'dim_spec'
// expect-nvcc: type constraint failed for "int"
// first-error-gcc: template constraint failure for .*devmesh::mesh
// first-error-clang: constraints not satisfied for class template 'mesh'
// first-error-nvcc: template constraint not satisfied
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

void misuse() {
  dm::mesh<dm::dim<"dp", 2>, int> m;
  (void)m;
}
