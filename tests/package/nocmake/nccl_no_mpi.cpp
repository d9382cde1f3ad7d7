// A non-CMake build of an NCCL program with no MPI at all (torchrun, srun without MPI), no -D:
//   g++ -std=c++20 -I<prefix>/include -I/usr/local/cuda/include nccl_no_mpi.cpp -o nccl_no_mpi \
//       -L/usr/local/cuda/lib64 -lnccl -lcudart
// or with the macro and the umbrella header only (the test defines NCCL_NO_MPI_MACRO too):
//   g++ -std=c++20 -DDEVMESH_WITH_NCCL -I<prefix>/include ... (the same)
// The GPU path is compiled and linked; it runs with --gpus only.
#include <devmesh/devmesh.hpp>      // the layouts
#if !defined(NCCL_NO_MPI_MACRO)
#include <devmesh/nccl.hpp>         // dm::nccl, world_from_env()
#include <devmesh/runtime/device_mesh.hpp>  // dm::init_device_mesh
#endif

#include <cstdio>
#include <cstring>
#include <span>

namespace dm = devmesh;
using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 1>>;

int train_on_gpus() {
  auto world = dm::nccl::world_from_env();  // RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
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
  if (argc > 1 && std::strcmp(argv[1], "--gpus") == 0) return train_on_gpus();
  int nccl = 0;
  ncclGetVersion(&nccl);
#if defined(NCCL_NO_MPI_MACRO)
  std::printf("devmesh nccl (no MPI, -DDEVMESH_WITH_NCCL) ok: NCCL %d\n", nccl);
#else
  std::printf("devmesh nccl (no MPI, no -D) ok: NCCL %d\n", nccl);
#endif
  return nccl == NCCL_VERSION_CODE ? 0 : 1;
}
