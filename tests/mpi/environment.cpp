// dm::mpi::environment and object lifetimes around MPI_Init/MPI_Finalize: world() before
// init and after finalize throws; a nested environment neither initializes nor finalizes;
// communicators and device meshes that outlive the environment are destroyed safely; an
// environment after MPI_Finalize throws instead of letting MPI abort the job.
// The test case initializes and finalizes MPI itself (TEST_CASES_OWN_MPI): checks after
// MPI_Finalize are local, each rank's exit code carries them.
#include <optional>
#include <string>

#include <devmesh/devmesh.hpp>

#include "mpi_doctest.hpp"

namespace dm = devmesh;

TEST_CASES_OWN_MPI();

static std::string world_error() {
  try {
    (void)dm::mpi::world();
  } catch (const dm::comm_error& e) {
    return e.what();
  }
  return {};
}

TEST_CASE("world() around an environment; nested environments; objects that outlive MPI") {
  int was_initialized = 0;
  MPI_Initialized(&was_initialized);
  REQUIRE_MESSAGE(!was_initialized, "MPI is up already: run one test case per process (--test-case)");
  CHECK(world_error().find("MPI is not initialized") != std::string::npos);
  using line = dm::mesh<dm::dim<"all">>;
  std::optional<dm::mpi::communicator> survivor;
  std::optional<dm::device_mesh<line, dm::mpi::communicator>> mesh_survivor;
  {
    dm::mpi::environment env;
    CHECK(env.initialized_here());
    CHECK((env.thread_level() >= MPI_THREAD_SINGLE && env.thread_level() <= MPI_THREAD_MULTIPLE));
    {
      dm::mpi::environment nested;  // MPI is up: neither init nor finalize
      CHECK(!nested.initialized_here());
    }
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    CHECK((initialized && !finalized));
    // Errors are returned, not fatal.
    MPI_Errhandler h = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &h);
    CHECK(h == MPI_ERRORS_RETURN);
    if (h != MPI_ERRHANDLER_NULL) MPI_Errhandler_free(&h);
    auto world = dm::mpi::world();
    CHECK(!world.owns());
    survivor.emplace(world.split(0, world.rank()));  // owning, outlives MPI
    CHECK((survivor->owns() && survivor->size() == world.size()));
    // A mesh owning its world (a moved-in dup of MPI_COMM_WORLD), outliving MPI too.
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    mesh_survivor.emplace(dm::init_device_mesh<line>(dm::mpi::communicator::adopt(dup)));
    CHECK(mesh_survivor->comm().size() == world.size());
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  CHECK(finalized);
  CHECK(world_error().find("MPI is finalized") != std::string::npos);
  mesh_survivor.reset();  // MPI_Comm_free skipped after MPI_Finalize: no crash
  survivor.reset();
  // A second environment: MPI cannot be initialized again, and MPI would abort the job if
  // asked anything but MPI_Finalized now. Both constructors throw.
  const std::string again = "devmesh: mpi::environment: MPI was already finalized; MPI cannot be initialized twice";
  CHECK_THROWS_WITH_AS(dm::mpi::environment(), doctest::Contains(again.c_str()), dm::comm_error);
  int argc = 1;
  char name[] = "environment";
  char* args[] = {name, nullptr};
  char** argv = args;
  CHECK_THROWS_WITH_AS(dm::mpi::environment(argc, argv), doctest::Contains(again.c_str()), dm::comm_error);
}
