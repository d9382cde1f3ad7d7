// Misuse: a dim with an empty name
// expect: devmesh: a dim name must not be empty
// expect: empty_dim_name
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

using bad = dm::mesh<dm::dim<"dp", 2>, dm::dim<"", 4>>;
void misuse() { (void)bad{}.size(); }
