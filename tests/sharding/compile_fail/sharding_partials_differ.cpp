// Misuse: Partial placements of two reductions, sum on "dp" and max on "tp" (PyTorch refuses
// them too: "Mixed Partial reduce types are not supported")
// expect: devmesh: sharding: Partial placements of different reductions
// expect: partial_reductions_differ<.*name"tp".*name"dp"
#include <devmesh/sharding.hpp>

namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

void misuse() {
  (void)dm::sharding<mesh2d, dm::on<"dp", dm::partial<dm::reduction::sum>>, dm::on<"tp", dm::partial<dm::reduction::max>>>{};
}
