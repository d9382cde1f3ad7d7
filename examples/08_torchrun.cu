// Example 8: a job launched by torchrun, whose processes learn their place from the
// variables the launcher sets, as in the DDP tutorial's elastic_ddp.py:
//
//   torchrun --nnodes=2 --nproc_per_node=8 --rdzv_endpoint=$MASTER_ADDR:29400 elastic_ddp.py
//   torch.cuda.set_device(int(os.environ["LOCAL_RANK"])); dist.init_process_group("nccl")
//
// torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT in every process.
// devmesh's NCCL backend starts from exactly these, with no MPI at all (not even MPI_Init):
//
//   auto world = dm::nccl::world_from_env();   // GPU = LOCAL_RANK, rendezvous at MASTER_ADDR
//   auto mesh_2d = dm::init_device_mesh<dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 2>>>(world);
//
//   torchrun --standalone --nproc_per_node=8 --no-python ./08_torchrun --backend nccl
//   srun --ntasks-per-node=8 env RANK=... (docs/nccl.md: srun without MPI)
//
// The CPU path (the MPI backend) cannot be launched that way. A process that no MPI launcher
// started is an MPI "singleton": MPI_Init succeeds with an MPI_COMM_WORLD of one process, and
// devmesh's MPI backend builds the mesh over MPI_COMM_WORLD. Joining singletons into one
// world afterwards is not something MPI does on its own. Verified here with Open MPI 4.1.4:
// MPI_Comm_join over a socket between two singletons fails with "Underlying runtime
// environment does not support join functionality" (it needs an ompi-server whose URI every
// process gets in OMPI_MCA_pmix_server_uri before MPI_Init; with one, the join returned but
// the joined processes then hung or died with SIGPIPE in 3 of 4 trials). So on the CPU path
// this example refuses a torchrun-style launch on every rank, with that explanation and exit
// code 1, and runs under an MPI launcher instead, where the launcher numbers the ranks and
// torchrun's variables, if set (e.g. exported from SLURM_PROCID), must agree with MPI's:
//
//   mpirun -np 8 ./08_torchrun          srun --mpi=pmix --ntasks=8 ./08_torchrun
//
// It prints how it was launched, each rank's RANK, LOCAL_RANK and place in the mesh (gathered
// over the world communicator: device memory on NCCL), and a sum over each dim. Everything it
// prints on rank 0 comes through the mesh's own collectives, since the NCCL path has no MPI.
#include "common.hpp"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace dm = devmesh;
using namespace dm::literals;

using mesh_2d_t = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 2>>;  // replicate = WORLD_SIZE / 2

/// An environment variable as an int, if set.
std::optional<int> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::atoi(v);
}
std::string env_str(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

/// What the launcher told this process, in torchrun's names (-1: not known).
struct launch {
  std::string how;
  int rank = -1, world_size = -1, local_rank = -1;
};

/// torchrun's variables, if it (or something like it) set them.
launch from_torchrun_variables() {
  launch l;
  if (env_int("RANK") && env_int("WORLD_SIZE")) {
    l.how = "torchrun-style variables: WORLD_SIZE=" + env_str("WORLD_SIZE") + ", MASTER_ADDR=" + env_str("MASTER_ADDR") +
            ", MASTER_PORT=" + env_str("MASTER_PORT");
    l.rank = *env_int("RANK");
    l.world_size = *env_int("WORLD_SIZE");
    l.local_rank = env_int("LOCAL_RANK").value_or(-1);
  }
  return l;
}

/// The MPI path: MPI's world, checked against torchrun's variables when they are set.
launch check_mpi_launch(launch l, const dm::mpi::communicator& world) {
  if (l.world_size >= 0 && world.size() == 1 && l.world_size != 1) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int len = 0;
    MPI_Get_library_version(version, &len);
    std::string library(version, static_cast<std::size_t>(len));
    library = library.substr(0, library.find_first_of(",\n"));
    throw std::runtime_error(
        "WORLD_SIZE=" + std::to_string(l.world_size) +
        " (torchrun-style variables) but MPI_COMM_WORLD has 1 process: no MPI launcher started this process, so MPI "
        "made it a singleton, and the MPI backend needs one MPI world, which only an MPI launcher makes (this MPI is " +
        library + "; examples/08_torchrun.cu says what joining singletons takes). Launch it with mpirun -np " +
        std::to_string(l.world_size) + " (or srun --mpi=pmix), or use --backend nccl (dm::nccl::world_from_env(), "
        "which needs only these variables).");
  }
  if (l.world_size < 0) {
    l.how = "an MPI launcher (no torchrun-style variables: RANK and WORLD_SIZE from MPI)";
    l.rank = world.rank();
    l.world_size = world.size();
    // The local rank as the launchers name it (mpirun, srun).
    l.local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK").value_or(env_int("SLURM_LOCALID").value_or(-1));
  } else if (l.rank != world.rank() || l.world_size != world.size()) {
    throw std::runtime_error("RANK=" + std::to_string(l.rank) + ", WORLD_SIZE=" + std::to_string(l.world_size) +
                             " disagree with MPI's rank " + std::to_string(world.rank()) + " of " +
                             std::to_string(world.size()));
  } else {
    l.how = "an MPI launcher, with " + l.how + " (they agree with MPI's)";
  }
  return l;
}

template <class Comm>
int run(Comm& world, const launch& how) {
  auto mesh_2d = dm::init_device_mesh<mesh_2d_t>(world);
  auto shard_mesh = mesh_2d["shard"_dim];
  auto replicate_mesh = mesh_2d["replicate"_dim];
  const auto& world_comm = mesh_2d.world();
  examples::stream<Comm> s;
  const int me = mesh_2d.rank(), n = mesh_2d.size();

  // Every rank's facts, gathered over the world communicator: what the launcher said and
  // where the mesh put it.
  const auto c = *mesh_2d.coordinate();
  constexpr int fields = 4;
  examples::buffer<int, Comm> mine(std::vector<int>{how.rank, how.local_rank, c[0], c[1]});
  examples::buffer<int, Comm> all(static_cast<std::size_t>(fields * n));
  world_comm.all_gather(mine.cspan().data(), all.data(), fields, s.get());
  // A collective on each dim: the sum of world ranks over shard, then over replicate.
  examples::buffer<int, Comm> sum(std::vector<int>{me});
  shard_mesh.all_reduce(sum.span(), dm::op::sum, s);
  replicate_mesh.all_reduce(sum.span(), dm::op::sum, s);
  s.sync();
  const std::vector<int> facts = all.to_host();
  const int total = sum.to_host()[0];

  // Every rank checks; all ranks learn whether every rank passed (min over the world).
  bool ok = total == n * (n - 1) / 2;
  for (int r = 0; r < n; ++r) ok = ok && facts[static_cast<std::size_t>(fields * r)] == r;  // RANK order = mesh order
  examples::buffer<int, Comm> all_ok(std::vector<int>{ok ? 1 : 0});
  world_comm.all_reduce(all_ok.cspan().data(), all_ok.data(), 1, dm::op::min, s.get());
  s.sync();
  if (all_ok.to_host()[0] != 1)
    throw std::runtime_error("check failed: the sum over shard then replicate is not the sum of all ranks, or RANK "
                             "does not follow the world's order (on " + std::string(ok ? "another rank" : "this rank") + ")");

  if (me == 0) {
    std::cout << "launched by " << how.how << "\n"
              << "mesh_2d = " << mesh_2d << "\n\n"
              << dm::rank_nested(mesh_2d) << "\n"
              << dm::rank_grid(mesh_2d) << "\n"
              << "| RANK | LOCAL_RANK | replicate | shard | shard group | replicate group |\n"
              << "| --- | --- | --- | --- | --- | --- |\n";
    for (int r = 0; r < n; ++r) {
      const int* f = &facts[static_cast<std::size_t>(fields * r)];
      std::cout << "| " << f[0] << " | " << (f[1] < 0 ? std::string("?") : std::to_string(f[1])) << " | " << f[2]
                << " | " << f[3] << " | " << examples::list(shard_mesh.layout().group(r)) << " | "
                << examples::list(replicate_mesh.layout().group(r)) << " |\n";
    }
    std::cout << "\nOK: the sum of the ranks over shard, then over replicate, is " << total << " on every rank (0 + ... + "
              << n - 1 << ")\n";
  }
  return 0;
}

int main(int argc, char** argv) {
  launch how = from_torchrun_variables();
  try {
    if (examples::chosen_backend(argc, argv) == examples::backend::nccl) {
#if defined(EXAMPLES_WITH_NCCL)
      auto world = dm::nccl::world_from_env();  // RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT
      return run(world, how);
#else
      throw std::runtime_error("this build has no NCCL backend: build the example with nvcc and link devmesh::nccl");
#endif
    }
    dm::mpi::environment env(argc, argv);
    auto world = dm::mpi::world();
    how = check_mpi_launch(how, world);
    return run(world, how);
  } catch (const std::exception& e) {
    const std::string line = "rank " + (how.rank >= 0 ? std::to_string(how.rank) : std::string("?")) +
                             ": error: " + e.what() + "\n";
    std::fputs(line.c_str(), stderr);  // one write: lines of different ranks do not interleave
    return 1;
  }
}
