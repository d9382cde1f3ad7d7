// dm::mpi::environment and object lifetimes around MPI_Init/MPI_Finalize: world() before
// init and after finalize throws; a nested environment neither initializes nor finalizes;
// communicators and device meshes that outlive the environment are destroyed safely.
// Checks after MPI_Finalize are local: each rank's exit code carries them.
#include <cstdio>
#include <optional>
#include <string>

#include <devmesh/devmesh.hpp>

namespace dm = devmesh;

static int failures = 0;
#define EXPECT(cond)                                                         \
  do {                                                                       \
    if (!(cond)) {                                                           \
      ++failures;                                                            \
      std::fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                        \
  } while (0)

static std::string world_error() {
  try {
    (void)dm::mpi::world();
  } catch (const dm::comm_error& e) {
    return e.what();
  }
  return {};
}

int main(int argc, char** argv) {
  EXPECT(world_error().find("MPI is not initialized") != std::string::npos);
  using line = dm::mesh<dm::dim<"all">>;
  std::optional<dm::mpi::communicator> survivor;
  std::optional<dm::device_mesh<line, dm::mpi::communicator>> mesh_survivor;
  {
    dm::mpi::environment env(argc, argv);
    EXPECT(env.initialized_here());
    EXPECT(env.thread_level() >= MPI_THREAD_SINGLE && env.thread_level() <= MPI_THREAD_MULTIPLE);
    {
      dm::mpi::environment nested;  // MPI is up: neither init nor finalize
      EXPECT(!nested.initialized_here());
    }
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    EXPECT(initialized && !finalized);
    // Errors are returned, not fatal.
    MPI_Errhandler h = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &h);
    EXPECT(h == MPI_ERRORS_RETURN);
    if (h != MPI_ERRHANDLER_NULL) MPI_Errhandler_free(&h);
    auto world = dm::mpi::world();
    EXPECT(!world.owns());
    survivor.emplace(world.split(0, world.rank()));  // owning, outlives MPI
    EXPECT(survivor->owns() && survivor->size() == world.size());
    // A mesh owning its world (a moved-in dup of MPI_COMM_WORLD), outliving MPI too.
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    mesh_survivor.emplace(dm::init_device_mesh<line>(dm::mpi::communicator::adopt(dup)));
    EXPECT(mesh_survivor->comm().size() == world.size());
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  EXPECT(finalized);
  EXPECT(world_error().find("MPI is finalized") != std::string::npos);
  mesh_survivor.reset();  // MPI_Comm_free skipped after MPI_Finalize: no crash
  survivor.reset();
  if (failures == 0) std::printf("mpi.environment: ok\n");
  return failures == 0 ? 0 : 1;
}
