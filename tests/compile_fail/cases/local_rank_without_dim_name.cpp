// Misuse: local_rank() without a dim name on a mesh of three dims
// compilers: gcc clang
// expect: devmesh: this call names no dim, and the mesh has more than one
// expect: dim_name_needed<.*name"dp".*name"cp".*name"tp"
#include "../support/declared_comm.hpp"

namespace dm = devmesh;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

int misuse(const dm::device_mesh<mesh3d, declared_comm>& mesh) {
  return mesh.local_rank();
}
