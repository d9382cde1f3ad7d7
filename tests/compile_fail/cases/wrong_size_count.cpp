// Misuse: a dynamic mesh constructed with 3 sizes: it has 1 dynamic dim and 2 dims
// expect: devmesh: wrong number of sizes
// expect: wrong_size_count<.*size_value<3>
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;

void misuse() { (void)hsdp(2, 4, 8); }
