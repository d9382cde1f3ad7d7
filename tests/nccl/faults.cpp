// tests/nccl/faults.cpp: fault injection through the test double (DEVMESH_FAKE_NCCL_FAIL*,
// set per ctest test with mpirun -x). Each scenario must end on EVERY rank with a
// dm::comm_error within a bound derived from the timeout, with every communicator aborted
// or destroyed (the double counts them; it also fails the process at exit on a leak).
//
//   faults <scenario> <expected text>
//   scenario: world      dm::nccl::world(MPI_COMM_WORLD) fails
//             split      world succeeds, world.split() fails
//             env        dm::nccl::world_from_env() fails (no host channel: timeouts only)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "common.hpp"

namespace dm = devmesh;
using namespace nccl_test;

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const std::string scenario = argc > 1 ? argv[1] : "";
  const std::string expected = argc > 2 ? argv[2] : "devmesh:";
  const auto opts = fast();  // 1.5 s timeout
  const auto start = std::chrono::steady_clock::now();
  std::string error;
  bool world_valid_after = true;
  try {
    if (scenario == "world") {
      auto w = dm::nccl::world(MPI_COMM_WORLD, opts);
      auto c = w.split(0, w.rank(), opts);  // not reached when the fault strikes
    } else if (scenario == "split") {
      auto w = dm::nccl::world(MPI_COMM_WORLD, opts);
      try {
        auto a = w.split(0, w.rank(), opts);                 // split #0
        auto b = w.split(w.rank() % 2, w.rank(), opts);      // split #1
      } catch (...) {
        world_valid_after = w.valid();
        throw;
      }
    } else if (scenario == "env") {
      const std::string rank = std::to_string(world_rank()), size = std::to_string(world_size());
      scoped_env r("RANK", rank.c_str()), n("WORLD_SIZE", size.c_str()), a("MASTER_ADDR", "127.0.0.1"),
          p("MASTER_PORT", "29600"), id("NCCL_COMM_ID", nullptr);
      auto w = dm::nccl::world_from_env(opts);
      auto c = w.split(0, w.rank(), opts);
    } else {
      std::fprintf(stderr, "faults: unknown scenario '%s'\n", scenario.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  } catch (const dm::comm_error& e) {
    error = e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Generous: it proves the timeout fires (no hang), not how fast a loaded machine is.
  const double bound = 3 * std::chrono::duration<double>(opts.timeout).count() + 60.0;
  bool ok = true;
  auto fail = [&](const std::string& why) {
    ok = false;
    std::fprintf(stderr, "rank %d: %s\n", world_rank(), why.c_str());
  };
  if (error.empty()) fail("no dm::comm_error was thrown");
  if (error.rfind("devmesh:", 0) != 0) fail("message does not start with devmesh: '" + error + "'");
  if (error.find(expected) == std::string::npos) fail("message lacks '" + expected + "': '" + error + "'");
  if (seconds > bound) fail("took " + std::to_string(seconds) + " s, bound " + std::to_string(bound) + " s");
  if (scenario == "split" && world_valid_after) fail("the parent communicator was not aborted");
  if (devmesh_fake_nccl_live_comms() != 0) fail(std::to_string(devmesh_fake_nccl_live_comms()) + " communicator(s) alive");
  if (devmesh_fake_cuda_live_allocs() != 0) fail("device allocations alive");
  if (world_rank() == 0 || !ok)
    std::printf("rank %d: %.2f s, aborted %d, destroyed %d: %s\n", world_rank(), seconds, devmesh_fake_nccl_aborted(),
                devmesh_fake_nccl_destroyed(), error.c_str());
  const bool all = all_true(ok);
  MPI_Finalize();
  return all ? 0 : 1;
}
