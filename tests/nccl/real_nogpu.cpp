// tests/nccl/real_nogpu.cpp: the NCCL backend against the REAL libnccl and libcudart on a
// machine without a GPU (or driver). Every bootstrap must end in a dm::comm_error whose
// message says what failed, on every rank, promptly: no crash, no hang, nothing left over.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include <devmesh/devmesh.hpp>

namespace dm = devmesh;

int main(int argc, char** argv) {
  dm::mpi::environment env(argc, argv);
  auto mpi_world = dm::mpi::world();
  const int rank = mpi_world.rank();
  bool ok = true;
  auto expect_error = [&](const char* what, const std::string& needle, const std::function<void()>& f) {
    const auto start = std::chrono::steady_clock::now();
    std::string msg;
    try {
      f();
    } catch (const dm::comm_error& e) {
      msg = e.what();
    } catch (const std::exception& e) {
      msg = std::string("WRONG TYPE: ") + e.what();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool good = msg.rfind("devmesh:", 0) == 0 && msg.find(needle) != std::string::npos && s < 30;
    ok = ok && good;
    if (rank == 0 || !good)
      std::printf("rank %d: %s: %s (%.2f s): %s\n", rank, what, good ? "ok" : "FAILED", s,
                  msg.empty() ? "no exception" : msg.c_str());
  };
  dm::nccl::options o;
  o.timeout = std::chrono::seconds(10);
  // The GPU is chosen from OMPI_COMM_WORLD_LOCAL_RANK; cudaGetDeviceCount reports the
  // missing driver; every rank learns that every rank failed.
  expect_error("nccl::world(mpi::world())", "cudaGetDeviceCount failed", [&] { auto w = dm::nccl::world(mpi_world, o); });
  expect_error("nccl::world(mpi::world()) summary", "[device selection]", [&] { auto w = dm::nccl::world(mpi_world, o); });
  // Without MPI: torchrun/srun variables.
  const std::string r = std::to_string(rank), n = std::to_string(mpi_world.size());
  setenv("RANK", r.c_str(), 1);
  setenv("WORLD_SIZE", n.c_str(), 1);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", "29400", 1);
  expect_error("nccl::world_from_env()", "cudaGetDeviceCount failed", [&] { auto w = dm::nccl::world_from_env(o); });
  // Keeping the current device still needs the runtime (cudaGetDevice): a clean error too.
  dm::nccl::bootstrap_options b;
  b.device = dm::nccl::device_choice{dm::nccl::device_choice::current};
  expect_error("nccl::world(mpi, current device)", "devmesh:", [&] { auto w = dm::nccl::world(mpi_world, o, b); });
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, mpi_world.native());
  return all == 1 ? 0 : 1;
}
