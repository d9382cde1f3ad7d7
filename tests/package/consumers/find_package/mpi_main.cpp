// Linking devmesh::mpi must switch the MPI backend on (DEVMESH_WITH_MPI) and bring MPI's
// headers and libraries: this compiles, links and runs as a one-process MPI job.
#include <devmesh/devmesh.hpp>

#include <cstdio>

#ifndef DEVMESH_WITH_MPI
#error "devmesh: linking devmesh::mpi did not define DEVMESH_WITH_MPI"
#endif
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  using hsdp = devmesh::mesh<devmesh::dim<"replicate">, devmesh::dim<"shard", 1>>;
  const auto h = hsdp::for_world(world);
  std::printf("devmesh mpi consumer ok: world %d, replicate %d\n", world, h.size<"replicate">());
  MPI_Finalize();
  return h.size() == world ? 0 : 1;
}
