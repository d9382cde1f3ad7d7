// Misuse: static sizes whose product exceeds INT_MAX
// expect: devmesh: the mesh has more ranks than an int can count
// expect: size_overflow<.*name"big"
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

using bad = dm::mesh<dm::dim<"big", 65536>, dm::dim<"tp", 65536>>;
void misuse() { (void)bad{}.size(); }
