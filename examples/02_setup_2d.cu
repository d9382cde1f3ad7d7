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
// PyTorch's mesh_2d.get_group(mesh_dim="shard") is mesh_2d.comm<"shard">() in devmesh; here,
// in a template over the backend, it is spelled through the dim's 1-D submesh,
// mesh_2d["shard"_dim].comm() (the same communicator).
//
// It prints the mesh (rank table and grid) and, for each rank, the members of its shard and
// replicate communicators made both ways.
// Run: mpirun -np 8 ./02_setup_2d [--backend nccl]
#include "common.hpp"

#include <vector>

namespace dm = devmesh;
using namespace dm::literals;

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
using mesh_2d_t = dm::mesh<dm::dim<"replicate", 2>, dm::dim<"shard", 4>>;

/// The world ranks of the members of a 1-D mesh's communicator, gathered over it (on the
/// backend's memory: device buffers on NCCL).
template <class Mesh1D, class Comm>
std::vector<int> members(const Mesh1D& m, examples::stream<Comm>& s) {
  examples::buffer<int, Comm> mine(std::vector<int>{m.rank()});
  examples::buffer<int, Comm> all(static_cast<std::size_t>(m.size()));
  m.all_gather(mine.cspan(), all.span(), s);
  s.sync();
  return all.to_host();
}

template <class Comm>
int run(Comm& world) {
  manual_groups by_hand;
  setup_by_hand(by_hand);

  // The same setup with a mesh: init_device_mesh makes one communicator per dim.
  auto mesh_2d = dm::init_device_mesh<mesh_2d_t>(world);
  auto shard_mesh = mesh_2d["shard"_dim];          // PyTorch: mesh_2d["shard"]
  auto replicate_mesh = mesh_2d["replicate"_dim];
  const auto& shard_group = shard_mesh.comm();          // mesh_2d.get_group(mesh_dim="shard")
  const auto& replicate_group = replicate_mesh.comm();  // mesh_2d.get_group(mesh_dim="replicate")
  const int me = mesh_2d.rank();

  examples::stream<Comm> s;
  const auto mesh_shard = members(shard_mesh, s), mesh_replicate = members(replicate_mesh, s);
  const auto hand_shard = members(by_hand.shard), hand_replicate = members(by_hand.replicate);

  if (me == 0)
    std::cout << "mesh_2d = " << mesh_2d << "\n\n"
              << dm::rank_table(mesh_2d.layout()) << "\n"
              << dm::rank_nested(mesh_2d) << "\n"
              << dm::rank_grid(mesh_2d) << "\n";
  examples::print_by_rank("shard groups: by hand (MPI_Comm_split) and mesh_2d[\"shard\"_dim].comm():",
                          examples::list(hand_shard) + " and " + examples::list(mesh_shard) + ", a communicator of " +
                              std::to_string(shard_group.size()));
  examples::print_by_rank("replicate groups: by hand (MPI_Comm_create_group) and mesh_2d[\"replicate\"_dim].comm():",
                          examples::list(hand_replicate) + " and " + examples::list(mesh_replicate) +
                              ", a communicator of " + std::to_string(replicate_group.size()));

  // The two setups agree, and both agree with the layout computed at compile time.
  examples::check(mesh_shard == hand_shard && mesh_replicate == hand_replicate,
                  "the mesh's groups are the hand-made ones");
  examples::check(std::ranges::equal(mesh_shard, shard_mesh.layout().group(me)) &&
                      std::ranges::equal(mesh_replicate, replicate_mesh.layout().group(me)),
                  "the communicators' members are the layout's groups");
  if constexpr (!examples::on_device<Comm>) {
    // On MPI the mesh's communicators are MPI_Comms too: same members, same order.
    int same_shard = 0, same_replicate = 0;
    MPI_Comm_compare(by_hand.shard, shard_group.native(), &same_shard);
    MPI_Comm_compare(by_hand.replicate, replicate_group.native(), &same_replicate);
    examples::check(same_shard == MPI_CONGRUENT && same_replicate == MPI_CONGRUENT,
                    "MPI_Comm_compare says MPI_CONGRUENT for both dims");
  }
  if (me == 0) std::cout << "OK: the hand-made groups and init_device_mesh's are identical\n";
  return 0;
}

int main(int argc, char** argv) {
  return examples::main(argc, argv, [](auto& world) { return run(world); });
}
