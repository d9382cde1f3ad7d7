// A non-CMake build of an MPI program, no -D: <devmesh/mpi.hpp> alone brings everything.
//   mpicxx -std=c++20 -I<prefix>/include mpi_headers.cpp -o mpi_headers
#include <devmesh/mpi.hpp>          // dm::mpi: environment, world(), communicator

#include <iostream>
#include <span>
#include <vector>

namespace dm = devmesh;
using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 1>>;

int main(int argc, char** argv) {
  dm::mpi::environment env(argc, argv);
  auto world = dm::mpi::world();
  auto mesh = dm::init_device_mesh<hsdp>(world);
  std::vector<float> grad(4, 1.f);
  mesh.all_reduce<"replicate">(std::span(grad), dm::op::sum);
  std::cout << "devmesh mpi (headers, no -D) ok: " << mesh << ", sum " << grad[0] << "\n";
  return grad[0] == static_cast<float>(world.size()) ? 0 : 1;
}
