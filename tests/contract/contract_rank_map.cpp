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

}  // namespace

int main(int argc, char** argv) {
  dm::mpi::environment env(argc, argv);
  const std::string scenario = argc > 1 ? argv[1] : "";
  const auto world = dm::mpi::world();
  me = world.rank();
  if (!contract::require_ranks(4, "contract_rank_map")) return 2;
  const auto t = contract::catch_all([&] {
    MPI_Barrier(MPI_COMM_WORLD);
    if (scenario == "duplicate") duplicate(world);
    else if (scenario == "out_of_range") out_of_range(world);
    else if (scenario == "wrong_size") wrong_size(world);
    else if (scenario == "one_rank_bad") one_rank_bad(world);
    else if (scenario == "mismatch") mismatch(world);
    else if (scenario == "from_comms") from_comms(world);
    else if (scenario == "node_major_and_map") node_major_and_map(world);
    else if (scenario == "node_major_alone") node_major_alone(world);
    else if (scenario == "from_comms_node_major") from_comms_node_major(world);
    else if (scenario == "unknown_intra_node") unknown_intra_node(world);
    else if (scenario == "identity") identity(world);
    else if (scenario == "no_topology") no_topology(world);
    else throw std::invalid_argument("unknown scenario '" + scenario + "'");
    // The world is still usable after every scenario.
    std::vector<int> v{1};
    world.all_reduce(v.data(), v.data(), 1, dm::op::sum);
    CHECK_EQ(v[0], 4);
  });
  if (t.any) test::fail(__FILE__, __LINE__, "scenario " + scenario + " threw " + t.type + ": " + t.what);
  MPI_Barrier(MPI_COMM_WORLD);
  return test::finish(("contract.rank_map." + scenario).c_str());
}
