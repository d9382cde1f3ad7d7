// tests/reliability/watchdog_death.cpp: a rank that dies mid-job, under a launcher that keeps
// the others alive (mpirun --enable-recovery), with the watchdog on: world rank 3 exits after
// init; the three other ranks of its tp group (0-3) throw comm_error naming rank 3 within the
// bound, the ranks of the other tp group (4-7) complete their all_reduce. The survivors
// agree on the outcome over a communicator of their own (MPI_Comm_create_group: the dead
// rank takes no part) and leave with _exit: MPI cannot finalize with a dead peer.
// Prints "watchdog_death: 7 of 7 survivors passed" (ctest's pass condition).
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <unistd.h>

#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using dp_tp = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

namespace {
/// This survivor's checks: true when its outcome is the one expected.
bool survivor_passes(const dm::device_mesh<dp_tp, dm::mpi::communicator>& mesh, int me) {
  std::vector<float> v(4, 1.0f);
  std::string message;
  const auto start = std::chrono::steady_clock::now();
  try {
    mesh.all_reduce<"tp">(v, dm::op::sum);
  } catch (const dm::comm_error& e) {
    message = e.what();
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("rank %d after %.1f s: %s\n", me, waited, message.empty() ? "completed" : message.c_str());
  if (me >= 4) return message.empty() && v[0] == 4.0f;
  return message.find("all_reduce on dim 'tp'") != std::string::npos &&
         message.find("world rank 3 of its group (world ranks 0-3) never arrived") != std::string::npos &&
         waited < 3 + 60;
}
}  // namespace

int main(int argc, char** argv) {
  dm::mpi::environment env(argc, argv);
  auto world = dm::mpi::world();
  if (world.size() != 8) {
    std::printf("watchdog_death: run on 8 ranks\n");
    return 1;
  }
  const int me = world.rank();
  dm::device_mesh_options<dm::mpi::communicator> o;
  o.watchdog = std::chrono::seconds(3);
  const auto mesh = dm::init_device_mesh<dp_tp>(world, o);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 3) _exit(0);  // dies: no finalize, no goodbye
  const int passed = survivor_passes(mesh, me) ? 1 : 0;
  MPI_Group all, alive;
  MPI_Comm_group(MPI_COMM_WORLD, &all);
  const int dead[] = {3};
  MPI_Group_excl(all, 1, dead, &alive);
  MPI_Comm survivors = MPI_COMM_NULL;
  MPI_Comm_create_group(MPI_COMM_WORLD, alive, 7, &survivors);
  int total = 0;
  MPI_Allreduce(&passed, &total, 1, MPI_INT, MPI_SUM, survivors);
  if (me == 0) std::printf("watchdog_death: %d of 7 survivors passed\n", total);
  std::fflush(stdout);
  _exit(total == 7 ? 0 : 1);
}
