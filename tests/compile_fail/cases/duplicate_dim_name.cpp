// Misuse: two dims of one mesh share a name
// expect: devmesh: duplicate dim name
// expect: duplicate_dim_name<.*name"pp"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

using bad = dm::mesh<dm::dim<"pp", 2>, dm::dim<"tp", 2>, dm::dim<"pp", 4>>;
void misuse() { (void)bad{}.size(); }
