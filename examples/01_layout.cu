// Example 1: a mesh layout at compile time.
//
// The (2, 2, 2) mesh of the reference notes: dims replicate, shard and tp. Everything
// here is computed by the compiler: no MPI, no GPU, no communicator. Run: ./01_layout
#include <devmesh/devmesh.hpp>

#include <algorithm>
#include <array>
#include <iostream>

namespace dm = devmesh;
using namespace dm::literals;

// A mesh type is its named dims. Static sizes: the object is empty.
using mesh3d = dm::mesh<dm::dim<"replicate", 2>, dm::dim<"shard", 2>, dm::dim<"tp", 2>>;
constexpr mesh3d mesh{};

// Rank <-> coordinate is row-major, as in PyTorch: rank 5 is (1, 0, 1).
static_assert(mesh.coordinate(5) == std::array{1, 0, 1});
static_assert(mesh.rank_at({1, 1, 0}) == 6);
// The group of a dim that holds a rank: tp pairs neighbours, replicate jumps by 4.
static_assert(std::ranges::equal(mesh.group<"tp">(5), std::array{4, 5}));
static_assert(std::ranges::equal(mesh.group<"replicate">(5), std::array{1, 5}));
// Slicing ["replicate", "shard"] gives the submesh that contains the calling rank:
// ranks 0, 2, 4, 6 see [[0, 2], [4, 6]]; ranks 1, 3, 5, 7 see [[1, 3], [5, 7]].
static_assert(std::ranges::equal(mesh.group<"replicate", "shard">(0), std::array{0, 2, 4, 6}));
static_assert(std::ranges::equal(mesh.group<"replicate", "shard">(3), std::array{1, 3, 5, 7}));

// A misuse is a compile error that names the dim and the dims that exist. Uncomment:
//   mesh.group<"pp">(0);
// g++ prints:
//   error: static assertion failed: devmesh: unknown dim: no dim of this mesh has this name
//   (the name and the dims that exist are the arguments of error::unknown_dim<name, existing_dims<...>>)
//   In instantiation of 'struct devmesh::error::unknown_dim<boost::hana::string<'p', 'p'>,
//   devmesh::existing_dims<boost::hana::string<'r', 'e', 'p', ...>, ...> >'

#if defined(__CUDACC__)
// The same layout runs in device code: a kernel can ask for its coordinates. (A static
// mesh is an empty object: make one in the kernel; a host global is not device memory.)
__global__ void coordinates_kernel(int* tp_rank) {
  const int r = static_cast<int>(threadIdx.x);
  tp_rank[r] = mesh3d{}.local_rank<"tp">(r);
}
#endif

int main() {
  std::cout << mesh << "\n\n" << dm::rank_table(mesh) << '\n';
  std::cout << dm::group_table<"replicate">(mesh) << '\n'
            << dm::group_table<"shard">(mesh) << '\n'
            << dm::group_table<"tp">(mesh) << '\n';

  // Submeshes: what ranks 0 and 1 see for ["replicate", "shard"] and ["tp"].
  const auto hsdp = mesh.slice<"replicate", "shard">();
  const auto tp = mesh["tp"_dim];
  for (int r : {0, 1}) {
    std::cout << "rank " << r << ": hsdp mesh ";
    for (int x : hsdp.group(r)) std::cout << x << ' ';
    std::cout << "| tp mesh ";
    for (int x : tp.group(r)) std::cout << x << ' ';
    std::cout << '\n';
  }
  // Flatten shard+tp into one dim: the 4 ranks that share a replica.
  const auto flat = mesh.flatten<"shard_tp", "shard", "tp">();
  std::cout << flat << '\n' << dm::group_table<"shard_tp">(flat) << '\n';
  return 0;
}
