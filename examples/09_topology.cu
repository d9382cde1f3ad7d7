// Example 9: the mesh against the machine.
//
// A (dp=2, tp=4) mesh on 8 ranks. tp's collectives are the chatty ones: each tp group should
// sit inside one node (NVLink, shared memory), not span the network. Whether it does depends
// on the order the launcher gave the ranks, which no peer library checks:
//   block        (mpirun --map-by slot): node of rank r = r / 4 -> every tp group is on one node
//   round-robin  (mpirun --map-by node): node of rank r = r % 2 -> every tp group spans 2 nodes
// The program
//   1. asks init_device_mesh to find where each rank runs (options.topology; DEVMESH_NODE_ID
//      overrides, which is how one machine simulates several nodes) and prints the mesh's
//      topology table, in the launcher's order;
//   2. prints the table for 2 simulated nodes of 4 in block and in round-robin order, then
//      with node-major placement (dm::node_major_rank_map), which keeps tp inside nodes
//      whatever the order (pure computation: dm::topology of a layout and a node list);
//   3. shows the error a "tp within nodes" requirement gives when it fails, and when no
//      placement can meet it (tp=8 on nodes of 4 ranks);
//   4. creates the mesh for real with options.intra_node = {"tp"} and options.node_major:
//      init builds the rank map (position -> world rank) from the nodes, and every tp
//      communicator is checked over itself to hold ranks of one node only.
// Run: mpirun -np 8 ./09_topology   (or, as 2 nodes in round-robin order:
//      mpirun -np 8 sh -c 'DEVMESH_NODE_ID=$((OMPI_COMM_WORLD_RANK % 2)) exec ./09_topology')
#include "common.hpp"

#include <devmesh/runtime/topology.hpp>  // dm::topology, node_major_rank_map: the simulations of part 2

#include <vector>

namespace dm = devmesh;
using namespace dm::literals;
using mesh_t = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

/// The node of each of 8 ranks under a launcher order: block (r / 4) or round-robin (r % 2).
std::vector<int> simulated(bool round_robin) {
  std::vector<int> nodes;
  for (int r = 0; r < 8; ++r) nodes.push_back(round_robin ? r % 2 : r / 4);
  return nodes;
}

/// The tables of part 2 and the errors of part 3 (rank 0 prints them: every rank computes
/// the same, from the same inputs).
void simulations(const mesh_t& m) {
  for (const bool round_robin : {false, true}) {
    const auto nodes = simulated(round_robin);
    const auto map = dm::node_major_rank_map<"tp">(m, nodes);
    std::cout << "\n== 2 simulated nodes of 4, " << (round_robin ? "round-robin" : "block") << " order ==\n"
              << dm::topology(m, nodes) << "with node-major placement, map " << examples::list(map) << ":\n"
              << dm::topology(m, nodes, map);
  }
  std::cout << "\n== requiring tp within nodes, round-robin order, no map ==\n";
  try {
    dm::check_intra_node<"tp">(m, simulated(true));
  } catch (const dm::mesh_error& e) {
    std::cout << e.what() << '\n';
  }
  std::cout << "\n== tp=8 on nodes of 4 ranks ==\n";
  try {
    dm::node_major_rank_map<"tp">(dm::mesh<dm::dim<"tp", 8>>{}, simulated(false));
  } catch (const dm::mesh_error& e) {
    std::cout << e.what() << '\n';
  }
}

int run(dm::mpi::communicator& world) {
  examples::check(world.size() == 8, "this example runs on 8 ranks");
  // Part 1: the nodes, found at init (one more bounded collective step, only when asked).
  dm::device_mesh_options<dm::mpi::communicator> find_nodes;
  find_nodes.topology = true;
  const auto as_launched = dm::init_device_mesh<mesh_t>(world, find_nodes);
  if (world.rank() == 0) {
    std::cout << "== the nodes MPI reports ==\n" << as_launched.topology();
    simulations(mesh_t{});
  }

  // Part 4: every tp group within a node, whatever the launcher's order: init checks the
  // requirement, and node-major placement builds the rank map that meets it (or every rank
  // throws the reason, e.g. tp=8 on nodes of 4 ranks).
  dm::device_mesh_options<dm::mpi::communicator> placed;
  placed.intra_node = {"tp"};
  placed.node_major = true;
  const auto mesh = dm::init_device_mesh<mesh_t>(world, placed);
  const std::vector<int>& nodes = mesh.node_of_rank();
  if (world.rank() == 0)
    std::cout << "\n== init_device_mesh with intra_node = {tp}, node_major: rank map "
              << examples::list(mesh.rank_map().empty() ? dm::rank_range(0, 8) : mesh.rank_map()) << " ==\n"
              << mesh.topology();
  const dm::mpi::communicator& tp = mesh.comm<"tp">();
  int node = nodes[static_cast<std::size_t>(world.rank())], lowest = node, highest = node;
  tp.all_reduce(&lowest, &lowest, 1, dm::op::min);
  tp.all_reduce(&highest, &highest, 1, dm::op::max);
  examples::check(tp.size() == 4 && lowest == highest, "every tp communicator lies within one node");
  examples::print_ordered("rank " + std::to_string(world.rank()) + ": node " + std::to_string(node) +
                          ", mesh position " + std::to_string(mesh.position()) + ", tp group (world ranks) " +
                          examples::list(mesh["tp"_dim].ranks()) + ", all on node " + std::to_string(lowest));
  return 0;
}

int main(int argc, char** argv) { return examples::main(argc, argv, run); }
