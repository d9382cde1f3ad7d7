// Node discovery (mpi/node.hpp) and the topology of a mesh on the discovered nodes.
//
// Run with no argument: no DEVMESH_NODE_ID, the machine's nodes (every rank on one host is
// one node). Run by with_node_id.sh <mode>, which sets DEVMESH_NODE_ID per rank and passes
// the mode as the program's argument (test::arg(0)): block (rank / 4), round_robin (rank % 2), four_nodes (rank % 4),
// numbering (100 - rank % 2), mixed (ranks 0-3 set, the others not), invalid (the last
// rank has a malformed value: every rank must throw).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include <devmesh/devmesh.hpp>
#include <devmesh/mpi/node.hpp>
#include <devmesh/runtime/topology.hpp>

#include "mpi_doctest.hpp"

namespace mpi_topology_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;

namespace {
using mesh24 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

/// Every rank's host name (MPI_Get_processor_name), gathered: the expected nodes without
/// DEVMESH_NODE_ID, numbered by the lowest rank on each host.
std::vector<int> nodes_by_host(const dm::mpi::communicator& world) {
  std::array<char, MPI_MAX_PROCESSOR_NAME + 1> name{};
  int len = 0;
  MPI_Get_processor_name(name.data(), &len);
  std::vector<char> all(name.size() * static_cast<std::size_t>(world.size()));
  world.all_gather_bytes(name.data(), all.data(), name.size());
  std::vector<std::string> hosts, seen;
  std::vector<int> out;
  for (int r = 0; r < world.size(); ++r) {
    const std::string h(all.data() + static_cast<std::size_t>(r) * name.size());
    const auto it = std::find(seen.begin(), seen.end(), h);
    out.push_back(static_cast<int>(it - seen.begin()));
    if (it == seen.end()) seen.push_back(h);
  }
  return out;
}

std::vector<int> expected_nodes(const std::string& mode, const dm::mpi::communicator& world) {
  std::vector<int> v(static_cast<std::size_t>(world.size()));
  for (int r = 0; r < world.size(); ++r) {
    int n = 0;
    if (mode == "block") n = r / 4;
    if (mode == "round_robin" || mode == "numbering") n = r % 2;
    if (mode == "four_nodes") n = r % 4;
    if (mode == "mixed") n = r < 4 ? 0 : 1;  // ranks 4-7: this machine, one node
    v[static_cast<std::size_t>(r)] = n;
  }
  return mode == "none" ? nodes_by_host(world) : v;
}

std::string show(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : " ") + std::to_string(x);
  return s;
}

/// On 8 ranks: the mesh (dp=2, tp=4) against the simulated nodes.
void check_mesh_on_nodes(const std::string& mode, const std::vector<int>& nodes) {
  const mesh24 m{};
  if (mode == "block") {
    const auto t = dm::check_intra_node<"tp">(m, nodes);
    CHECK((t["tp"].intra_node() && !t["dp"].intra_node() && t.nodes == 2));
    CHECK(dm::node_major_rank_map<"tp">(m, nodes) == std::vector<int>({0, 1, 2, 3, 4, 5, 6, 7}));
  } else if (mode == "round_robin") {
    CHECK_THROWS_WITH_AS(dm::check_intra_node<"tp">(m, nodes),
                         doctest::Contains("the groups of 'tp' span up to 2 nodes (2 of 2 groups cross nodes)"),
                         dm::mesh_error);
    const auto map = dm::node_major_rank_map<"tp">(m, nodes);
    CHECK(map == std::vector<int>({0, 2, 4, 6, 1, 3, 5, 7}));
    CHECK(dm::check_intra_node<"tp">(m, nodes, map)["tp"].intra_node());
  } else if (mode == "four_nodes") {
    CHECK_THROWS_WITH_AS(dm::node_major_rank_map<"tp">(m, nodes),
                         doctest::Contains("a group of 'tp' has 4 ranks, more than the 2 ranks of a node"),
                         dm::mesh_error);
    using mesh42 = dm::mesh<dm::dim<"dp", 4>, dm::dim<"tp", 2>>;
    const auto map = dm::node_major_rank_map<"tp">(mesh42{}, nodes);
    CHECK(dm::check_intra_node<"tp">(mesh42{}, nodes, map)["tp"].intra_node());
  }
}

/// DEVMESH_NODE_ID is read at each call: set alike on every rank here, malformed values make
/// every rank throw; a valid one puts every rank on one node.
void check_parsing(const dm::mpi::communicator& world) {
  for (const char* bad : {"-1", "1.5", " 1", "+1", "1x", "99999999999", "0x10"}) {
    setenv("DEVMESH_NODE_ID", bad, 1);
    CHECK_THROWS_WITH_AS(dm::mpi::node_of_ranks(world),
                         test::containing("DEVMESH_NODE_ID='" + std::string(bad) + "' is not a node id"),
                         dm::mesh_error);
  }
  setenv("DEVMESH_NODE_ID", "007", 1);
  CHECK(dm::mpi::node_of_ranks(world) == std::vector<int>(static_cast<std::size_t>(world.size()), 0));
  setenv("DEVMESH_NODE_ID", "", 1);  // empty: unset, the machine's nodes
  CHECK(dm::mpi::node_of_ranks(world) == nodes_by_host(world));
  unsetenv("DEVMESH_NODE_ID");
}

/// The with_node_id.sh mode ("none" without one: then the machine's nodes, whatever ctest
/// inherited).
std::string mode() {
  const std::string m = test::arg(0, "none");
  if (m == "none") unsetenv("DEVMESH_NODE_ID");
  return m;
}
}  // namespace

TEST_CASE("a malformed DEVMESH_NODE_ID on the last rank: every rank throws, naming it") {
  if (mode() != "invalid") return;
  auto world = dm::mpi::world();
  const std::string msg = CHECK_THROWS_WHAT(dm::mesh_error, dm::mpi::node_of_ranks(world),
                                            "DEVMESH_NODE_ID='x1' is not a node id (an integer >= 0");
  const std::string who = "node_of_ranks failed on rank " + std::to_string(world.size() - 1) + " of " +
                          std::to_string(world.size());
  CHECK(msg.find(who) != std::string::npos);
}

TEST_CASE("the nodes of the ranks, and the topology of a mesh on them") {
  const std::string m = mode();
  if (m == "invalid") return;
  auto world = dm::mpi::world();
  const std::vector<int> nodes = dm::mpi::node_of_ranks(world);
  const std::vector<int> expected = expected_nodes(m, world);
  CHECK_MESSAGE(nodes == expected, ("nodes " + show(nodes) + ", expected " + show(expected)));
  // The same answer every time, within an explicit deadline, and the world is still usable.
  CHECK(dm::mpi::node_of_ranks(world, dm::deadline::after(std::chrono::seconds(60))) == nodes);
  std::vector<int> sum(1, 1);
  world.all_reduce(sum.data(), sum.data(), 1, dm::op::sum);
  CHECK_EQ(sum[0], world.size());
  if (world.size() == 8) check_mesh_on_nodes(m, nodes);
  if (world.rank() == 0 && world.size() == 8) std::printf("%s: nodes %s\n", m.c_str(), show(nodes).c_str());
}

TEST_CASE("DEVMESH_NODE_ID parsing: malformed values throw everywhere, valid ones are one node") {
  if (mode() != "none") return;
  check_parsing(dm::mpi::world());
}
}  // namespace mpi_topology_test
