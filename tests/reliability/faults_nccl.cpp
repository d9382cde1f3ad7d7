// tests/reliability/faults_nccl.cpp: the NCCL test double's faults (DEVMESH_FAKE_NCCL_FAIL*,
// set per test with mpirun -x) striking inside init_device_mesh and flatten, not only in a
// bare world/split (tests/nccl/faults.cpp does those). On EVERY rank: a dm::comm_error
// starting "devmesh:" and naming the fault, within 3 x timeout + 60 s of the call; then,
// once the handles are gone, no communicator alive (the double counts them, and fails the
// process at exit on a leak), the pending ones aborted. Run on 4 ranks by bounded.sh.
//
//   faults_nccl --test-case=mesh <expected>     init_device_mesh<(dp=2, tp=2)>(nccl::world(...)):
//                                               the world (handed over) and the dp, tp splits
//   faults_nccl --test-case=flatten <expected>  the mesh succeeds; its transposed flatten
//                                               (split #2) fails
#include <chrono>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include <devmesh/devmesh.hpp>

#include "../mpi/mpi_doctest.hpp"
#include "../nccl/common.hpp"

namespace reliability_faults_nccl_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;
using namespace nccl_test;
using dp_tp = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 2>>;

namespace {

/// The fault strikes in `scenario`: init_device_mesh ("mesh") or the flatten after it.
void fault_in(const std::string& scenario) {
  const std::string expected = test::arg(0, "devmesh:");
  const auto opts = fast();  // non-blocking, 1.5 s timeout
  dm::device_mesh_options<dm::nccl::communicator> mesh_opts;
  mesh_opts.defaults = opts;
  std::string error;
  double seconds = 0;
  bool reached_flatten = false;
  try {
    if (scenario == "mesh") {
      const auto start = std::chrono::steady_clock::now();
      try {
        auto m = dm::init_device_mesh<dp_tp>(dm::nccl::world(MPI_COMM_WORLD, opts), mesh_opts);
      } catch (...) {
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        throw;
      }
    } else {
      auto m = dm::init_device_mesh<dp_tp>(dm::nccl::world(MPI_COMM_WORLD, opts), mesh_opts);
      reached_flatten = true;
      const auto start = std::chrono::steady_clock::now();
      try {
        auto f = m.flatten<"tp_dp", "tp", "dp">();
      } catch (...) {
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        throw;
      }
    }
  } catch (const dm::comm_error& e) {
    error = e.what();
  }
  // Every handle is gone here: the mesh, its state, the world it owned.
  // Generous: it proves the timeout fires (no hang), not how fast a loaded machine is.
  const double bound = 3 * std::chrono::duration<double>(opts.timeout).count() + 60.0;
  bool ok = true;
  auto expect = [&](bool holds, const std::string& why) {
    CHECK_MESSAGE(holds, why);
    ok = ok && holds;
  };
  expect(!error.empty(), "no dm::comm_error was thrown");
  expect(error.rfind("devmesh:", 0) == 0, "message does not start with devmesh: '" + error + "'");
  expect(error.find(expected) != std::string::npos, "message lacks '" + expected + "': '" + error + "'");
  expect(seconds <= bound, "took " + std::to_string(seconds) + " s, bound " + std::to_string(bound) + " s");
  if (scenario == "flatten") expect(reached_flatten, "the fault struck before flatten");
  expect(devmesh_fake_nccl_live_comms() == 0,
         std::to_string(devmesh_fake_nccl_live_comms()) + " communicator(s) alive");
  // The failing rank of an init error never got a communicator; the others must abort theirs.
  int aborted = devmesh_fake_nccl_aborted(), aborted_anywhere = 0;
  MPI_Allreduce(&aborted, &aborted_anywhere, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect(aborted_anywhere != 0, "no rank aborted a communicator");
  expect(devmesh_fake_cuda_live_allocs() == 0, "device allocations alive");
  if (world_rank() == 0 || !ok)
    std::printf("rank %d: %s: %.2f s (bound %.1f s), aborted %d, destroyed %d: %s\n", world_rank(), scenario.c_str(),
                seconds, bound, devmesh_fake_nccl_aborted(), devmesh_fake_nccl_destroyed(), error.c_str());
}

}  // namespace

TEST_CASE("mesh") { fault_in("mesh"); }
TEST_CASE("flatten") { fault_in("flatten"); }
}  // namespace reliability_faults_nccl_test
