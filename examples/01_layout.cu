// Example 1: a mesh layout at compile time.
//
// The (2, 2, 2) mesh of the reference notes: dims replicate, shard and tp. Everything
// here is computed by the compiler: no MPI, no GPU, no communicator. Run: ./01_layout
#include <devmesh/devmesh.hpp>

#include <algorithm>
#include <array>
#include <iostream>
#include <string>
#include <vector>

#include "print.hpp"

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
//   In instantiation of '... devmesh::error::unknown_dim<Name, Existing>::fire() [with
//   Name = devmesh::name<devmesh::fixed_string<3>{"pp"}>; Existing = devmesh::existing_dims<
//   devmesh::name<devmesh::fixed_string<10>{"replicate"}>, ...>]'
// (clang and nvcc spell the names as chars: devmesh::name<'p', 'p'>.)

#if defined(__CUDACC__)
// The same layout runs in device code: a kernel can ask for its coordinates. (A static
// mesh is an empty object: make one in the kernel; a host global is not device memory.)
__global__ void coordinates_kernel(int* tp_rank) {
  const int r = static_cast<int>(threadIdx.x);
  tp_rank[r] = mesh3d{}.local_rank<"tp">(r);
}
#endif

int main() {
  // The rank table of the reference notes: row-major, the last dim varies fastest.
  std::cout << "mesh_3d = " << mesh << "\n\n" << dm::rank_table(mesh) << '\n';
  std::cout << "The groups of each dim (at run time, one communicator per dim and rank):\n"
            << dm::group_table<"replicate">(mesh) << '\n'
            << dm::group_table<"shard">(mesh) << '\n'
            << dm::group_table<"tp">(mesh) << "\n\n";

  // What each rank gets from the slices of the notes, asked of the layout for every rank:
  //   hsdp_mesh = mesh_3d["replicate", "shard"]   tp_mesh = mesh_3d["tp"]
  // A slice is the submesh that contains the calling rank, so ranks 1, 3, 5, 7 get another
  // hsdp_mesh than ranks 0, 2, 4, 6 (the notes' prose says [[0, 2], [4, 6]] for everyone).
  const auto hsdp_mesh = mesh.slice<"replicate", "shard">();
  const auto tp_mesh = mesh["tp"_dim];
  std::vector<std::string> hsdp_views, replicate_views, shard_views, tp_views;
  for (int r = 0; r < mesh.size(); ++r) {
    hsdp_views.push_back(dm::rank_nested(hsdp_mesh, r) + "\n" + dm::rank_grid(hsdp_mesh, r));
    replicate_views.push_back(examples::list(hsdp_mesh["replicate"_dim].group(r)));
    shard_views.push_back(examples::list(hsdp_mesh["shard"_dim].group(r)));
    tp_views.push_back(examples::list(tp_mesh.group(r)));
  }
  std::cout << "hsdp_mesh = mesh_3d[\"replicate\", \"shard\"], " << hsdp_mesh << ":\n"
            << examples::by_rank(hsdp_views, "  ") << '\n'
            << "hsdp_mesh[\"replicate\"], the group of replicate_group = hsdp_mesh[\"replicate\"].get_group():\n"
            << examples::by_rank(replicate_views, "  ")
            << "hsdp_mesh[\"shard\"], the group of shard_group = hsdp_mesh[\"shard\"].get_group():\n"
            << examples::by_rank(shard_views, "  ")
            << "tp_mesh = mesh_3d[\"tp\"], " << tp_mesh << ":\n"
            << examples::by_rank(tp_views, "  ") << '\n';

  // Flatten shard+tp into one dim: the 4 ranks that share a replica.
  const auto flat = mesh.flatten<"shard_tp", "shard", "tp">();
  std::cout << "mesh_3d[\"shard\", \"tp\"]._flatten(\"shard_tp\"): " << flat << '\n'
            << dm::group_table<"shard_tp">(flat) << '\n';
  return 0;
}
