// Topology wired into init (issue 12): options.topology, intra_node and node_major on the MPI
// backend, and mesh.topology().
//
// Run with no argument (1-8 ranks): the machine's nodes, one here. Run by with_node_id.sh
// <mode> on 8 ranks (the mode becomes the program's argument, test::arg(0)), which sets
// DEVMESH_NODE_ID per rank: block (rank / 4: 2 nodes of 4),
// round_robin (rank % 2: 2 nodes of 4), four_nodes (rank % 4: 4 nodes of 2). Checks: the
// requirement passes or fails as the placement says, on every rank, with the table and the
// fix; node-major placement makes it pass under round-robin order and gives the expected map;
// impossible placements throw everywhere; the tp communicators of a node-major mesh are
// inside nodes (node ids all-reduced over them); topology() equals dm::topology() of the
// layout over the discovered nodes and the map.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <utility>
#include <span>
#include <string>
#include <vector>

#include <devmesh/devmesh.hpp>

#include "mpi_doctest.hpp"

namespace mpi_topology_init_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;
using C = dm::mpi::communicator;
using O = dm::device_mesh_options<C>;
using namespace dm::literals;
using mesh2 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;

namespace {

int me = 0;

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

/// Runs f, which must throw mesh_error on this rank with every needle; returns the message.
template <class F>
std::string expect_error(F&& f, std::initializer_list<std::string> needles, int line) {
  std::string msg;
  try {
    f();
  } catch (const dm::mesh_error& e) {
    msg = e.what();
  }
  test::check_at(!msg.empty(), __FILE__, line, "expect_error", "did not throw");
  for (const auto& n : needles)
    test::check_at(contains(msg, n), __FILE__, line, "expect_error", "no '" + n + "' in: " + msg);
  return msg;
}

O intra(std::vector<std::string> dims, bool node_major = false) {
  O o;
  o.intra_node = std::move(dims);
  o.node_major = node_major;
  return o;
}

/// The node of every world rank under the with_node_id.sh mode (none: one machine).
std::vector<int> nodes_for(const std::string& mode, int w) {
  std::vector<int> v;
  for (int r = 0; r < w; ++r)
    v.push_back(mode == "block" ? r / 4 : mode == "round_robin" ? r % 2 : mode == "four_nodes" ? r % 4 : 0);
  return v;
}

/// Every tp communicator of `mesh` lies within one node: min and max node id over it agree.
template <class M>
void tp_within_nodes(const M& mesh, const std::vector<int>& nodes) {
  if (!mesh.is_member()) return;
  int lo = nodes[static_cast<std::size_t>(me)], hi = lo;
  const C& tp = dm::comm<"tp">(mesh);
  tp.all_reduce(&lo, &lo, 1, dm::op::min);
  tp.all_reduce(&hi, &hi, 1, dm::op::max);
  CHECK_EQ(lo, hi);
}

/// topology() is dm::topology of the layout over the nodes and the mesh's map.
template <class M>
void same_table(const M& mesh, const std::vector<int>& nodes) {
  const std::vector<int> map = mesh.rank_map().empty() ? dm::rank_range(0, mesh.layout().root_size()) : mesh.rank_map();
  CHECK(dm::to_string(mesh.topology()) == dm::to_string(dm::topology(mesh.layout(), nodes, map)));
}

void block(C& world, const std::vector<int>& nodes) {
  auto mesh = dm::init_device_mesh(world, mesh2(2, 4), intra({"tp"}));
  CHECK(mesh.rank_map().empty());
  CHECK((mesh.topology()["tp"].intra_node() && !mesh.topology()["dp"].intra_node()));
  CHECK(dm::to_string(mesh.topology()) ==
        "8 ranks on 2 nodes, 4 ranks per node\n"
        "dim  size  groups  intra-node  max nodes/group  crossing groups\n"
        "dp   2     4       no          2                4\n"
        "tp   4     2       yes         1                0\n");
  tp_within_nodes(mesh, nodes);
  // Block order already keeps tp inside nodes: node-major placement is the identity (no map).
  auto nm = dm::init_device_mesh(world, mesh2(2, 4), intra({"tp"}, true));
  CHECK(nm.rank_map().empty());
  // dp's groups cross nodes: requiring it fails on every rank.
  expect_error([&] { (void)dm::init_device_mesh(world, mesh2(2, 4), intra({"dp"})); },
               {"init_device_mesh (options.intra_node): intra-node requirement not met: the groups of 'dp' span up to 2 "
                "nodes (4 of 4 groups cross nodes)"},
               __LINE__);
  // Impossible: tp=8 with 4 ranks per node.
  using tp8 = dm::mesh<dm::dim<"tp", 8>>;
  expect_error([&] { (void)dm::init_device_mesh<tp8>(world, intra({"tp"}, true)); },
               {"init_device_mesh: node-major placement (options.node_major): no placement of the ranks keeps 'tp' "
                "within nodes: a group of 'tp' has 8 ranks, more than the 4 ranks of a node"},
               __LINE__);
  expect_error([&] { (void)dm::init_device_mesh<tp8>(world, intra({"tp"})); },
               {"intra-node requirement not met", "No placement of the ranks can keep 'tp' within nodes"}, __LINE__);
}

void round_robin(C& world, const std::vector<int>& nodes) {
  const std::string msg = expect_error([&] { (void)dm::init_device_mesh(world, mesh2(2, 4), intra({"tp"})); },
                                       {"intra-node requirement not met: the groups of 'tp' span up to 2 nodes (2 of 2 "
                                        "groups cross nodes)",
                                        "tp   4     2       no          2                2",
                                        "set options.node_major = true", "--map-by"},
                                       __LINE__);
  if (me == 0) std::printf("round_robin, intra_node tp:\n%s\n", msg.c_str());
  for (const bool lazy : {false, true}) {
    O o = intra({"tp"}, true);
    o.lazy = lazy;
    auto mesh = dm::init_device_mesh(world, mesh2(2, 4), o);
    CHECK(mesh.rank_map() == std::vector<int>({0, 2, 4, 6, 1, 3, 5, 7}));
    CHECK(mesh.topology()["tp"].intra_node());
    same_table(mesh, nodes);
    tp_within_nodes(mesh, nodes);
    // Derived meshes share the map and the nodes.
    auto tp = mesh["tp"_dim];
    CHECK((tp.topology()["tp"].intra_node() && tp.rank_map() == mesh.rank_map()));
  }
  // A mesh smaller than the world: node-major over its world ranks [0, 4) (nodes 0,1,0,1).
  auto small = dm::init_device_mesh(world, mesh2(2, 2), intra({"tp"}, true));
  CHECK(small.rank_map() == std::vector<int>({0, 2, 1, 3}));
  CHECK_EQ(small.is_member(), me < 4);
  tp_within_nodes(small, nodes);
  // topology alone: the table, no requirement, no map.
  O t;
  t.topology = true;
  auto plain = dm::init_device_mesh(world, mesh2(2, 4), t);
  CHECK((plain.rank_map().empty() && !plain.topology()["tp"].intra_node() && plain.topology()["dp"].intra_node()));
  same_table(plain, nodes);
}

void four_nodes(C& world, const std::vector<int>& nodes) {
  expect_error([&] { (void)dm::init_device_mesh(world, mesh2(2, 4), intra({"tp"}, true)); },
               {"no placement of the ranks keeps 'tp' within nodes: a group of 'tp' has 4 ranks, more than the 2 ranks "
                "of a node"},
               __LINE__);
  auto mesh = dm::init_device_mesh(world, mesh2(4, 2), intra({"tp"}, true));
  CHECK(mesh.rank_map() == std::vector<int>({0, 4, 1, 5, 2, 6, 3, 7}));
  CHECK_EQ(mesh.topology().nodes, 4);
  tp_within_nodes(mesh, nodes);
  same_table(mesh, nodes);
}

/// One machine (no DEVMESH_NODE_ID), 1-8 ranks: every group is within the one node.
void one_node(C& world, const std::vector<int>& nodes) {
  const int w = world.size();
  auto mesh = dm::init_device_mesh(world, mesh2(1, w), intra({"tp", "dp"}, true));
  CHECK(mesh.rank_map().empty());
  CHECK_EQ(mesh.topology().nodes, 1);
  CHECK(mesh.topology()["tp"].intra_node());
  same_table(mesh, nodes);
  // Ranks that disagree on asking for the nodes all throw (the options are digested).
  if (w < 2) return;
  O o;
  o.topology = me == 1;
  expect_error([&] { (void)dm::init_device_mesh(world, mesh2(1, w), o); },
               {"the ranks disagree on the device mesh", "topology"}, __LINE__);
}

/// The world, with `me` set, and the nodes of the with_node_id.sh mode, when that is `mode`
/// ("none" without one: the machine's nodes, whatever ctest inherited); nullopt otherwise.
std::optional<std::pair<C, std::vector<int>>> run_in(const std::string& mode) {
  const std::string given = test::arg(0, "none");
  if (given != mode) return std::nullopt;
  if (mode == "none") unsetenv("DEVMESH_NODE_ID");
  C world = dm::mpi::world();
  me = world.rank();
  if (mode != "none") REQUIRE_MESSAGE(world.size() == 8, ("mode " + mode + " runs on 8 ranks"));
  std::vector<int> nodes = nodes_for(mode, world.size());
  return std::pair{std::move(world), std::move(nodes)};
}

}  // namespace

TEST_CASE("the with_node_id.sh mode is one of none, block, round_robin, four_nodes") {
  const std::string mode = test::arg(0, "none");
  CHECK_MESSAGE((mode == "none" || mode == "block" || mode == "round_robin" || mode == "four_nodes"),
                ("unknown mode " + mode));
}

TEST_CASE("one machine: every group within the one node") {
  if (auto r = run_in("none")) one_node(r->first, r->second);
}

TEST_CASE("block: tp within nodes as placed, dp across, impossible placements") {
  if (auto r = run_in("block")) block(r->first, r->second);
}

TEST_CASE("round_robin: node-major placement keeps tp within nodes") {
  if (auto r = run_in("round_robin")) round_robin(r->first, r->second);
}

TEST_CASE("four_nodes: node-major placement of tp=2, tp=4 impossible") {
  if (auto r = run_in("four_nodes")) four_nodes(r->first, r->second);
}
}  // namespace mpi_topology_init_test
