// Misuse: a collective on a std::vector<bool>, whose bools are packed into bits
// expect: devmesh: a collective's buffer must be a contiguous range, and std::vector<bool> is not one
// expect: buffer_packs_bits<.*vector<(bool|__nv_bool)
// compilers: gcc clang
#include <vector>

#include "../support/declared_comm.hpp"

namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

void misuse(const dm::device_mesh<mesh2d, declared_comm>& mesh, std::vector<bool>& flags) {
  mesh.all_reduce<"dp">(flags, dm::op::max);
}
