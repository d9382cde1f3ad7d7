// Misuse: a fully static (2, 2, 2) mesh given the sizes (2, 3, 2), in a constant expression
// expect: fail_sizes
// expect-gcc: devmesh: a size is not positive, not the static size, or overflows
// expect-clang: in call to 'mesh\(2, 3, 2\)'
// first-error-gcc: call to non-.constexpr. function .*fail_sizes
// first-error-clang: must be initialized by a constant expression
// first-error-nvcc: expression must have a constant value
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

constexpr mesh3d m(2, 3, 2);
