// tests/contract/contract_deadline.cpp (issue 9: "nothing hangs"): a rank that skips or fails
// a collective step devmesh does on its own behalf; run on 4 ranks with DEVMESH_TIMEOUT set
// (CMake: mpirun -x DEVMESH_TIMEOUT=3, or 2.5). The waiting ranks must throw mesh_error
// ("devmesh: ", the step's name, "timed out"); then every rank, the odd one included, meets
// at MPI_Barrier(MPI_COMM_WORLD) and exits 0 through dm::mpi::environment (MPI_Finalize).
// No wall-clock bound is asserted (the machine is shared): ctest's TIMEOUT is the backstop.
//
//   init            rank 3 skips init_device_mesh: ranks 0-2 throw (init_device_mesh, timed out)
//   flatten         rank 3 skips an eager flatten: ranks 0-2 throw (flatten, timed out)
//   unflatten       rank 3 skips an eager unflatten: ranks 0-2 throw (unflatten, timed out)
//   smaller_flatten a mesh of ranks 0-1 of 4; only members call flatten (guarded by
//                   is_member()): ranks 0-1 throw (flatten, timed out), saying that every
//                   world rank must call flatten, members of the mesh or not
//   world_mismatch  rank 3 passes an adopted MPI_Comm_dup(MPI_COMM_WORLD) to init_device_mesh,
//                   the others MPI_COMM_WORLD: every rank throws (init_device_mesh)
//   hook            the on_create hook of dim tp throws on rank 2, which catches the exception
//                   and carries on: every rank gets an exception from init_device_mesh, the
//                   others a mesh_error naming rank 2
//   hook_two        the hooks of dim dp on rank 1 and of dim tp on rank 2 throw (the ranks
//                   agree on every dim's outcome in one step): every rank throws mesh_error
//                   naming the first dim that failed (dp) and rank 1
//   lazy            a lazy mesh; rank 3 skips the first use of dim dp: ranks 0-2 throw
//                   (timed out)
//   from_comms      rank 3 skips from_comms: ranks 0-2 throw (from_comms, timed out)
#include <chrono>
#include <cstdio>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"

namespace contract_deadline_test {  // one per file: a unity TU holds several files (devmesh_test_program)

using C = dm::mpi::communicator;
using m2 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;

namespace {

int me = 0;

/// f on the waiting ranks must throw mesh_error with every needle; reports the time taken.
template <class F>
void expect_timeout(const std::string& what, F&& f, std::initializer_list<std::string> needles) {
  const auto start = std::chrono::steady_clock::now();
  const auto t = contract::catch_all(f);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  contract::expect_mesh_error(t, needles, __FILE__, __LINE__, what);
  std::printf("[rank %d] %s: after %.2f s: %s: %s\n", me, what.c_str(), s, t.any ? t.type.c_str() : "no exception",
              t.what.c_str());
  std::fflush(stdout);
}

/// A scenario's frame: 4 ranks that start together; at the end, also when the test case
/// throws, the rendezvous: every rank, the odd one included, meets at MPI_Barrier(MPI_COMM_WORLD)
/// and ends normally, then frees what other ranks may have used until then.
struct rendezvous {
  C world = dm::mpi::world();
  std::vector<MPI_Comm> keep;  // communicators that must outlive the rendezvous
  std::optional<C> adopted;
  rendezvous() {
    me = world.rank();
    contract::require_ranks(4);
    const char* timeout = std::getenv("DEVMESH_TIMEOUT");
    if (me == 0) std::printf("DEVMESH_TIMEOUT=%s\n", timeout ? timeout : "(unset)");
    MPI_Barrier(MPI_COMM_WORLD);  // every rank starts the scenario together
  }
  rendezvous(const rendezvous&) = delete;
  rendezvous& operator=(const rendezvous&) = delete;
  ~rendezvous() {
    MPI_Barrier(MPI_COMM_WORLD);
    for (MPI_Comm& c : keep) MPI_Comm_free(&c);
  }
};

/// flatten and unflatten: rank 3 skips the eager step.
void skipped_by_rank_3(const C& world, const std::string& scenario) {
  auto mesh = dm::init_device_mesh(world, m2(2, 2));
  MPI_Barrier(MPI_COMM_WORLD);
  if (me != 3) {
    if (scenario == "flatten")
      expect_timeout("flatten without rank 3", [&] { (void)mesh.flatten<"all">(); },
                     {"devmesh: ", "flatten", "timed out"});
    else
      expect_timeout("unflatten without rank 3",
                     [&] { (void)mesh.unflatten<"dp", dm::dim<"d0", 1>, dm::dim<"d1", 2>>(); },
                     {"devmesh: ", "unflatten", "timed out"});
  }
}

}  // namespace

TEST_CASE_FIXTURE(rendezvous, "init") {
  if (me != 3) expect_timeout("init_device_mesh without rank 3", [&] { (void)dm::init_device_mesh(world, m2(2, 2)); },
                              {"devmesh: ", "init_device_mesh", "timed out"});
}

TEST_CASE_FIXTURE(rendezvous, "smaller_flatten") {
  auto mesh = dm::init_device_mesh(world, m2(1, 2));  // world ranks 0-1 of 4
  CHECK_MESSAGE(mesh.is_member() == (me < 2), "is_member() is wrong");
  MPI_Barrier(MPI_COMM_WORLD);
  if (mesh.is_member())
    expect_timeout("flatten by the members only", [&] { (void)mesh.flatten<"all">(); },
                   {"devmesh: ", "flatten", "timed out",
                    "flatten is collective over every world rank (4), members of this mesh of 2 ranks or not: every "
                    "world rank must call it"});
}

TEST_CASE_FIXTURE(rendezvous, "world_mismatch") {
  // MPI_Comm_dup is collective: every rank makes one; only rank 3 passes it. Each keeps
  // its dup until after the rendezvous (rank 3's pending messages may refer to it).
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  if (me == 3) {
    adopted.emplace(C::adopt(dup));  // freed after the rendezvous
    expect_timeout("init_device_mesh over a dup of the world (the others: the world)",
                   [&] { (void)dm::init_device_mesh(*adopted, m2(2, 2)); }, {"devmesh: ", "init_device_mesh"});
  } else {
    keep.push_back(dup);
    expect_timeout("init_device_mesh over the world (rank 3: a dup of it)",
                   [&] { (void)dm::init_device_mesh(world, m2(2, 2)); }, {"devmesh: ", "init_device_mesh"});
  }
}

TEST_CASE_FIXTURE(rendezvous, "hook") {
  dm::device_mesh_options<C> o;
  // Set on every rank (the hook enters the fingerprint); throws on rank 2 only, after
  // its split of dim tp.
  o.per_dim["tp"].on_create = [](MPI_Comm) {
    if (test::world_rank() == 2) throw std::runtime_error("injected: on_create of dim tp throws on rank 2");
  };
  const auto t = contract::catch_all([&] { (void)dm::init_device_mesh(world, m2(2, 2), o); });
  if (me == 2) {
    CHECK_MESSAGE(t.any, "rank 2: init_device_mesh did not throw");
  } else {
    contract::expect_mesh_error(t, {"devmesh: ", "init_device_mesh", "rank 2"}, __FILE__, __LINE__,
                                "init_device_mesh with rank 2's hook throwing");
  }
  std::printf("[rank %d] hook: %s: %s\n", me, t.any ? t.type.c_str() : "no exception", t.what.c_str());
}

TEST_CASE_FIXTURE(rendezvous, "hook_two") {
  dm::device_mesh_options<C> o;
  o.per_dim["dp"].on_create = [](MPI_Comm) {
    if (test::world_rank() == 1) throw std::runtime_error("injected: on_create of dim dp throws on rank 1");
  };
  o.per_dim["tp"].on_create = [](MPI_Comm) {
    if (test::world_rank() == 2) throw std::runtime_error("injected: on_create of dim tp throws on rank 2");
  };
  const auto t = contract::catch_all([&] { (void)dm::init_device_mesh(world, m2(2, 2), o); });
  contract::expect_mesh_error(t,
                              {"devmesh: init_device_mesh: creating the communicator of dim 'dp' failed on rank 1 of 4",
                               "injected: on_create of dim dp throws on rank 1"},
                              __FILE__, __LINE__, "init_device_mesh with two ranks' hooks throwing");
  std::printf("[rank %d] hook_two: %s: %s\n", me, t.any ? t.type.c_str() : "no exception", t.what.c_str());
}

TEST_CASE_FIXTURE(rendezvous, "lazy") {
  dm::device_mesh_options<C> o;
  o.lazy = true;
  auto mesh = dm::init_device_mesh(world, m2(2, 2), o);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me != 3)
    expect_timeout("lazy first use of dp without rank 3", [&] { (void)mesh.comm<"dp">(); }, {"devmesh: ", "timed out"});
}

TEST_CASE_FIXTURE(rendezvous, "from_comms") {
  MPI_Comm dp = MPI_COMM_NULL, tp = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, me / 2, &dp);
  MPI_Comm_split(MPI_COMM_WORLD, me / 2, me % 2, &tp);
  keep.push_back(dp);
  keep.push_back(tp);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me != 3)
    expect_timeout("from_comms without rank 3",
                   [&] { (void)dm::from_comms(world, {C::borrow(dp), C::borrow(tp)}, m2(2, 2)); },
                   {"devmesh: ", "from_comms", "timed out"});
}

TEST_CASE_FIXTURE(rendezvous, "flatten") { skipped_by_rank_3(world, "flatten"); }
TEST_CASE_FIXTURE(rendezvous, "unflatten") { skipped_by_rank_3(world, "unflatten"); }
}  // namespace contract_deadline_test
