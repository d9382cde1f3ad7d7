// Misuse: a static dim of negative size (other than dynamic_size)
// compilers: gcc clang
// expect: devmesh: a dim size must be positive
// expect: non_positive_size<.*name"tp"
// expect: size_value<-3>
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

using bad = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", -3>>;
void misuse() { (void)bad{}.size(); }
