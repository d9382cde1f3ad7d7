// Control: an unrelated error that names a devmesh type (a member the mesh does not have)
// comes before the devmesh diagnostic, so the harness must reject this case: a qualified
// name such as `devmesh::mesh<...>` in an error is not devmesh's diagnostic.
// expect: devmesh: unknown dim
// expect: no_such_member.*devmesh::|devmesh::.*no_such_member
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

constexpr mesh3d m{};
int not_a_devmesh_error = m.no_such_member;  // names devmesh::mesh<...> in its message
int misuse() { return m.size<"pp">(); }
int another_error = m.no_such_member;  // and another one after it
