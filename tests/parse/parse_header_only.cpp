// parse.hpp compiles on its own (no other devmesh include first).
#include <devmesh/core/parse.hpp>

int main() { return devmesh::parse_mesh<devmesh::mesh<devmesh::dim<"a">>>("a=3").size() == 3 ? 0 : 1; }
