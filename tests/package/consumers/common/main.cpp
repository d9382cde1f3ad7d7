// A consumer of devmesh::devmesh: compiles only if the target gives it the headers,
// C++20 and Boost.Hana; runs and prints what a user's first program would.
#include <devmesh/devmesh.hpp>

#include <algorithm>
#include <array>
#include <iostream>

namespace dm = devmesh;

using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
static_assert(mesh2d{}.coordinate(5) == std::array{1, 1});
static_assert(std::ranges::equal(mesh2d{}.group<"dp">(5), std::array{1, 5}));

int main() {
  using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;
  const auto h = hsdp::for_world(8);
  if (h.size<"replicate">() != 2 || h.rank_at({1, 2}) != 6) return 1;
  std::cout << "devmesh consumer ok: " << mesh2d{} << " " << h << "\n";
}
