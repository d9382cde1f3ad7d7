// Example 4: slicing a 3-D (replicate=2, shard=2, tp=2) device mesh.
//
// As in PyTorch:
//   mesh_3d = init_device_mesh("cuda", (2, 2, 2), mesh_dim_names=("replicate", "shard", "tp"))
//   hsdp_mesh = mesh_3d["replicate", "shard"]     # 2-D submesh for HSDP
//   tp_mesh = mesh_3d["tp"]                       # 1-D submesh for tensor parallelism
//   mesh_3d["shard", "tp"]._flatten("shard_tp")   # one dim over the 4 ranks of a replica
// A slice is the submesh *that contains the calling rank*: ranks 0, 2, 4, 6 get the hsdp
// mesh [[0, 2], [4, 6]], ranks 1, 3, 5, 7 get [[1, 3], [5, 7]]. Slices reuse the root's
// communicators (no new one is created); flattening creates one for the new dim.
// Each submesh's communicator is used in a collective, and every rank's view is printed by
// rank 0 in rank order. The results are checked against the layout's groups.
//
// `run` is a template over the backend, so named calls read `mesh.template slice<...>()`.
// Run: mpirun -np 8 ./04_slicing [--backend nccl]
#include "common.hpp"

#include <numeric>
#include <vector>

namespace dm = devmesh;
using namespace dm::literals;

using mesh_3d = dm::mesh<dm::dim<"replicate", 2>, dm::dim<"shard", 2>, dm::dim<"tp", 2>>;

template <class Comm>
int run(Comm& world) {
  auto mesh = dm::init_device_mesh<mesh_3d>(world);
  const int created = mesh.communicator_count();  // a private one, then one per dim

  auto hsdp = mesh.template slice<"replicate", "shard">();  // 2-D, same communicators
  auto tp = mesh["tp"_dim];                                 // 1-D
  auto flat = mesh.template flatten<"shard_tp", "shard", "tp">();  // + one communicator
  const int me = mesh.rank();
  examples::stream<Comm> s;

  // tp: all_gather every member's world rank (1-D mesh: no name needed).
  examples::buffer<int, Comm> mine(std::vector<int>{me});
  examples::buffer<int, Comm> tp_ranks(static_cast<std::size_t>(tp.size()));
  tp.all_gather(mine.cspan(), tp_ranks.span(), s);
  // hsdp: the sum of world ranks over the 2-D submesh, one dim after the other.
  examples::buffer<int, Comm> hsdp_sum(std::vector<int>{me});
  hsdp.template all_reduce<"shard">(hsdp_sum.span(), dm::op::sum, s);
  hsdp.template all_reduce<"replicate">(hsdp_sum.span(), dm::op::sum, s);
  // shard_tp: the largest world rank of the replica, over the flattened dim's communicator.
  examples::buffer<int, Comm> replica_max(std::vector<int>{me});
  flat.template all_reduce<"shard_tp">(replica_max.span(), dm::op::max, s);
  s.sync();

  const auto hsdp_group = hsdp.layout().group(me);  // the submesh containing this rank
  const auto tp_group = tp.layout().group(me);
  const auto flat_group = flat.layout().template group<"shard_tp">(me);
  const auto gathered = tp_ranks.to_host();
  const int sum = hsdp_sum.to_host()[0], max = replica_max.to_host()[0];

  const auto c = *mesh.coordinate();
  examples::print_ordered("rank " + std::to_string(me) + " (" + examples::join(c, ",") + "): hsdp submesh [" +
                          examples::join(hsdp_group) + "] sum " + std::to_string(sum) + " | tp submesh [" +
                          examples::join(tp_group) + "] all_gather [" + examples::join(gathered) +
                          "] | shard_tp [" + examples::join(flat_group) + "] max " + std::to_string(max));

  examples::check(std::ranges::equal(gathered, tp_group), "tp all_gather returns the tp group");
  examples::check(sum == std::accumulate(hsdp_group.begin(), hsdp_group.end(), 0),
                  "the hsdp sum is the sum of the hsdp submesh");
  examples::check(max == *std::ranges::max_element(flat_group), "the shard_tp max is the replica's largest rank");
  examples::check(mesh.communicator_count() == created + 1, "slices create no communicator, flatten exactly one");
  if (me == 0) {
    std::cout << "\n" << hsdp << "\n" << tp << "\n" << flat << "\n";
    std::cout << "OK: communicators created: " << created << " by init_device_mesh, 0 by the slices, 1 by flatten\n";
  }
  return 0;
}

int main(int argc, char** argv) {
  return examples::main(argc, argv, [](auto& world) { return run(world); });
}
