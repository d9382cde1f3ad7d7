// Linking devmesh::nccl (and devmesh::mpi) must switch the NCCL backend on
// (DEVMESH_WITH_NCCL), and bring NCCL's and the CUDA runtime's headers and libraries. The
// whole GPU path (NCCL world over MPI, a mesh, collectives on device memory) is compiled and
// linked; it runs only with --gpus (this test machine has none). Without it the program
// checks that the libraries it loaded are the ones it was compiled against.
#include <devmesh/devmesh.hpp>

#include <cstdio>
#include <cstring>
#include <span>

#ifndef DEVMESH_WITH_NCCL
#error "devmesh: linking devmesh::nccl did not define DEVMESH_WITH_NCCL"
#endif

namespace dm = devmesh;
using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 1>>;

int train_on_gpus() {
  auto world = dm::nccl::world(dm::mpi::world());  // one GPU per process, by local rank
  auto mesh = dm::init_device_mesh<hsdp>(world);
  float* grad = nullptr;
  cudaMalloc(&grad, 8 * sizeof(float));
  cudaStream_t stream = nullptr;
  mesh.all_reduce<"replicate">(std::span(grad, 8), dm::op::avg, stream);
  cudaStreamSynchronize(stream);
  cudaFree(grad);
  return 0;
}

int main(int argc, char** argv) {
  dm::mpi::environment env(argc, argv);
  if (argc > 1 && std::strcmp(argv[1], "--gpus") == 0) return train_on_gpus();
  int nccl = 0, cudart = 0;
  ncclGetVersion(&nccl);
  cudaRuntimeGetVersion(&cudart);
  std::printf("devmesh nccl consumer ok: NCCL %d (nccl.h %d), CUDA runtime %d (headers %d)\n", nccl, NCCL_VERSION_CODE,
              cudart, CUDART_VERSION);
  return nccl == NCCL_VERSION_CODE && cudart == CUDART_VERSION ? 0 : 1;
}
