// Compile test: a collective on an element type with no MPI datatype is a static_assert
// naming the type (error::unsupported_element_type<not_a_number, devmesh::mpi::communicator>).
// With DEVMESH_TEST_SUPPORTED the same code uses float and must compile (control). Run through
// tests/compile_fail/run_case.sh: the diagnostic must be the first error and the only one.
// expect: devmesh: this element type has no datatype
// expect: unsupported_element_type<not_a_number, devmesh::mpi::communicator>
#include <devmesh/devmesh.hpp>

#include <span>

namespace dm = devmesh;
struct not_a_number {
  int x;
};
#if defined(DEVMESH_TEST_SUPPORTED)
using element = float;
#else
using element = not_a_number;
#endif

using mesh2 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 2>>;

void reduce_it(const dm::device_mesh<mesh2, dm::mpi::communicator>& m, std::span<element> buf) {
  m.all_reduce<"tp">(buf, dm::op::sum);
}
