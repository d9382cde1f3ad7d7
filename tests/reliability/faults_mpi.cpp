// tests/reliability/faults_mpi.cpp: a fault on ONE rank during init_device_mesh over MPI;
// the other ranks must not hang. Run by bounded.sh under `timeout` (a hang fails).
//
// Each scenario is the test case of that name (faults_mpi --test-case=<scenario>):
//
//   faults_mpi different   rank 1 builds another mesh (dims swapped): the consistency check
//                          throws on every rank, naming rank 1 and both meshes (exit 0)
//   faults_mpi smaller     rank 3 passes a dynamic size giving a mesh smaller than the others'
//                          (valid on its own): the consistency check throws everywhere (exit 0)
//   faults_mpi bad_size    rank 2 passes a dynamic size whose mesh does not fit in the world:
//                          the agreement throws on every rank, naming rank 2 (exit 0)
//   faults_mpi flatten     the mesh is built alike; rank 0 flattens (tp, dp) where the others
//                          flatten (dp, tp) under the same alias: flatten throws on every rank
//   faults_mpi hook        a creation hook (comm_options::on_create) throws on rank 1 while
//                          the communicators are being split: the split's agreement makes
//                          every rank throw mesh_error carrying that exception's message,
//                          naming rank 1 (exit 0); nothing else ends the init
//
// Each rank also checks that the error came within a bound and left no communicator alive.
#include <chrono>
#include <cstdio>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <devmesh/devmesh.hpp>

#include "../mpi/mpi_doctest.hpp"
#include "comm_counter.hpp"

namespace reliability_faults_mpi_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;
using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 2>>;
using dp_tp = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 2>>;
using tp_dp = dm::mesh<dm::dim<"tp", 2>, dm::dim<"dp", 2>>;

/// Every rank must throw mesh_error containing each of `needles`.
template <class F>
void expect_everywhere(F&& init, std::initializer_list<const char*> needles) {
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    init();
    FAIL_CHECK("init_device_mesh did not throw");
  } catch (const dm::mesh_error& e) {
    message = e.what();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const char* n : needles)
    CHECK_MESSAGE(message.find(n) != std::string::npos, ("no '" + std::string(n) + "' in: " + message));
  CHECK(message.rfind("devmesh: ", 0) == 0);
  CHECK(s < 10.0);
  CHECK_EQ(comm_counter::live(), std::size_t{0});
  if (test::world_rank() == 0) std::printf("rank 0 got, after %.3f s: %s\n", s, message.c_str());
}

/// Every scenario runs on 4 ranks.
struct four_ranks {
  const dm::mpi::communicator world = dm::mpi::world();
  const int me = world.rank();
  four_ranks() { REQUIRE_MESSAGE(world.size() == 4, "faults_mpi: run on 4 ranks"); }
};

/// The world is still usable after the error: a collective over it agrees.
void world_still_usable() {
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK_EQ(sum, 4);
}

TEST_CASE_FIXTURE(four_ranks, "different") {
  expect_everywhere(
      [&] {
        if (me == 1)
          (void)dm::init_device_mesh<tp_dp>(world);
        else
          (void)dm::init_device_mesh<dp_tp>(world);
      },
      {"the ranks disagree on the device mesh", "rank 1 has mesh((tp=2, dp=2)", "ranks 0,2-3 have mesh((dp=2, tp=2)"});
  world_still_usable();
}

TEST_CASE_FIXTURE(four_ranks, "smaller") {
  expect_everywhere([&] { (void)dm::init_device_mesh(world, hsdp(me == 3 ? 1 : 2)); },
                    {"the ranks disagree on the device mesh", "rank 3 has mesh((replicate=1, shard=2)",
                     "ranks 0-2 have mesh((replicate=2, shard=2)"});
  world_still_usable();
}

TEST_CASE_FIXTURE(four_ranks, "bad_size") {
  expect_everywhere([&] { (void)dm::init_device_mesh(world, hsdp(me == 2 ? 4 : 2)); },
                    {"init_device_mesh failed on rank 2 of 4", "has 8 ranks, the world 4"});
  world_still_usable();
}

TEST_CASE_FIXTURE(four_ranks, "flatten") {
  auto m = dm::init_device_mesh<dp_tp>(world);
  const std::size_t before = comm_counter::live();
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    if (me == 0)
      (void)m.flatten<"x", "tp", "dp">();
    else
      (void)m.flatten<"x", "dp", "tp">();
    FAIL_CHECK("flatten did not throw");
  } catch (const dm::mesh_error& e) {
    message = e.what();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(message.rfind("devmesh: flatten", 0) == 0);
  CHECK(message.find("the ranks disagree") != std::string::npos);
  CHECK(message.find("rank 0 has") != std::string::npos);
  CHECK(s < 10.0);
  CHECK_EQ(comm_counter::live(), before);  // nothing was split
  if (me == 0) std::printf("rank 0 got, after %.3f s: %s\n", s, message.c_str());
  // The mesh is still usable afterwards.
  std::vector<int> v{1};
  m.all_reduce<"tp">(std::span(v), dm::op::sum);
  CHECK_EQ(v[0], 2);
  world_still_usable();
}

TEST_CASE_FIXTURE(four_ranks, "hook") {
  dm::device_mesh_options<dm::mpi::communicator> o;
  // Set on every rank (the hook is part of the consistency fingerprint); throws on rank 1
  // only, after its split of dim "tp".
  int calls = 0;
  o.per_dim["tp"].on_create = [me = me, &calls](MPI_Comm) {
    ++calls;
    if (me == 1) throw std::runtime_error("injected: the on_create hook of dim tp throws on rank 1");
  };
  // What ends the init, on every rank: the injected exception, as rank 1's error.
  expect_everywhere([&] { (void)dm::init_device_mesh<dp_tp>(world, o); },
                    {"init_device_mesh: creating the communicator of dim 'tp' failed on rank 1 of 4",
                     "rank 1: injected: the on_create hook of dim tp throws on rank 1"});
  CHECK_EQ(calls, 1);  // the hook ran (and threw on rank 1)
  world_still_usable();
}
}  // namespace reliability_faults_mpi_test
