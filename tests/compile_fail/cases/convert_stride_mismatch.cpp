// Misuse: tp of a (dp=2, tp=4) mesh converted to the type of tp of a (tp=4, x=2) mesh: same size, other stride
// compilers: gcc clang
// expect: devmesh: mesh conversion: a static value of the target mesh type differs from the mesh's
// expect: converted_value_differs<.*name"tp"
// expect: converted_value_differs<.*stride_of_mode.*size_value<2>.*size_value<1>
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

using tp_of_24 = decltype(dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>{}["tp"_dim]);  // (4 : 1)
using tp_of_42 = decltype(dm::mesh<dm::dim<"tp", 4>, dm::dim<"x", 2>>{}["tp"_dim]);   // (4 : 2)
void misuse() {
  const tp_of_42 t = tp_of_24{};
  (void)t;
}
