// Control: the devmesh diagnostic comes first, then an unrelated error that names a devmesh
// type (a member the mesh does not have), so the harness must reject this case.
// expect: devmesh: unknown dim
// expect: no_such_member.*devmesh::|devmesh::.*no_such_member
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

constexpr int pp_index = mesh3d::dim_index<"pp">();  // evaluated here, so its error comes first
int not_a_devmesh_error = mesh3d{}.no_such_member;   // names devmesh::mesh<...> in its message
