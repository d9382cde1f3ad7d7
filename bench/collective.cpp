// bench/collective.cpp: devmesh's typed collectives vs the raw backend call on the same
// communicator, on every dim of a (2,2,2) mesh, in the style of nccl-tests.
//
// For each (op, dim, size): the devmesh call (mesh.all_reduce<"tp">(span, op::sum), ...) and
// the raw call (MPI_Allreduce(..., mesh.comm<"tp">().native()), or ncclAllReduce with
// -DBENCH_NCCL) alternate, ABBA, over --reps repetitions; each repetition times `iters`
// back-to-back calls after a barrier and keeps the slowest rank's mean. Reported: medians,
// algbw = size / time, busbw as nccl-tests (all_reduce x 2(n-1)/n, all_gather and
// reduce_scatter x (n-1)/n, broadcast x 1), and the devmesh/raw time ratio.
// Sizes follow nccl-tests: all_gather's is the gathered (output) buffer, reduce_scatter's the
// input buffer. Output: a table on stdout and, with --json FILE, one JSON row per line.
// --watchdog S: the mesh's watchdog on with a bound of S seconds (options.watchdog), so the
// devmesh column is the watched call (MPI: non-blocking, polled, through devmesh's staging
// copies) against the raw blocking one. --op NAME: one collective only; --dim D: one dim only
// (dp, cp, tp, or all: the three flattened, one group of 8 ranks).
// usage: mpirun -np 8 collective [--max-bytes B] [--reps R] [--json FILE] [--watchdog S] [--op NAME] [--dim D]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <devmesh/devmesh.hpp>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#if defined(BENCH_NCCL)
#include <cuda_runtime.h>
#endif

namespace dm = devmesh;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

namespace {

enum class coll { all_reduce, all_gather, reduce_scatter, broadcast };
const char* coll_name(coll c) {
  switch (c) {
    case coll::all_reduce: return "all_reduce";
    case coll::all_gather: return "all_gather";
    case coll::reduce_scatter: return "reduce_scatter";
    case coll::broadcast: return "broadcast";
  }
  return "?";
}
double bus_factor(coll c, int n) {
  switch (c) {
    case coll::all_reduce: return 2.0 * (n - 1) / n;
    case coll::all_gather:
    case coll::reduce_scatter: return static_cast<double>(n - 1) / n;
    case coll::broadcast: return 1.0;
  }
  return 1.0;
}

#if defined(BENCH_NCCL)
// ---- NCCL: device buffers, raw = nccl* on comm.native(), synchronised on the stream --------
using comm_type = dm::nccl::communicator;
struct buffers {
  float* send = nullptr;
  float* recv = nullptr;
  std::size_t n = 0;
  explicit buffers(std::size_t count) : n(count) {
    cudaMalloc(&send, count * sizeof(float));
    cudaMalloc(&recv, count * sizeof(float));
    cudaMemset(send, 0, count * sizeof(float));
    cudaMemset(recv, 0, count * sizeof(float));
  }
  ~buffers() {
    cudaFree(send);
    cudaFree(recv);
  }
};
#else
// ---- MPI: host buffers, raw = MPI_* on comm.native() --------------------------------------
using comm_type = dm::mpi::communicator;
struct buffers {
  std::vector<float> s, r;
  float* send;
  float* recv;
  explicit buffers(std::size_t count) : s(count, 1.0f), r(count, 1.0f), send(s.data()), recv(r.data()) {}
};
#endif

/// One call of collective c along dim D, devmesh's way (raw = false) or the backend's.
/// `count` is the nccl-tests element count (see the file comment).
template <dm::fixed_string D, class Mesh>
void call(const Mesh& mesh, coll c, bool raw, buffers& b, std::size_t count) {
  const auto& comm = mesh.template comm<D>();
  const std::size_t n = static_cast<std::size_t>(comm.size());
  const std::size_t block = count / n;
  if (!raw) {
    switch (c) {
      case coll::all_reduce: mesh.template all_reduce<D>(std::span(b.recv, count), dm::op::sum); break;
      case coll::all_gather:
        mesh.template all_gather<D>(std::span<const float>(b.send, block), std::span(b.recv, count));
        break;
      case coll::reduce_scatter:
        mesh.template reduce_scatter<D>(std::span<const float>(b.send, count), std::span(b.recv, block), dm::op::sum);
        break;
      case coll::broadcast: mesh.template broadcast<D>(std::span(b.recv, count), 0); break;
    }
    return;
  }
#if defined(BENCH_NCCL)
  const ncclComm_t h = comm.native();
  const cudaStream_t s = nullptr;  // the stream devmesh's calls default to
  switch (c) {
    case coll::all_reduce: ncclAllReduce(b.recv, b.recv, count, ncclFloat, ncclSum, h, s); break;
    case coll::all_gather: ncclAllGather(b.send, b.recv, block, ncclFloat, h, s); break;
    case coll::reduce_scatter: ncclReduceScatter(b.send, b.recv, block, ncclFloat, ncclSum, h, s); break;
    case coll::broadcast: ncclBroadcast(b.recv, b.recv, count, ncclFloat, 0, h, s); break;
  }
#else
  const MPI_Comm h = comm.native();
  const int cnt = static_cast<int>(count), blk = static_cast<int>(block);
  switch (c) {
    case coll::all_reduce: MPI_Allreduce(MPI_IN_PLACE, b.recv, cnt, MPI_FLOAT, MPI_SUM, h); break;
    case coll::all_gather: MPI_Allgather(b.send, blk, MPI_FLOAT, b.recv, blk, MPI_FLOAT, h); break;
    case coll::reduce_scatter: MPI_Reduce_scatter_block(b.send, b.recv, blk, MPI_FLOAT, MPI_SUM, h); break;
    case coll::broadcast: MPI_Bcast(b.recv, cnt, MPI_FLOAT, 0, h); break;
  }
#endif
}

void synchronize() {
#if defined(BENCH_NCCL)
  cudaDeviceSynchronize();
#endif
}

/// Seconds per call, slowest rank, for `iters` back-to-back calls.
template <dm::fixed_string D, class Mesh>
double time_calls(const Mesh& mesh, coll c, bool raw, buffers& b, std::size_t count, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) call<D>(mesh, c, raw, b, count);
  synchronize();
  const double local = (MPI_Wtime() - t0) / iters;
  double slowest = 0;
  MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

struct options {
  std::size_t max_bytes = std::size_t{64} << 20;
  int reps = 7;
  const char* json = nullptr;
  double watchdog_s = 0;
  std::string op, dim;
};

template <dm::fixed_string D, class Mesh>
void run_dim(const Mesh& mesh, const options& o, std::FILE* json, int rank) {
  const coll colls[] = {coll::all_reduce, coll::all_gather, coll::reduce_scatter, coll::broadcast};
  const int n = mesh.template size<D>();
  const std::string dim(D.view());
  constexpr std::size_t sizes[] = {8, 64, 1 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20};
  if (!o.dim.empty() && o.dim != dim) return;
  for (coll c : colls) {
    if (!o.op.empty() && o.op != coll_name(c)) continue;
    for (const std::size_t bytes : sizes) {
      if (bytes > o.max_bytes) break;
      std::size_t count = bytes / sizeof(float);
      count = std::max<std::size_t>(count / n * n, static_cast<std::size_t>(n));  // divisible by n
      const std::size_t size = count * sizeof(float);
      buffers b(count);
      // About 20 ms of calls per timing, at least 2 and at most 200 (estimated from one warm-up).
      const double one = time_calls<D>(mesh, c, true, b, count, 1);
      int iters = static_cast<int>(std::clamp(0.02 / std::max(one, 1e-7), 2.0, 200.0));
      MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
      std::vector<double> t_dm, t_raw;
      for (int rep = 0; rep < o.reps; ++rep) {
        const bool dm_first = rep % 2 == 0;  // ABBA: neither side always goes first
        for (int k = 0; k < 2; ++k) {
          const bool raw = (k == 0) != dm_first;
          (raw ? t_raw : t_dm).push_back(time_calls<D>(mesh, c, raw, b, count, iters));
        }
      }
      const double md = median(t_dm), mr = median(t_raw);
      if (rank == 0) {
        const double algbw = size / mr / 1e9, busbw = algbw * bus_factor(c, n);
        std::printf("%-15s %-3s %12zu %12zu %6s %11.2f %11.2f %8.3f %8.3f %7.3f\n", coll_name(c), dim.c_str(), size, count,
                    "float", mr * 1e6, md * 1e6, algbw, busbw, md / mr);
        std::fflush(stdout);
        if (json)
          std::fprintf(json,
                       "{\"op\": \"%s\", \"dim\": \"%s\", \"group_size\": %d, \"bytes\": %zu, \"count\": %zu, "
                       "\"type\": \"float\", \"raw_us\": %.6g, \"devmesh_us\": %.6g, \"algbw_GBps\": %.6g, "
                       "\"busbw_GBps\": %.6g, \"ratio\": %.6g, \"reps\": %d, \"iters\": %d}\n",
                       coll_name(c), dim.c_str(), n, size, count, mr * 1e6, md * 1e6, algbw, busbw, md / mr, o.reps, iters);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--max-bytes") == 0) o.max_bytes = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--reps") == 0) o.reps = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--json") == 0) o.json = argv[i + 1];
    if (std::strcmp(argv[i], "--watchdog") == 0) o.watchdog_s = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--op") == 0) o.op = argv[i + 1];
    if (std::strcmp(argv[i], "--dim") == 0) o.dim = argv[i + 1];
  }
  dm::mpi::environment env(argc, argv);
  const auto mpi_world = dm::mpi::world();
  if (mpi_world.size() != 8) {
    if (mpi_world.rank() == 0) std::fprintf(stderr, "collective: run with mpirun -np 8\n");
    return 1;
  }
#if defined(BENCH_NCCL)
  auto world = dm::nccl::world(mpi_world);
#else
  const auto& world = mpi_world;
#endif
  dm::device_mesh_options<std::remove_cvref_t<decltype(world)>> mesh_options;
  mesh_options.watchdog = std::chrono::milliseconds(static_cast<long long>(o.watchdog_s * 1000));
  const auto mesh = dm::init_device_mesh<mesh3d>(world, mesh_options);
  const int rank = mpi_world.rank();
  std::FILE* json = rank == 0 && o.json ? std::fopen(o.json, "w") : nullptr;
  if (rank == 0) {
    std::printf("# devmesh %s collectives on mesh (dp=2, cp=2, tp=2), 8 ranks; medians of %d reps; watchdog %s\n",
                comm_type::backend_name(), o.reps, o.watchdog_s > 0 ? "on" : "off");
    std::printf("%-15s %-3s %12s %12s %6s %11s %11s %8s %8s %7s\n", "# op", "dim", "size(B)", "count", "type",
                "raw(us)", "devmesh(us)", "algbw", "busbw", "dm/raw");
    std::printf("%-15s %-3s %12s %12s %6s %11s %11s %8s %8s %7s\n", "#", "", "", "(elements)", "", "", "", "(GB/s)",
                "(GB/s)", "");
  }
  run_dim<"dp">(mesh, o, json, rank);
  run_dim<"cp">(mesh, o, json, rank);
  run_dim<"tp">(mesh, o, json, rank);
  if (o.dim == "all") run_dim<"all">(mesh.template flatten<"all">(), o, json, rank);  // one group of 8 ranks
  if (json) std::fclose(json);
  return 0;
}
