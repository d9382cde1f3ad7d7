// Misuse: rank_at({0, 2, 0}) on a (2, 2, 2) static mesh, in a constant expression
// compilers: gcc clang
// expect: fail_coordinate
// expect-gcc: devmesh: coordinate out of range
// expect-clang: devmesh: coordinate out of range
// expect-clang: in call to .*rank_at\(\{0, 2, 0\}, 0\)
// first-error-gcc: non-constant condition for static assertion|call to non-.constexpr. function .*fail_
// first-error-clang: not an integral constant expression|must be initialized by a constant expression
// first-error-nvcc: expression must have a constant value
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

constexpr mesh3d m{};
static_assert(m.rank_at({0, 2, 0}) == 2);
