// Example 9: the mesh against the machine.
//
// A (dp=2, tp=4) mesh on 8 ranks. tp's collectives are the chatty ones: each tp group should
// sit inside one node (NVLink, shared memory), not span the network. Whether it does depends
// on the order the launcher gave the ranks, which no peer library checks:
//   block        (mpirun --map-by slot): node of rank r = r / 4 -> every tp group is on one node
//   round-robin  (mpirun --map-by node): node of rank r = r % 2 -> every tp group spans 2 nodes
// The program
//   1. asks MPI where each rank runs (dm::mpi::node_of_ranks; DEVMESH_NODE_ID overrides, which
//      is how one machine simulates several nodes), and prints the topology table;
//   2. prints the table for 2 simulated nodes of 4 in block and in round-robin order, then
//      with node-major placement (dm::node_major_rank_map), which keeps tp inside nodes
//      whatever the order;
//   3. shows the error a "tp within nodes" requirement gives when it fails, and when no
//      placement can meet it (tp=8 on nodes of 4 ranks);
//   4. uses the node-major map for real: splits the world into tp communicators by the map
//      and checks over each one that all its members report the same node.
// Run: mpirun -np 8 ./09_topology   (or, as 2 nodes in round-robin order:
//      mpirun -np 8 sh -c 'DEVMESH_NODE_ID=$((OMPI_COMM_WORLD_RANK % 2)) exec ./09_topology')
#include "common.hpp"

#include <devmesh/mpi/node.hpp>
#include <devmesh/topology.hpp>

#include <vector>

namespace dm = devmesh;
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
  constexpr mesh_t m{};
  const std::vector<int> nodes = dm::mpi::node_of_ranks(world);  // collective, the same on every rank
  const std::vector<int> map = dm::node_major_rank_map<"tp">(m, nodes);
  if (world.rank() == 0) {
    std::cout << "== the nodes MPI reports ==\n" << dm::topology(m, nodes);
    simulations(m);
  }

  // Part 4: position p of the mesh is world rank map[p]. Each rank finds its position, and
  // splits the world by its tp group (color: the group's first position; key: its index).
  int position = 0;
  while (map[static_cast<std::size_t>(position)] != world.rank()) ++position;
  const auto split = m.comm_split<"tp">(position);
  const dm::mpi::communicator tp = world.split(split.color, split.key);
  int node = nodes[static_cast<std::size_t>(world.rank())], lowest = node, highest = node;
  tp.all_reduce(&lowest, &lowest, 1, dm::op::min);
  tp.all_reduce(&highest, &highest, 1, dm::op::max);
  examples::check(tp.size() == 4 && lowest == highest, "every tp communicator lies within one node");
  std::vector<int> tp_ranks;  // the world ranks of this rank's tp group
  for (int p : m.group<"tp">(position)) tp_ranks.push_back(map[static_cast<std::size_t>(p)]);
  examples::print_ordered("rank " + std::to_string(world.rank()) + ": node " + std::to_string(node) +
                          ", mesh position " + std::to_string(position) + ", tp group (world ranks) " +
                          examples::list(tp_ranks) + ", all on node " + std::to_string(lowest));
  return 0;
}

int main(int argc, char** argv) { return examples::main(argc, argv, run); }
