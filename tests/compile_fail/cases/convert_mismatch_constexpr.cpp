// Misuse: a dynamic (2, 8) mesh converted to the static (2, 4) mesh type, in a constant expression
// expect: fail_conversion
// expect-gcc: devmesh: a value differs from the target type's
// first-error-gcc: call to non-.constexpr. function .*fail_conversion|non-constant condition|is not a constant expression
// first-error-clang: must be initialized by a constant expression
// first-error-nvcc: expression must have a constant value
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;

using mesh24 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
using dynamic2 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;
constexpr mesh24 m(dynamic2(2, 8));
