// A non-CMake build of an NCCL program bootstrapped over MPI, no -D:
//   mpicxx -std=c++20 -I<prefix>/include -I/usr/local/cuda/include nccl_headers.cpp -o nccl_headers \
//          -L/usr/local/cuda/lib64 -lnccl -lcudart
// The GPU path is compiled and linked; it runs with --gpus only. Without it the program
// checks that the libraries it loaded are the ones it was compiled against (no GPU needed).
#include <devmesh/mpi.hpp>                   // dm::mpi
#include <devmesh/nccl.hpp>                  // dm::nccl

#include <cstdio>
#include <cstring>
#include <span>

namespace dm = devmesh;
using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 1>>;

int train_on_gpus() {
  auto world = dm::nccl::world(dm::mpi::world());
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
  std::printf("devmesh nccl (headers, no -D) ok: NCCL %d, CUDA runtime %d\n", nccl, cudart);
  return nccl == NCCL_VERSION_CODE && cudart == CUDART_VERSION ? 0 : 1;
}
