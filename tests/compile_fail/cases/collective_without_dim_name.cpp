// Misuse: a collective without a dim name on a mesh of two dims
// expect: devmesh: this call names no dim, and the mesh has more than one
// expect: dim_name_needed<.*name"dp".*name"tp"
#include <vector>

#include "../support/declared_comm.hpp"

namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

void misuse(const dm::device_mesh<mesh2d, declared_comm>& mesh, std::vector<float>& grad) {
  mesh.all_reduce(grad, dm::op::sum);
}
