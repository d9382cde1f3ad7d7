// Misuse: parse_mesh for a mesh whose dim name "a b" has a space: no mesh spec can name it
// expect: devmesh: parse_mesh: a dim name with '=', ',', a space or a tab in it cannot be written
// expect: unparsable_dim_name<.*name"a b"
#include <devmesh/core/parse.hpp>

namespace dm = devmesh;
using spaced = dm::mesh<dm::dim<"a b">, dm::dim<"c">>;

void misuse() { (void)dm::parse_mesh<spaced>("a b=2,c=3"); }
