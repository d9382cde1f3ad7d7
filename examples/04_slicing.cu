// Example 4: slicing a 3-D (replicate=2, shard=2, tp=2) device mesh, as in the reference notes:
//
//   mesh_3d = init_device_mesh("cuda", (2, 2, 2), mesh_dim_names=("replicate", "shard", "tp"))
//   hsdp_mesh = mesh_3d["replicate", "shard"]          # 2-D submesh for HSDP
//   tp_mesh = mesh_3d["tp"]                            # 1-D submesh for tensor parallelism
//   replicate_group = hsdp_mesh["replicate"].get_group()
//   shard_group = hsdp_mesh["shard"].get_group()
//   tp_group = tp_mesh.get_group()
//
// and mesh_3d["shard", "tp"]._flatten("shard_tp"), one dim over the 4 ranks of a replica.
// A slice is the submesh *that contains the calling rank*: ranks 0, 2, 4, 6 get the hsdp
// mesh [[0, 2], [4, 6]] of the notes, ranks 1, 3, 5, 7 get [[1, 3], [5, 7]] (the notes'
// prose says that every rank gets [[0, 2], [4, 6]]; PyTorch's code and devmesh disagree).
// Slices and dims reuse the root's communicators (no new one); flattening creates one.
//
// The program prints the rank table, what each rank got for each submesh (the members of
// each communicator are gathered over it, not computed), uses every communicator in a
// collective, and checks everything against the layout.
//
// Written for the MPI backend (host buffers): the calls are the plain member API,
// mesh_3d.slice<"replicate", "shard">(). The same calls work on an NCCL mesh with device
// buffers and a stream (examples 03 and 06 run on both).
// Run: mpirun -np 8 ./04_slicing
#include "common.hpp"

#include <numeric>
#include <span>
#include <vector>

namespace dm = devmesh;
using namespace dm::literals;

using mesh_3d_t = dm::mesh<dm::dim<"replicate", 2>, dm::dim<"shard", 2>, dm::dim<"tp", 2>>;

/// The world ranks of the members of a 1-D mesh's communicator, in its rank order: what
/// get_group() would contain, gathered over that communicator.
template <class Mesh1D>
std::vector<int> members(const Mesh1D& m) {
  const int me = m.rank();
  std::vector<int> out(static_cast<std::size_t>(m.size()));
  m.all_gather(std::span<const int>(&me, 1), std::span(out));
  return out;
}

int run(dm::mpi::communicator& world) {
  auto mesh_3d = dm::init_device_mesh<mesh_3d_t>(world);
  const int created = mesh_3d.communicator_count();  // a private one, then one per dim

  auto hsdp_mesh = mesh_3d.slice<"replicate", "shard">();  // mesh_3d["replicate", "shard"]
  auto tp_mesh = mesh_3d["tp"_dim];                         // mesh_3d["tp"]
  auto replicate_mesh = hsdp_mesh["replicate"_dim];         // hsdp_mesh["replicate"]
  auto shard_mesh = hsdp_mesh["shard"_dim];                 // hsdp_mesh["shard"]
  const auto& replicate_group = replicate_mesh.comm();      // .get_group(): the MPI communicator
  const auto& shard_group = shard_mesh.comm();
  const auto& tp_group = tp_mesh.comm();
  auto flat = mesh_3d.flatten<"shard_tp", "shard", "tp">();  // + one communicator
  const int me = mesh_3d.rank();

  if (me == 0)
    std::cout << "mesh_3d = " << mesh_3d << "\n\n" << dm::rank_table(mesh_3d.layout()) << "\n";

  // What each rank got: its hsdp submesh, and the members of each 1-D submesh's communicator.
  const auto& hsdp = hsdp_mesh.layout();
  examples::print_by_rank("hsdp_mesh = mesh_3d.slice<\"replicate\", \"shard\">(), PyTorch's mesh_3d[\"replicate\", \"shard\"]:",
                          dm::rank_nested(hsdp, me) + "\n" + dm::rank_grid(hsdp, me));
  const auto replicate_members = members(replicate_mesh), shard_members = members(shard_mesh),
             tp_members = members(tp_mesh);
  // (An MPI communicator of the group's size, in which this rank is its index in the list.)
  auto comm_view = [me](const std::vector<int>& ranks, const dm::mpi::communicator& c) {
    const bool ordered = c.rank() < static_cast<int>(ranks.size()) && ranks[static_cast<std::size_t>(c.rank())] == me;
    return examples::list(ranks) + ", an MPI communicator of size " + std::to_string(c.size()) +
           (ordered ? "" : " (rank order differs!)");
  };
  examples::print_by_rank("\nhsdp_mesh[\"replicate\"_dim].comm(), PyTorch's hsdp_mesh[\"replicate\"].get_group():",
                          comm_view(replicate_members, replicate_group));
  examples::print_by_rank("hsdp_mesh[\"shard\"_dim].comm(), PyTorch's hsdp_mesh[\"shard\"].get_group():",
                          comm_view(shard_members, shard_group));
  examples::print_by_rank("tp_mesh.comm(), PyTorch's tp_mesh.get_group():", comm_view(tp_members, tp_group));

  // A collective on each: the sum of world ranks over the hsdp submesh (a named dim of the
  // 2-D mesh, then a 1-D submesh), and the largest rank of the replica over shard_tp.
  int hsdp_sum = me;
  hsdp_mesh.all_reduce<"shard">(std::span(&hsdp_sum, 1), dm::op::sum);
  replicate_mesh.all_reduce(std::span(&hsdp_sum, 1), dm::op::sum);
  int replica_max = me;
  flat.all_reduce<"shard_tp">(std::span(&replica_max, 1), dm::op::max);
  const auto c = *mesh_3d.coordinate();
  examples::print_ordered((me == 0 ? std::string("\nCollectives:\n") : std::string()) + "rank " + std::to_string(me) +
                          " (replicate=" + std::to_string(c[0]) + ", shard=" + std::to_string(c[1]) +
                          ", tp=" + std::to_string(c[2]) + "): sum over hsdp_mesh " + std::to_string(hsdp_sum) +
                          ", max over shard_tp " + examples::list(flat.layout().group<"shard_tp">(me)) + " " +
                          std::to_string(replica_max));

  // Everything agrees with the layout computed at compile time.
  const auto hsdp_group = hsdp.group(me);
  const auto flat_group = flat.layout().group<"shard_tp">(me);
  examples::check(std::ranges::equal(replicate_members, hsdp.group<"replicate">(me)) &&
                      std::ranges::equal(shard_members, hsdp.group<"shard">(me)) &&
                      std::ranges::equal(tp_members, tp_mesh.layout().group(me)),
                  "each communicator's members are the layout's group");
  examples::check(hsdp_sum == std::accumulate(hsdp_group.begin(), hsdp_group.end(), 0),
                  "the hsdp sum is the sum of the hsdp submesh");
  examples::check(replica_max == *std::ranges::max_element(flat_group), "the shard_tp max is the replica's largest rank");
  examples::check(mesh_3d.communicator_count() == created + 1, "slices create no communicator, flatten exactly one");
  if (me == 0)
    std::cout << "\nOK: communicators created: " << created << " by init_device_mesh, 0 by the slices, 1 by flatten\n";
  return 0;
}

int main(int argc, char** argv) { return examples::main(argc, argv, run); }
