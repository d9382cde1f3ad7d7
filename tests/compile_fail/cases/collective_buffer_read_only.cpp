// Misuse: an in-place collective on a read-only buffer
// expect: devmesh: this collective writes into the buffer, and it is read-only
// expect: buffer_not_writable<
#include <vector>

#include "../support/declared_comm.hpp"

namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

void misuse(const dm::device_mesh<mesh2d, declared_comm>& mesh, const std::vector<float>& grad) {
  mesh.all_reduce<"tp">(grad, dm::op::sum);
}
