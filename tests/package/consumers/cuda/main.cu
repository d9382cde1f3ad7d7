// A .cu consumer: the kernel uses devmesh's layout functions in device code (compiled,
// not launched: the build machine may have no GPU); main runs the same code on the host.
#include <devmesh/devmesh.hpp>

#include <cstdio>

namespace dm = devmesh;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

__host__ __device__ int dp_group_sum(int rank) {
  constexpr mesh3d m{};
  int sum = 0;
  for (int r : m.group<"dp">(rank)) sum += r;
  return sum + m.local_rank<"tp">(rank);
}

__global__ void dp_group_sums(int* out) { out[threadIdx.x] = dp_group_sum(static_cast<int>(threadIdx.x)); }

static_assert(mesh3d{}.rank_at({1, 1, 0}) == 6);

int main() {
  // rank 5 = (1, 0, 1): dp group {1, 5}, tp coordinate 1.
  if (dp_group_sum(5) != 7) return 1;
  std::printf("devmesh cuda consumer ok: %d\n", dp_group_sum(5));
  (void)&dp_group_sums;
  return 0;
}
