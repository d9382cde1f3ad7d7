// A non-CMake build of an NCCL program with the umbrella header only: the macros select the
// backends, as linking devmesh::nccl and devmesh::mpi does in CMake.
//   mpicxx -std=c++20 -DDEVMESH_WITH_MPI -DDEVMESH_WITH_NCCL -I<prefix>/include -I/usr/local/cuda/include \
//          nccl_macro.cpp -o nccl_macro -L/usr/local/cuda/lib64 -lnccl -lcudart
// The GPU path is compiled and linked; it runs with --gpus only.
#include <devmesh/devmesh.hpp>

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
  int nccl = 0;
  ncclGetVersion(&nccl);
  std::printf("devmesh nccl (-DDEVMESH_WITH_MPI -DDEVMESH_WITH_NCCL) ok: NCCL %d\n", nccl);
  return nccl == NCCL_VERSION_CODE ? 0 : 1;
}
