// Misuse: send and recv of different element types
// expect: devmesh: send and recv must hold the same element type
// expect: element_types_differ<int, float>
#include <vector>

#include "../support/declared_comm.hpp"

namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

void misuse(const dm::device_mesh<mesh2d, declared_comm>& mesh, const std::vector<int>& send, std::vector<float>& recv) {
  mesh.all_gather<"dp">(send, recv);
}
