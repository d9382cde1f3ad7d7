// Misuse: unflatten in place of an alias whose ranks the mesh's own dims share, on a mesh of
// dynamic size: whether the cut keeps replicate and shard whole depends on replicate's size
// expect: devmesh: unflatten of an alias in place, whose ranks a dim of this mesh shares, needs static values
// expect: unflatten_needs_static_sizes<.*name"rs".*shared_with<.*name"replicate".*dynamic<.*name"replicate"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;

void misuse() {
  const auto f = hsdp(2).flatten<"rs", "replicate", "shard">();
  (void)f.unflatten<"rs", dm::dim<"x", 2>, dm::dim<"y">>();
}
