// Misuse: local_rank<"cp">(9) on a static mesh, in a constant expression
// compilers: gcc clang
// expect: fail_rank
// expect-gcc: devmesh: rank out of range
// expect-clang: devmesh: rank out of range
// expect-clang: check_position\(9\)
// first-error-gcc: non-constant condition for static assertion|call to non-.constexpr. function .*fail_
// first-error-clang: not an integral constant expression|must be initialized by a constant expression
// first-error-nvcc: expression must have a constant value
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

constexpr mesh3d m{};
constexpr int c = m.local_rank<"cp">(9);
