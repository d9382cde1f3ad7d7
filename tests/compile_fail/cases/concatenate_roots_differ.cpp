// Misuse: concatenating meshes of two roots of different sizes
// expect: devmesh: concatenate: the meshes are not of one root
// expect: concatenated_roots_differ<.*name"a".*name"b"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;

void misuse() {
  constexpr dm::mesh<dm::dim<"a", 2>> two{};
  constexpr dm::mesh<dm::dim<"b", 4>> four{};
  (void)dm::concatenate(two, four);
}
