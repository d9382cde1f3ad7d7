// tests/nccl/rank_map.cpp: rank maps and node discovery over NCCL-on-the-double (4 and 8
// ranks). With options.rank_map, every dim's ncclCommSplit gets the color and key of the
// rank's *position* (color: the group's first position, key: the index in the group) and
// every communicator's members, as the double saw them (MPI_COMM_WORLD ranks in communicator
// order), are the map's world ranks of the group; non-members of an offset mesh make no
// communicator. Node discovery (dm::nccl::node_of_ranks over the host channel, host names or
// DEVMESH_NODE_ID) feeds intra_node, node_major and topology(); a world without a host channel
// refuses it on every rank.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <devmesh/devmesh.hpp>

#include "common.hpp"
#include "../mpi/mpi_doctest.hpp"

namespace nccl_rank_map_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;
using namespace dm::literals;
using namespace nccl_test;
using mesh2 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;
using O = dm::device_mesh_options<dm::nccl::communicator>;

namespace {

/// The positions of p's group along dim d of a row-major (dp, tp) mesh, by enumeration.
std::vector<int> model_group(int dp, int tp, int d, int p) {
  std::vector<int> out;
  for (int q = 0; q < dp * tp; ++q)
    if (d == 0 ? q % tp == p % tp : q / tp == p / tp) out.push_back(q);
  return out;
}

/// Dim N's communicator against the model: members (world ranks), rank, and a sum.
template <dm::fixed_string N, class M>
void check_dim(const M& mesh, const std::vector<int>& map, int dp, int tp, int d) {
  const int me = world_rank();
  const int p = static_cast<int>(std::find(map.begin(), map.end(), me) - map.begin());
  const auto g = model_group(dp, tp, d, p);
  const auto& c = dm::comm<N>(mesh);
  REQUIRE(c.valid());
  CHECK(c.size() == static_cast<int>(g.size()));
  CHECK(c.rank() == static_cast<int>(std::find(g.begin(), g.end(), p) - g.begin()));
  devmesh_fake_comm_info info{};
  REQUIRE(devmesh_fake_nccl_comm_info(c.native(), &info));
  for (std::size_t i = 0; i < g.size(); ++i) CHECK(info.world_ranks[i] == map[static_cast<std::size_t>(g[i])]);
  std::vector<int> v{me};
  dm::all_reduce<N>(mesh, std::span(v), dm::op::sum, nullptr);
  REQUIRE(cudaStreamSynchronize(nullptr) == cudaSuccess);  // the double is asynchronous, as a GPU
  int sum = 0;
  for (int q : g) sum += map[static_cast<std::size_t>(q)];
  CHECK(v[0] == sum);
}

std::vector<int> shuffled(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  for (int i = 0; i < n; ++i) std::swap(v[static_cast<std::size_t>(i)], v[static_cast<std::size_t>((i * 5 + 3) % n)]);
  return v;
}

}  // namespace

TEST_CASE("a shuffled rank map: split colors and keys from positions, members from the map") {
  const int w = world_size(), me = world_rank();
  const int tp = 2, dp = w / tp;
  const auto map = shuffled(w);
  {
    auto world = dm::nccl::world(dm::mpi::world(), fast());
    O o;
    o.rank_map = map;
    auto mesh = dm::init_device_mesh(world, mesh2(dp, tp), o);
    const int p = static_cast<int>(std::find(map.begin(), map.end(), me) - map.begin());
    CHECK(mesh.position() == p);
    // The last split was tp's (dims are created in order): color = its group's first
    // position, key = the index of this rank's position in it.
    int color = -2, key = -2;
    devmesh_fake_nccl_last_split(&color, &key);
    CHECK(color == (p / tp) * tp);
    CHECK(key == p % tp);
    check_dim<"dp">(mesh, map, dp, tp, 0);
    check_dim<"tp">(mesh, map, dp, tp, 1);
    auto flat = mesh.flatten<"all", "dp", "tp">();
    CHECK(flat.ranks() == map);
  }
  CHECK(devmesh_fake_nccl_live_comms() == 0);
}

TEST_CASE("an offset mesh: world ranks outside the map make no communicator") {
  const int w = world_size(), me = world_rank();
  const auto map = dm::rank_range(w / 2, w / 2);
  {
    auto world = dm::nccl::world(dm::mpi::world(), fast());
    O o;
    o.rank_map = map;
    auto mesh = dm::init_device_mesh(world, mesh2(1, w / 2), o);
    CHECK(mesh.is_member() == (me >= w / 2));
    if (mesh.is_member()) {
      check_dim<"tp">(mesh, map, 1, w / 2, 1);
    } else {
      std::string what;
      try {
        (void)mesh.comm<"tp">();
      } catch (const dm::mesh_error& e) {
        what = e.what();
      }
      CHECK(what.find("its rank map holds world ranks " + std::to_string(w / 2) + "-" + std::to_string(w - 1)) !=
            std::string::npos);
    }
  }
  CHECK(devmesh_fake_nccl_live_comms() == 0);
}

TEST_CASE("node discovery over the host channel: host names, DEVMESH_NODE_ID, intra_node, node_major") {
  const int w = world_size(), me = world_rank();
  auto world = dm::nccl::world(dm::mpi::world(), fast());
  const auto dl = dm::deadline::after(std::chrono::seconds(60));
  {
    scoped_env none("DEVMESH_NODE_ID", nullptr);  // one machine: one node
    CHECK(dm::nccl::node_of_ranks(world, dl) == std::vector<int>(static_cast<std::size_t>(w), 0));
  }
  const std::string rr = std::to_string(me % 2);  // round-robin over 2 simulated nodes
  scoped_env node("DEVMESH_NODE_ID", rr.c_str());
  std::vector<int> expected;
  for (int r = 0; r < w; ++r) expected.push_back(r % 2);
  CHECK(dm::nccl::node_of_ranks(world, dl) == expected);
  const int tp = w / 2;
  O o;
  o.intra_node = {"tp"};
  std::string what;
  try {
    (void)dm::init_device_mesh(world, mesh2(2, tp), o);
  } catch (const dm::mesh_error& e) {
    what = e.what();
  }
  CHECK(what.find("intra-node requirement not met: the groups of 'tp' span up to 2 nodes") != std::string::npos);
  CHECK(all_true(!what.empty()));
  o.node_major = true;
  auto mesh = dm::init_device_mesh(world, mesh2(2, tp), o);
  CHECK(mesh.topology()["tp"].intra_node());
  CHECK(!mesh.topology()["dp"].intra_node());
  // Every tp communicator's members (as the double saw them) are on one node.
  devmesh_fake_comm_info info{};
  REQUIRE(devmesh_fake_nccl_comm_info(mesh.comm<"tp">().native(), &info));
  for (int i = 0; i < info.size; ++i) CHECK(info.world_ranks[i] % 2 == me % 2);
}

TEST_CASE("a malformed DEVMESH_NODE_ID on one rank: every rank throws") {
  auto world = dm::nccl::world(dm::mpi::world(), fast());
  scoped_env node("DEVMESH_NODE_ID", world_rank() == 1 ? "x1" : "0");
  std::string what;
  try {
    (void)dm::nccl::node_of_ranks(world, dm::deadline::after(std::chrono::seconds(60)));
  } catch (const dm::mesh_error& e) {
    what = e.what();
  }
  CHECK(what.find("node_of_ranks failed on rank 1 of " + std::to_string(world_size())) != std::string::npos);
  CHECK(what.find("DEVMESH_NODE_ID='x1' is not a node id") != std::string::npos);
}

TEST_CASE("a world without a host channel (world_from_env): asking for the nodes throws on every rank") {
  const std::string rank = std::to_string(world_rank()), size = std::to_string(world_size());
  scoped_env r("RANK", rank.c_str()), n("WORLD_SIZE", size.c_str()), a("MASTER_ADDR", "127.0.0.1"),
      p("MASTER_PORT", "29610"), id("NCCL_COMM_ID", nullptr);
  auto world = dm::nccl::world_from_env(fast());
  REQUIRE(!world.has_host_channel());
  std::string what;
  try {
    (void)dm::nccl::node_of_ranks(world, dm::deadline::after(std::chrono::seconds(60)));
  } catch (const dm::mesh_error& e) {
    what = e.what();
  }
  CHECK(what.find("has no host channel") != std::string::npos);
  O o;
  o.topology = true;
  what.clear();
  try {
    (void)dm::init_device_mesh(world, mesh2(1, world_size()), o);
  } catch (const dm::mesh_error& e) {
    what = e.what();
  }
  CHECK(what.find("the nodes cannot be discovered") != std::string::npos);
  CHECK(all_true(!what.empty()));
}
}  // namespace nccl_rank_map_test
