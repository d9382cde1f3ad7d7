// Topology (topology.hpp): where each dim's groups lie on the nodes, the intra-node check and
// its message, and node-major placement (a rank map that keeps chosen dims within nodes
// whatever order the launcher gave the ranks), on simulated node assignments.
#include <doctest/doctest.h>

#include <devmesh/devmesh.hpp>
#include <devmesh/runtime/topology.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace dm = devmesh;

namespace {
using mesh24 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

/// Node of world rank r for n ranks in nodes of `per` ranks: block (r / per) or round-robin
/// (r % (n / per), as mpirun --map-by node).
std::vector<int> block_nodes(int n, int per) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) v[static_cast<std::size_t>(r)] = r / per;
  return v;
}
std::vector<int> round_robin_nodes(int n, int per) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) v[static_cast<std::size_t>(r)] = r % (n / per);
  return v;
}
/// A shuffled launcher: the block assignment permuted (node ids are arbitrary ints, too).
std::vector<int> shuffled_nodes(int n, int per, unsigned seed) {
  std::vector<int> v = block_nodes(n, per);
  for (int& x : v) x = 100 + 7 * x;
  std::mt19937 rng(seed);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const dm::mesh_error& e) {
    return e.what();
  }
  return "(no exception)";
}

bool is_permutation_of_world(const std::vector<int>& map) {
  std::vector<int> sorted = map, iota(map.size());
  std::sort(sorted.begin(), sorted.end());
  std::iota(iota.begin(), iota.end(), 0);
  return sorted == iota;
}

template <class M>
bool intra_node_under(const M& m, const std::vector<int>& nodes, const std::vector<int>& map,
                      std::initializer_list<std::string_view> dims) {
  const auto t = dm::topology(m, nodes, map);
  for (auto d : dims)
    if (!t[d].intra_node()) return false;
  return true;
}
}  // namespace

TEST_SUITE("topology") {
  TEST_CASE("(dp=2, tp=4) on 2 nodes of 4, block placement: tp within nodes, dp across") {
    const auto t = dm::topology(mesh24{}, block_nodes(8, 4));
    CHECK(dm::to_string(t) ==
          "8 ranks on 2 nodes, 4 ranks per node\n"
          "dim  size  groups  intra-node  max nodes/group  crossing groups\n"
          "dp   2     4       no          2                4\n"
          "tp   4     2       yes         1                0\n");
    CHECK(t.ranks == 8);
    CHECK(t.nodes == 2);
    CHECK(t.min_ranks_per_node == 4);
    CHECK(t.max_ranks_per_node == 4);
    CHECK(t["tp"].intra_node());
    CHECK(t.dims[1].name == "tp");
    CHECK(!t["dp"].intra_node());
    CHECK(t["dp"].max_nodes == 2);
    std::ostringstream os;
    os << t;
    CHECK(os.str() == dm::to_string(t));
    CHECK(message_of([&] { (void)t["pp"]; }) == "devmesh: topology: unknown dim 'pp'; the dims are: dp, tp");
    CHECK(t.find("pp") == nullptr);
  }

  TEST_CASE("round-robin placement (node = rank % 2): tp crosses, spanning 2 nodes") {
    const auto t = dm::topology(mesh24{}, round_robin_nodes(8, 4));
    CHECK(dm::to_string(t) ==
          "8 ranks on 2 nodes, 4 ranks per node\n"
          "dim  size  groups  intra-node  max nodes/group  crossing groups\n"
          "dp   2     4       yes         1                0\n"
          "tp   4     2       no          2                2\n");
  }

  TEST_CASE("4 nodes of 2") {
    const auto block = dm::topology(mesh24{}, block_nodes(8, 2));
    CHECK(block["tp"].max_nodes == 2);
    CHECK(block["tp"].crossing_groups == 2);
    CHECK(block["dp"].max_nodes == 2);
    const auto rr = dm::topology(mesh24{}, round_robin_nodes(8, 2));
    CHECK(dm::to_string(rr) ==
          "8 ranks on 4 nodes, 2 ranks per node\n"
          "dim  size  groups  intra-node  max nodes/group  crossing groups\n"
          "dp   2     4       yes         1                0\n"
          "tp   4     2       no          4                2\n");
    // (dp=4, tp=2) in block placement: tp fits a node of 2.
    const auto t42 = dm::topology(dm::mesh<dm::dim<"dp", 4>, dm::dim<"tp", 2>>{}, block_nodes(8, 2));
    CHECK(t42["tp"].intra_node());
    CHECK(t42["dp"].max_nodes == 4);
    CHECK(t42["dp"].crossing_groups == 2);
  }

  TEST_CASE("unequal nodes and one node") {
    const auto t = dm::topology(mesh24{}, std::vector<int>{5, 5, 5, 5, 5, -1, -1, -1});
    CHECK(dm::to_string(t).starts_with("8 ranks on 2 nodes, 3 to 5 ranks per node\n"));
    CHECK(t["tp"].crossing_groups == 1);
    const auto one = dm::topology(mesh24{}, std::vector<int>(8, 0));
    CHECK(one.nodes == 1);
    CHECK(one["dp"].intra_node());
    CHECK(one["tp"].intra_node());
    const auto single = dm::topology(dm::mesh<dm::dim<"x", 1>>{}, std::vector<int>{3});
    CHECK(dm::to_string(single).starts_with("1 rank on 1 node, 1 rank per node\n"));
  }

  TEST_CASE("flattened meshes: aliases have rows of their own") {
    const auto fl = mesh24{}.flatten<"dp_tp", "dp", "tp">();
    const auto t = dm::topology(fl, block_nodes(8, 2));
    CHECK(dm::to_string(t) ==
          "8 ranks on 4 nodes, 2 ranks per node\n"
          "dim            size  groups  intra-node  max nodes/group  crossing groups\n"
          "dp             2     4       no          2                4\n"
          "tp             4     2       no          2                2\n"
          "dp_tp (alias)  8     1       no          4                1\n");
    CHECK(t["dp_tp"].alias);
    CHECK(t["dp_tp"].index == 2);
    // The whole mesh as one dim: its former dims stay as aliases.
    const auto all = mesh3d{}.flatten<"all">();
    const auto ta = dm::topology(all, block_nodes(8, 4));
    REQUIRE(ta.dims.size() == 4);
    CHECK(ta.dims[0].name == "all");
    CHECK(ta["all"].max_nodes == 2);
    CHECK(ta["cp"].intra_node());
    CHECK(ta["tp"].intra_node());
    CHECK(!ta["dp"].intra_node());
    // A non-adjacent flatten (dp with tp, stride 4 and 1) on nodes of 4.
    const auto dt = dm::topology(mesh3d{}.flatten<"dp_tp", "dp", "tp">(), block_nodes(8, 4));
    CHECK(dt["dp_tp"].groups == 2);
    CHECK(dt["dp_tp"].max_nodes == 2);
  }

  TEST_CASE("sliced meshes: every submesh's groups are counted, over the whole root") {
    const auto tp = mesh24{}.slice<"tp">();
    const auto t = dm::topology(tp, block_nodes(8, 4));
    CHECK(dm::to_string(t) ==
          "8 ranks on 2 nodes, 4 ranks per node\n"
          "dim  size  groups  intra-node  max nodes/group  crossing groups\n"
          "tp   4     2       yes         1                0\n");
    const auto hsdp = mesh3d{}.slice<"dp", "cp">().flatten<"dp_cp">();
    const auto th = dm::topology(hsdp, block_nodes(8, 2));
    CHECK(th.dims[0].name == "dp_cp");
    CHECK(th["dp_cp"].groups == 2);
    CHECK(th["dp_cp"].max_nodes == 4);
    CHECK(th["cp"].max_nodes == 2);
    // Transposed slice: same groups, another order.
    CHECK(dm::topology(mesh3d{}.slice<"tp", "cp">(), block_nodes(8, 4))["cp"].intra_node());
  }

  TEST_CASE("a dynamic mesh") {
    using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;
    const auto t = dm::topology(hsdp::for_world(16), block_nodes(16, 4));
    CHECK(t["shard"].intra_node());
    CHECK(t["replicate"].groups == 4);
    CHECK(t["replicate"].max_nodes == 4);
  }

  TEST_CASE("bad inputs throw mesh_error") {
    CHECK(message_of([] { (void)dm::topology(mesh24{}, std::vector<int>(7, 0)); }) ==
          "devmesh: topology: node_of_rank has 7 entries, the mesh's root has 8 ranks (one node id per rank)");
    const auto nodes = block_nodes(8, 4);
    CHECK(message_of([&] { (void)dm::topology(mesh24{}, nodes, std::vector<int>{0, 1, 2, 3, 4, 5, 6, 6}); }) ==
          "devmesh: topology: the rank map is not a list of distinct world ranks in [0, 8): position 7 has world "
          "rank 6 again");
    CHECK(message_of([&] { (void)dm::topology(mesh24{}, nodes, std::vector<int>{0, 1, 2, 3, 4, 5, 6, 8}); })
              .find("position 7 has world rank 8") != std::string::npos);
    CHECK(message_of([&] { (void)dm::topology(mesh24{}, nodes, std::vector<int>{0, 1}); }) ==
          "devmesh: topology: the rank map has 2 entries, the mesh's root has 8 positions");
    CHECK(message_of([&] { dm::check_intra_node(mesh24{}, nodes, {"pp"}); }) ==
          "devmesh: check_intra_node: unknown dim 'pp'; the mesh's dims are: dp, tp");
    CHECK(message_of([&] { (void)dm::node_major_rank_map(mesh24{}, nodes, {"pp"}); }) ==
          "devmesh: node_major_rank_map: unknown dim 'pp'; the mesh's dims are: dp, tp");
    CHECK(message_of([&] { (void)dm::node_major_rank_map<"tp">(mesh24{}, std::vector<int>(4, 0)); })
              .starts_with("devmesh: node_major_rank_map: node_of_rank has 4 entries"));
  }

  TEST_CASE("check_intra_node passes, and returns the topology") {
    const auto nodes = block_nodes(8, 4);
    CHECK(dm::check_intra_node<"tp">(mesh24{}, nodes)["tp"].intra_node());
    CHECK(dm::check_intra_node(mesh24{}, nodes, {"tp"}).nodes == 2);
    const std::vector<std::string> from_config{"tp"};
    CHECK(dm::check_intra_node(mesh24{}, nodes, from_config).ranks == 8);
    CHECK(dm::check_intra_node(mesh24{}, nodes, std::vector<std::string_view>{}).ranks == 8);  // nothing required
  }

  TEST_CASE("check_intra_node's message: the offending dims, the table, the fix") {
    const auto rr = round_robin_nodes(8, 4);
    const std::string msg = message_of([&] { dm::check_intra_node<"tp">(mesh24{}, rr); });
    CHECK(msg ==
          "devmesh: intra-node requirement not met: the groups of 'tp' span up to 2 nodes (2 of 2 groups cross nodes).\n"
          "8 ranks on 2 nodes, 4 ranks per node\n"
          "dim  size  groups  intra-node  max nodes/group  crossing groups\n"
          "dp   2     4       yes         1                0\n"
          "tp   4     2       no          2                2\n"
          "Fix: launch with the ranks grouped by node (block placement: consecutive world ranks on one node, e.g. "
          "mpirun --map-by slot or --map-by core, srun --distribution=block), or use node-major placement: "
          "devmesh::node_major_rank_map(mesh, node_of_rank, {\"tp\"}) gives a rank map (position -> world rank) that "
          "keeps these dims within nodes whatever order the launcher gave the ranks.");
    // Run-time names give the same message.
    CHECK(message_of([&] { dm::check_intra_node(mesh24{}, rr, {"tp"}); }) == msg);
    // Several offending dims are all named; a satisfied one is not.
    const std::string two = message_of([&] { dm::check_intra_node<"cp", "tp", "dp">(mesh3d{}, block_nodes(8, 2)); });
    CHECK(two.starts_with("devmesh: intra-node requirement not met: the groups of 'cp' span up to 2 nodes (4 of 4 "
                          "groups cross nodes); the groups of 'dp' span up to 2 nodes"));
    CHECK(two.find("'tp' span") == std::string::npos);
    CHECK(two.find("No placement of the ranks can keep 'cp', 'tp' and 'dp' within nodes: the groups of 'cp', 'tp' "
                   "and 'dp' together link 8 ranks, more than the 2 ranks of a node.") != std::string::npos);
  }

  TEST_CASE("check_intra_node's fix when the dim is not innermost: node-major placement only") {
    using tp_outer = dm::mesh<dm::dim<"tp", 2>, dm::dim<"dp", 4>>;
    const std::string msg = message_of([] { dm::check_intra_node<"tp">(tp_outer{}, block_nodes(8, 4)); });
    CHECK(msg.find("(4 of 4 groups cross nodes)") != std::string::npos);
    CHECK(msg.find("Fix: use node-major placement: devmesh::node_major_rank_map(mesh, node_of_rank, {\"tp\"})") !=
          std::string::npos);
    CHECK(msg.find("Block placement alone is not enough with this layout") != std::string::npos);
  }

  TEST_CASE("check_intra_node's message when no placement exists: tp=8 on nodes of 4") {
    using mesh18 = dm::mesh<dm::dim<"dp", 1>, dm::dim<"tp", 8>>;
    const std::string msg = message_of([] { dm::check_intra_node<"tp">(mesh18{}, block_nodes(8, 4)); });
    CHECK(msg.find("the groups of 'tp' span up to 2 nodes (1 of 1 groups crosses nodes)") != std::string::npos);
    CHECK(msg.find("No placement of the ranks can keep 'tp' within nodes: a group of 'tp' has 8 ranks, more than the "
                   "4 ranks of a node. Make these dims smaller") != std::string::npos);
  }

  TEST_CASE("node-major placement: block, round-robin and shuffled launchers") {
    const auto block = block_nodes(8, 4);
    const auto map_block = dm::node_major_rank_map(mesh24{}, block, {"tp"});
    CHECK(map_block == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});  // already right: the identity
    const auto rr = round_robin_nodes(8, 4);
    const auto map_rr = dm::node_major_rank_map<"tp">(mesh24{}, rr);
    CHECK(map_rr == std::vector<int>{0, 2, 4, 6, 1, 3, 5, 7});
    CHECK(dm::check_intra_node<"tp">(mesh24{}, rr, map_rr)["tp"].intra_node());
    for (unsigned seed = 0; seed < 20; ++seed) {
      CAPTURE(seed);
      const auto sh = shuffled_nodes(8, 4, seed);
      const auto map = dm::node_major_rank_map(mesh24{}, sh, std::vector<std::string>{"tp"});
      CHECK(is_permutation_of_world(map));
      CHECK(intra_node_under(mesh24{}, sh, map, {"tp"}));
      CHECK_NOTHROW(dm::check_intra_node<"tp">(mesh24{}, sh, map));
    }
  }

  TEST_CASE("node-major placement: 4 nodes of 2, several dims, dims not innermost") {
    using mesh42 = dm::mesh<dm::dim<"dp", 4>, dm::dim<"tp", 2>>;
    for (const auto& nodes : {block_nodes(8, 2), round_robin_nodes(8, 2), shuffled_nodes(8, 2, 7)}) {
      const auto map = dm::node_major_rank_map<"tp">(mesh42{}, nodes);
      CHECK(is_permutation_of_world(map));
      CHECK(intra_node_under(mesh42{}, nodes, map, {"tp"}));
    }
    // cp and tp together (4 ranks) on nodes of 4, any launcher order.
    for (const auto& nodes : {block_nodes(8, 4), round_robin_nodes(8, 4), shuffled_nodes(8, 4, 3)}) {
      const auto map = dm::node_major_rank_map<"cp", "tp">(mesh3d{}, nodes);
      CHECK(is_permutation_of_world(map));
      CHECK(intra_node_under(mesh3d{}, nodes, map, {"cp", "tp"}));
    }
    // dp and tp (not adjacent), and tp outermost: still placed, as blocks of positions.
    for (const auto& nodes : {block_nodes(8, 4), round_robin_nodes(8, 4), shuffled_nodes(8, 4, 5)}) {
      const auto map = dm::node_major_rank_map<"dp", "tp">(mesh3d{}, nodes);
      CHECK(is_permutation_of_world(map));
      CHECK(intra_node_under(mesh3d{}, nodes, map, {"dp", "tp"}));
      using tp_outer = dm::mesh<dm::dim<"tp", 2>, dm::dim<"dp", 4>>;
      const auto map2 = dm::node_major_rank_map<"tp">(tp_outer{}, nodes);
      CHECK(is_permutation_of_world(map2));
      CHECK(intra_node_under(tp_outer{}, nodes, map2, {"tp"}));
    }
    // An alias with one of its own dims: the alias decides (dp_tp = 4 ranks on nodes of 4).
    const auto fl = mesh3d{}.flatten<"cp_tp", "cp", "tp">();
    const auto rr = round_robin_nodes(8, 4);
    const auto map = dm::node_major_rank_map(fl, rr, {"tp", "cp_tp"});
    CHECK(intra_node_under(fl, rr, map, {"tp", "cp", "cp_tp"}));
    // A slice's dims, over the root's positions.
    const auto map_slice = dm::node_major_rank_map<"tp">(mesh24{}.slice<"tp">(), rr);
    CHECK(intra_node_under(mesh24{}.slice<"tp">(), rr, map_slice, {"tp"}));
    // No dims: node-major order itself.
    CHECK(dm::node_major_rank_map(mesh24{}, rr, std::vector<std::string>{}) == std::vector<int>{0, 2, 4, 6, 1, 3, 5, 7});
  }

  TEST_CASE("node-major placement with unequal nodes whose sizes are multiples of the groups") {
    using mesh34 = dm::mesh<dm::dim<"dp", 3>, dm::dim<"tp", 4>>;
    const std::vector<int> nodes{0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1};  // node 0: 4 ranks, node 1: 8
    const auto map = dm::node_major_rank_map<"tp">(mesh34{}, nodes);
    CHECK(is_permutation_of_world(map));
    CHECK(intra_node_under(mesh34{}, nodes, map, {"tp"}));
  }

  TEST_CASE("node-major placement: impossible cases throw with the reason") {
    using mesh18 = dm::mesh<dm::dim<"dp", 1>, dm::dim<"tp", 8>>;
    CHECK(message_of([] { (void)dm::node_major_rank_map<"tp">(mesh18{}, block_nodes(8, 4)); }) ==
          "devmesh: node_major_rank_map: no placement of the ranks keeps 'tp' within nodes: a group of 'tp' has 8 "
          "ranks, more than the 4 ranks of a node");
    CHECK(message_of([] { (void)dm::node_major_rank_map<"tp">(mesh24{}, std::vector<int>{0, 0, 0, 0, 0, 1, 1, 1}); }) ==
          "devmesh: node_major_rank_map: no placement of the ranks keeps 'tp' within nodes: the ranks that the groups "
          "of 'tp' keep together come in blocks of 4, and the nodes have unequal rank counts (3 to 5): node 0 (world "
          "ranks 0-4) has 5, not a multiple of 4");
    using mesh43 = dm::mesh<dm::dim<"dp", 4>, dm::dim<"tp", 3>>;
    CHECK(message_of([] { (void)dm::node_major_rank_map<"tp">(mesh43{}, block_nodes(12, 4)); }) ==
          "devmesh: node_major_rank_map: no placement of the ranks keeps 'tp' within nodes: the ranks that the groups "
          "of 'tp' keep together come in blocks of 3, which does not divide the 4 ranks per node");
    // Overlapping requirements: cp and tp (4 ranks together) on nodes of 2.
    CHECK(message_of([] { (void)dm::node_major_rank_map<"cp", "tp">(mesh3d{}, round_robin_nodes(8, 2)); })
              .ends_with("the groups of 'cp' and 'tp' together link 4 ranks, more than the 2 ranks of a node"));
  }

  TEST_CASE("node-major placement, many shapes and launchers: always a permutation that passes the check") {
    using mesh2222 = dm::mesh<dm::dim<"a", 2>, dm::dim<"b", 2>, dm::dim<"c", 2>, dm::dim<"d", 2>>;
    std::mt19937 rng(12345);
    for (int trial = 0; trial < 50; ++trial) {
      CAPTURE(trial);
      const int per = 1 << (1 + trial % 3);  // nodes of 2, 4 or 8 ranks
      const auto nodes = shuffled_nodes(16, per, static_cast<unsigned>(rng()));
      static constexpr std::string_view names[] = {"a", "b", "c", "d"};
      std::vector<std::string_view> dims;
      int product = 1;
      for (int i = 0; i < 4; ++i)
        if ((rng() & 1u) && product * 2 <= per) dims.push_back(names[i]), product *= 2;
      const auto map = dm::node_major_rank_map(mesh2222{}, nodes, dims);
      CHECK(is_permutation_of_world(map));
      CHECK_NOTHROW(dm::check_intra_node(mesh2222{}, nodes, dims, map));
    }
  }
}
