// A non-CMake build in the compiled mode (docs/quickstart.md, "Without CMake"): every source
// file defines DEVMESH_SEPARATE_COMPILATION, and one of them (devmesh_src.cpp) includes
// <devmesh/src.hpp>, which compiles devmesh's runtime and MPI backend once.
//   mpicxx -std=c++20 -DDEVMESH_SEPARATE_COMPILATION -DDEVMESH_WITH_MPI -I<prefix>/include \
//       mpi_compiled.cpp devmesh_src.cpp -o mpi_compiled
#include <devmesh/devmesh.hpp>

#include <iostream>
#include <span>
#include <vector>

static_assert(!DEVMESH_HEADER_ONLY, "this program checks the compiled mode: build it with -DDEVMESH_SEPARATE_COMPILATION");

namespace dm = devmesh;
using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 1>>;

int main(int argc, char** argv) {
  dm::mpi::environment env(argc, argv);
  auto world = dm::mpi::world();
  auto mesh = dm::init_device_mesh<hsdp>(world);
  std::vector<float> grad(4, 1.f);
  mesh.all_reduce<"replicate">(std::span(grad), dm::op::sum);
  std::cout << "devmesh mpi (compiled: src.hpp) ok: " << mesh << ", sum " << grad[0] << "\n";
  return grad[0] == static_cast<float>(world.size()) ? 0 : 1;
}
