// Misuse: flatten<"", ...>() into an alias with an empty name
// compilers: gcc clang
// expect: devmesh: a dim name must not be empty
// expect: empty_dim_name<.*existing_dims<.*name"dp"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr mesh3d m{};
  (void)m.flatten<"", "dp", "cp">();
}
