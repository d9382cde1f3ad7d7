// Misuse: unflatten with run-time sizes: two sizes for three new dims, one of them dynamic
// compilers: gcc clang
// expect: devmesh: unflatten: wrong number of run-time sizes
// expect: unflatten_size_count<.*size_value<2>.*size_value<1>.*size_value<3>
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

void misuse(int n) {
  const dm::mesh<dm::dim<"world">> m(24);
  (void)m.unflatten<"world", dm::dim<"pp", 2>, dm::dim<"dp">, dm::dim<"tp", 3>>(n, 3);
}
