// Misuse: comm_split<>(r) with an empty template argument list
// compilers: gcc clang
// expect: devmesh: group<>\(r\) and comm_split<>\(r\) need at least one dim name
// expect: group_without_dims<.*name"tp"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr mesh3d m{};
  (void)m.comm_split<>(0);
}
