// Example 2: a 2-D (replicate=2, shard=4) setup without and with a mesh.
//
// PyTorch's DeviceMesh recipe first builds the HSDP process groups by hand: shard groups
// (0,1,2,3), (4,5,6,7) and replicate groups (0,4), (1,5), (2,6), (3,7), each rank working
// out which ones it belongs to. Then it does the same in two lines with init_device_mesh.
// This is both, in C++: the manual way with MPI (MPI_Comm_split for the shard groups,
// MPI_Comm_create_group from explicit rank lists for the replicate groups, as dist.new_group
// does), then the mesh. Finally it checks that both give the same groups: the world ranks of
// each communicator's members, in communicator rank order, gathered over each.
//
// `run` is a template over the backend, so named calls read `mesh.template comm<"shard">()`.
// Run: mpirun -np 8 ./02_setup_2d [--backend nccl]
#include "common.hpp"

#include <vector>

namespace dm = devmesh;

// ---- without a mesh: every rank computes its groups ------------------------------------
struct manual_groups {
  MPI_Comm shard = MPI_COMM_NULL, replicate = MPI_COMM_NULL;
  ~manual_groups() {
    if (shard != MPI_COMM_NULL) MPI_Comm_free(&shard);
    if (replicate != MPI_COMM_NULL) MPI_Comm_free(&replicate);
  }
};

void setup_by_hand(manual_groups& g) {
  int rank = 0, world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  // Shard groups: (0, 1, 2, 3) and (4, 5, 6, 7). One split: color = which half.
  const int shard_factor = world_size / 2;
  MPI_Comm_split(MPI_COMM_WORLD, rank / shard_factor, rank, &g.shard);
  // Replicate groups: (i, i + shard_factor) for each i. Build the rank list of this rank's
  // group and create the communicator from it (only the group's members take part).
  MPI_Group world_group, replicate_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  std::vector<int> replicate_ranks;
  for (int r = rank % shard_factor; r < world_size; r += shard_factor) replicate_ranks.push_back(r);
  MPI_Group_incl(world_group, static_cast<int>(replicate_ranks.size()), replicate_ranks.data(), &replicate_group);
  MPI_Comm_create_group(MPI_COMM_WORLD, replicate_group, /*tag=*/rank % shard_factor, &g.replicate);
  MPI_Group_free(&replicate_group);
  MPI_Group_free(&world_group);
}

/// The world ranks of c's members, in c's rank order.
std::vector<int> members(MPI_Comm c) {
  int me = examples::world_rank(), n = 0;
  MPI_Comm_size(c, &n);
  std::vector<int> out(static_cast<std::size_t>(n));
  MPI_Allgather(&me, 1, MPI_INT, out.data(), 1, MPI_INT, c);
  return out;
}

// ---- with a mesh: two lines -----------------------------------------------------------
using mesh_2d = dm::mesh<dm::dim<"replicate", 2>, dm::dim<"shard", 4>>;

/// The world ranks of the members of dim N's communicator, gathered over it (on the
/// backend's memory: device buffers on NCCL).
template <dm::fixed_string N, class Mesh, class Comm>
std::vector<int> members(const Mesh& mesh, examples::stream<Comm>& s) {
  examples::buffer<int, Comm> mine(std::vector<int>{mesh.rank()});
  examples::buffer<int, Comm> all(static_cast<std::size_t>(mesh.template size<N>()));
  mesh.template all_gather<N>(mine.cspan(), all.span(), s);
  s.sync();
  return all.to_host();
}

template <class Comm>
int run(Comm& world) {
  manual_groups by_hand;
  setup_by_hand(by_hand);

  // The same setup with a mesh: init_device_mesh makes one communicator per dim.
  auto mesh = dm::init_device_mesh<mesh_2d>(world);
  const auto& shard_comm = mesh.template comm<"shard">();  // the underlying communicators,
  const auto& replicate_comm = mesh.template comm<"replicate">();  // as mesh.get_group(dim)

  examples::stream<Comm> s;
  const auto mesh_shard = members<"shard">(mesh, s), mesh_replicate = members<"replicate">(mesh, s);
  const auto hand_shard = members(by_hand.shard), hand_replicate = members(by_hand.replicate);

  examples::print_ordered("rank " + std::to_string(mesh.rank()) + ": shard group [" + examples::join(mesh_shard) +
                          "] (by hand [" + examples::join(hand_shard) + "]), replicate group [" +
                          examples::join(mesh_replicate) + "] (by hand [" + examples::join(hand_replicate) +
                          "]); mesh comm ranks: shard " + std::to_string(shard_comm.rank()) + "/" +
                          std::to_string(shard_comm.size()) + ", replicate " + std::to_string(replicate_comm.rank()) +
                          "/" + std::to_string(replicate_comm.size()));

  // The two setups agree, and both agree with the layout computed at compile time.
  const auto layout_shard = mesh.layout().template group<"shard">(mesh.rank());
  const auto layout_replicate = mesh.layout().template group<"replicate">(mesh.rank());
  examples::check(mesh_shard == hand_shard && mesh_replicate == hand_replicate,
                  "the mesh's groups are the hand-made ones");
  examples::check(std::ranges::equal(mesh_shard, layout_shard) && std::ranges::equal(mesh_replicate, layout_replicate),
                  "the communicators' members are the layout's groups");
  if constexpr (!examples::on_device<Comm>) {
    // On MPI the mesh's communicators are MPI_Comms too: same members, same order.
    int same_shard = 0, same_replicate = 0;
    MPI_Comm_compare(by_hand.shard, shard_comm.native(), &same_shard);
    MPI_Comm_compare(by_hand.replicate, replicate_comm.native(), &same_replicate);
    examples::check(same_shard == MPI_CONGRUENT && same_replicate == MPI_CONGRUENT,
                    "MPI_Comm_compare says MPI_CONGRUENT for both dims");
  }
  if (mesh.rank() == 0) std::cout << "OK: the hand-made groups and init_device_mesh's are identical\n";
  return 0;
}

int main(int argc, char** argv) {
  return examples::main(argc, argv, [](auto& world) { return run(world); });
}
