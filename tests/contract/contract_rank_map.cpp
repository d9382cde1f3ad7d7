// tests/contract/contract_rank_map.cpp (issue 12): a bad rank map or a bad combination of the
// topology options makes EVERY rank throw mesh_error saying what is wrong, and the world
// stays usable. 4 ranks, a (dp=1, cp=2, tp=2) mesh unless said otherwise:
//
//   duplicate            every rank passes {0, 1, 1, 3}: "rank_map[2] = 1 repeats rank_map[1]"
//   out_of_range         {0, 1, 2, 4}: "rank_map[3] = 4 is not a world rank"; {-1, ...} too
//   wrong_size           5 entries for 4 positions; 3 entries for a mesh of 4 in a world of 4
//   one_rank_bad         only rank 2 passes a repeated entry: "init_device_mesh failed on rank 2 of 4"
//   mismatch             rank 3 passes another (valid) map: "the ranks disagree", both maps named
//   from_comms           from_comms with a repeated entry: every rank throws
//   node_major_and_map   options.node_major with options.rank_map: excluded
//   node_major_alone     options.node_major without intra_node
//   from_comms_node_major  options.node_major on from_comms: refused
//   unknown_intra_node   intra_node = {"pp"}: "unknown dim 'pp'", the dims listed
//   identity             an identity map is the row-major path: no map stored, same groups
//   no_topology          mesh.topology() without node discovery at init: a clear error
#include <array>
#include <span>
#include <string>
#include <vector>

#include "common.hpp"

namespace contract_rank_map_test {  // one per file: a unity TU holds several files (devmesh_test_program)

using C = dm::mpi::communicator;
using O = dm::device_mesh_options<C>;
using m3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;

namespace {

int me = 0;

O with_map(std::vector<int> map) {
  O o;
  o.rank_map = std::move(map);
  return o;
}

/// init_device_mesh with `o` must throw mesh_error on this rank containing every needle.
void expect_init_error(const C& world, const O& o, std::initializer_list<std::string> needles, const char* label) {
  const auto t = contract::catch_all([&] { (void)dm::init_device_mesh(world, m3(1, 2, 2), o); });
  contract::expect_mesh_error(t, needles, __FILE__, __LINE__, label);
  if (me == 0) contract::show(label, t.what);
}

void duplicate(const C& world) {
  expect_init_error(world, with_map({0, 1, 1, 3}), {"rank map: rank_map[2] = 1 repeats rank_map[1]", "failed on ranks 0-3 of 4"},
                    "duplicate");
}

void out_of_range(const C& world) {
  expect_init_error(world, with_map({0, 1, 2, 4}), {"rank_map[3] = 4 is not a world rank (the world has 4: [0, 4))"},
                    "out of range");
  expect_init_error(world, with_map({-1, 1, 2, 3}), {"rank_map[0] = -1 is not a world rank"}, "negative");
}

void wrong_size(const C& world) {
  expect_init_error(world, with_map({0, 1, 2, 3, 0}), {"it has 5 entries, the mesh has 4 positions"}, "too long");
  expect_init_error(world, with_map({3, 2, 1}), {"it has 3 entries, the mesh has 4 positions"}, "too short");
}

void one_rank_bad(const C& world) {
  const std::vector<int> map = me == 2 ? std::vector<int>{3, 3, 1, 0} : std::vector<int>{3, 2, 1, 0};
  expect_init_error(world, with_map(map), {"init_device_mesh failed on rank 2 of 4", "rank_map[1] = 3 repeats rank_map[0]"},
                    "one rank bad");
}

void mismatch(const C& world) {
  const std::vector<int> map = me == 3 ? std::vector<int>{1, 0, 2, 3} : std::vector<int>{0, 2, 1, 3};
  expect_init_error(world, with_map(map),
                    {"the ranks disagree on the device mesh", "rank 3: ", "rank map 1,0,2-3", "ranks 0-2: ",
                     "rank map 0,2,1,3"},
                    "mismatch");
}

void from_comms(const C& world) {
  // The right communicators for the identity map; the map itself is bad on every rank.
  std::array<C, 3> comms{world.split(me, 0), world.split(me / 2, me % 2), world.split(me / 2, me % 2)};
  const auto t = contract::catch_all(
      [&] { (void)dm::from_comms(world, std::move(comms), m3(1, 2, 2), with_map({0, 2, 2, 3})); });
  EXPECT_MESH_ERROR(t, "from_comms with a bad map", "from_comms failed on ranks 0-3 of 4",
                    "rank_map[2] = 2 repeats rank_map[1]");
  if (me == 0) contract::show("from_comms", t.what);
}

void node_major_and_map(const C& world) {
  O o = with_map({3, 2, 1, 0});
  o.node_major = true;
  o.intra_node = {"tp"};
  expect_init_error(world, o, {"options.node_major and options.rank_map exclude each other"}, "node_major and map");
}

void node_major_alone(const C& world) {
  O o;
  o.node_major = true;
  expect_init_error(world, o, {"options.node_major needs options.intra_node"}, "node_major alone");
}

void from_comms_node_major(const C& world) {
  std::array<C, 3> comms{world.split(me, 0), world.split(me / 2, me % 2), world.split(me / 2, me % 2)};
  O o;
  o.node_major = true;
  o.intra_node = {"tp"};
  const auto t = contract::catch_all([&] { (void)dm::from_comms(world, std::move(comms), m3(1, 2, 2), o); });
  EXPECT_MESH_ERROR(t, "from_comms node_major", "options.node_major cannot reorder adopted communicators");
}

void unknown_intra_node(const C& world) {
  O o;
  o.intra_node = {"tp", "pp"};
  expect_init_error(world, o, {"options.intra_node: unknown dim 'pp'; the mesh's dims are: dp, cp, tp"},
                    "unknown intra_node dim");
}

void identity(const C& world) {
  auto plain = dm::init_device_mesh(world, m3(1, 2, 2));
  auto mapped = dm::init_device_mesh(world, m3(1, 2, 2), with_map({0, 1, 2, 3}));
  CHECK(mapped.rank_map().empty());  // stored as no map: the row-major path
  CHECK_EQ(mapped.position(), me);
  CHECK_EQ(mapped.communicator_count(), plain.communicator_count());
  CHECK(contract::compare(mapped.comm<"tp">().native(), plain.comm<"tp">().native()) == MPI_CONGRUENT);
  CHECK(!(mapped == plain));  // two inits: never equal, whatever their maps
  // A real map: equal to its own views only.
  auto reversed = dm::init_device_mesh(world, m3(1, 2, 2), with_map({3, 2, 1, 0}));
  CHECK((reversed == reversed.slice<"dp", "cp", "tp">()));
  CHECK(!(reversed == plain));
  CHECK_EQ(reversed.position(), 3 - me);
}

void no_topology(const C& world) {
  auto mesh = dm::init_device_mesh(world, m3(1, 2, 2));
  const auto t = contract::catch_all([&] { (void)mesh.topology(); });
  EXPECT_MESH_ERROR(t, "topology() without discovery", "the nodes were not discovered at init",
                    "options.topology = true");
}

/// A scenario's frame: 4 ranks that start together and meet again at the end (also when
/// the test case throws).
struct scenario {
  C world = dm::mpi::world();
  scenario() {
    me = world.rank();
    contract::require_ranks(4);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  scenario(const scenario&) = delete;
  scenario& operator=(const scenario&) = delete;
  ~scenario() { MPI_Barrier(MPI_COMM_WORLD); }

  /// Runs the scenario; the world is still usable after it.
  void run(void (*body)(const C&)) {
    body(world);
    std::vector<int> v{1};
    world.all_reduce(v.data(), v.data(), 1, dm::op::sum);
    CHECK_EQ(v[0], 4);
  }
};

}  // namespace

TEST_CASE_FIXTURE(scenario, "duplicate") { run(duplicate); }
TEST_CASE_FIXTURE(scenario, "out_of_range") { run(out_of_range); }
TEST_CASE_FIXTURE(scenario, "wrong_size") { run(wrong_size); }
TEST_CASE_FIXTURE(scenario, "one_rank_bad") { run(one_rank_bad); }
TEST_CASE_FIXTURE(scenario, "mismatch") { run(mismatch); }
TEST_CASE_FIXTURE(scenario, "from_comms") { run(from_comms); }
TEST_CASE_FIXTURE(scenario, "node_major_and_map") { run(node_major_and_map); }
TEST_CASE_FIXTURE(scenario, "node_major_alone") { run(node_major_alone); }
TEST_CASE_FIXTURE(scenario, "from_comms_node_major") { run(from_comms_node_major); }
TEST_CASE_FIXTURE(scenario, "unknown_intra_node") { run(unknown_intra_node); }
TEST_CASE_FIXTURE(scenario, "identity") { run(identity); }
TEST_CASE_FIXTURE(scenario, "no_topology") { run(no_topology); }
}  // namespace contract_rank_map_test
