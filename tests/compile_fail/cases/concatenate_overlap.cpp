// Misuse: concatenating two meshes of one root whose dims share ranks (dp is part of dp_cp)
// expect: devmesh: concatenate: a dim of one mesh shares ranks with a dim of the other
// expect: concatenated_dims_overlap<.*name"dp"
// expect: concatenated_dims_overlap<.*name"dp_cp"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

void misuse() {
  constexpr mesh3d m{};
  constexpr auto f = m.flatten<"dp_cp", "dp", "cp">();
  (void)dm::concatenate(m["dp"_dim], f["dp_cp"_dim]);
}
