// Misuse: a collective's buffer that is not contiguous (a std::list)
// expect: devmesh: a collective's buffer must be a contiguous range
// expect: buffer_not_contiguous<.*list
#include <list>

#include "../support/declared_comm.hpp"

namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

void misuse(const dm::device_mesh<mesh2d, declared_comm>& mesh, std::list<float>& grad) {
  dm::all_reduce<"dp">(mesh, grad, dm::op::sum);
}
