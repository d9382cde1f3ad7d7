// Linking devmesh::mpi must switch the MPI backend on (DEVMESH_WITH_MPI), bring MPI's headers
// and libraries and devmesh's compiled runtime (DEVMESH_SEPARATE_COMPILATION, the libraries
// devmesh-mpi and devmesh-runtime); devmesh::mpi_header_only the same backend without them.
// This compiles, links and runs as a one-process MPI job: a device mesh and a collective.
#include <devmesh/devmesh.hpp>

#include <cstdio>
#include <span>
#include <vector>

#ifndef DEVMESH_WITH_MPI
#error "devmesh: linking the MPI backend did not define DEVMESH_WITH_MPI"
#endif
#if defined(DEVMESH_CONSUMER_COMPILED) != defined(DEVMESH_SEPARATE_COMPILATION)
#error "devmesh: DEVMESH_SEPARATE_COMPILATION does not match the target linked (devmesh::mpi: compiled)"
#endif

namespace dm = devmesh;

int main(int argc, char** argv) {
  dm::mpi::environment env(argc, argv);
  auto world = dm::mpi::world();
  using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 1>>;
  auto mesh = dm::init_device_mesh<hsdp>(world);
  std::vector<int> v{world.rank() + 1};
  mesh.all_reduce<"replicate">(std::span(v), dm::op::sum);
  std::printf("devmesh mpi consumer ok (%s): world %d, replicate %d, sum %d\n",
              DEVMESH_HEADER_ONLY ? "header-only" : "compiled", world.size(), mesh.size<"replicate">(), v[0]);
  return mesh.size() == world.size() && v[0] == world.size() * (world.size() + 1) / 2 ? 0 : 1;
}
