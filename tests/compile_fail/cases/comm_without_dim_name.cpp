// Misuse: comm() without a dim name on a mesh of two dims (PyTorch's get_group() needs a 1-D mesh too)
// compilers: gcc clang
// expect: devmesh: this call names no dim, and the mesh has more than one
// expect: dim_name_needed<.*name"dp".*name"tp"
#include "../support/declared_comm.hpp"

namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

void misuse(const dm::device_mesh<mesh2d, declared_comm>& mesh) {
  (void)mesh.comm().size();
}
