// Misuse: unflatten of a flattened dim made of a dynamic dim, with a dynamic new size
// expect: devmesh: unflatten of a flattened \(multi-mode\) dim needs static sizes
// expect: unflatten_needs_static_sizes<.*name"rs"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;

void misuse() {
  const auto f = hsdp(2).flatten<"rs", "replicate", "shard">();
  (void)f.unflatten<"rs", dm::dim<"x", 2>, dm::dim<"y">>();
}
