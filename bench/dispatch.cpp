// bench/dispatch.cpp: what a named runtime call costs on the host, before MPI does any work.
// One process (MPI singleton), a device mesh of shape (1, 1, 1) over it:
//   comm_named     mesh.comm<"tp">().native()         vs   comm_handle: a stored MPI_Comm
//   all_reduce_*   mesh.all_reduce<"tp">(1 float)     vs   MPI_Allreduce on the same MPI_Comm
//     _named       the defaults: the flight recorder on, the watchdog off
//     _unrecorded  options.flight_record_entries = 0: named minus this is the recorder's cost
//     _watched     options.watchdog = 600 s: MPI_Iallreduce, polled (the watchdog's cost)
// A one-rank all-reduce does almost nothing, so the difference is devmesh's dispatch.
// Built as dispatch_nccl (BENCH_DISPATCH_NCCL, linked with the NCCL test double of
// tests/nccl/double), the same mesh over dm::nccl::world (blocking communicators), one float
// on the default stream: the watchdog's cost on a stream backend (an event recorded after each
// call, which the root's thread polls), against the raw ncclAllReduce:
//   nccl_all_reduce_named / _watched / _raw   the watchdog off / on (600 s) / ncclAllReduce
#include <benchmark/benchmark.h>

#include <devmesh/devmesh.hpp>
#if defined(BENCH_DISPATCH_NCCL)
#include <devmesh/nccl.hpp>
#include <devmesh/nccl/mpi_bootstrap.hpp>
#endif
#include <chrono>
#include <optional>
#include <span>

#include "alloc_counter.hpp"

namespace dm = devmesh;
using mesh3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;
using device_mesh = dm::device_mesh<mesh3, dm::mpi::communicator>;

namespace {

std::optional<dm::mpi::communicator> world;
std::optional<device_mesh> mesh, unrecorded, watched;
MPI_Comm handle = MPI_COMM_NULL;  // what hand-written code keeps: the dim's MPI_Comm

template <class F>
void run(benchmark::State& st, F f) {
  for (auto _ : st) f();
  const bench::alloc_scope heap;  // heap use of one call, outside the timed loop
  for (int i = 0; i < 100; ++i) f();
  const auto calls = static_cast<double>(heap.calls());
  st.counters["allocs_per_call"] = calls / 100;
}

void comm_named(benchmark::State& st) {
  run(st, [] {
    MPI_Comm c = mesh->comm<"tp">().native();
    benchmark::DoNotOptimize(c);
  });
}
void comm_handle(benchmark::State& st) {
  run(st, [] {
    MPI_Comm c = handle;
    benchmark::DoNotOptimize(c);
  });
}
float value = 1.0f;
void all_reduce_named(benchmark::State& st) {
  run(st, [] {
    mesh->all_reduce<"tp">(std::span(&value, 1), dm::op::sum);
    benchmark::ClobberMemory();
  });
}
void all_reduce_unrecorded(benchmark::State& st) {
  run(st, [] {
    unrecorded->all_reduce<"tp">(std::span(&value, 1), dm::op::sum);
    benchmark::ClobberMemory();
  });
}
void all_reduce_watched(benchmark::State& st) {
  run(st, [] {
    watched->all_reduce<"tp">(std::span(&value, 1), dm::op::sum);
    benchmark::ClobberMemory();
  });
}
void all_reduce_raw(benchmark::State& st) {
  run(st, [] {
    MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_FLOAT, MPI_SUM, handle);
    benchmark::ClobberMemory();
  });
}

#if defined(BENCH_DISPATCH_NCCL)
using nccl_mesh = dm::device_mesh<mesh3, dm::nccl::communicator>;
std::optional<dm::nccl::communicator> nccl_world;
std::optional<nccl_mesh> nccl_plain, nccl_watched;
ncclComm_t nccl_handle = nullptr;
float* nccl_value = nullptr;  // "device" memory (the double's: host memory)

void nccl_all_reduce_named(benchmark::State& st) {
  run(st, [] { nccl_plain->all_reduce<"tp">(std::span(nccl_value, 1), dm::op::sum, nullptr); });
  cudaStreamSynchronize(nullptr);
}
void nccl_all_reduce_watched(benchmark::State& st) {
  run(st, [] { nccl_watched->all_reduce<"tp">(std::span(nccl_value, 1), dm::op::sum, nullptr); });
  cudaStreamSynchronize(nullptr);
}
void nccl_all_reduce_raw(benchmark::State& st) {
  run(st, [] { ncclAllReduce(nccl_value, nccl_value, 1, ncclFloat32, ncclSum, nccl_handle, nullptr); });
  cudaStreamSynchronize(nullptr);
}
#endif

}  // namespace

BENCHMARK(comm_named);
BENCHMARK(comm_handle);
BENCHMARK(all_reduce_named);
BENCHMARK(all_reduce_unrecorded);
BENCHMARK(all_reduce_watched);
BENCHMARK(all_reduce_raw);
#if defined(BENCH_DISPATCH_NCCL)
BENCHMARK(nccl_all_reduce_named);
BENCHMARK(nccl_all_reduce_watched);
BENCHMARK(nccl_all_reduce_raw);
#endif

int main(int argc, char** argv) {
  dm::mpi::environment env(argc, argv);
  benchmark::Initialize(&argc, argv);
  world.emplace(dm::mpi::world());
  mesh.emplace(dm::init_device_mesh(*world, mesh3(1, 1, world->size())));
  handle = mesh->comm<"tp">().native();
  dm::device_mesh_options<dm::mpi::communicator> o;
  o.flight_record_entries = 0;
  unrecorded.emplace(dm::init_device_mesh(*world, mesh3(1, 1, world->size()), o));
  o.flight_record_entries = -1;
  o.watchdog = std::chrono::seconds(600);
  watched.emplace(dm::init_device_mesh(*world, mesh3(1, 1, world->size()), o));
#if defined(BENCH_DISPATCH_NCCL)
  dm::nccl::options blocking;
  blocking.blocking = true;  // no ncclInProgress to poll: the enqueue's own cost
  nccl_world.emplace(dm::nccl::world(*world, blocking));
  dm::device_mesh_options<dm::nccl::communicator> no;
  no.defaults.blocking = true;  // every dim's communicator too
  nccl_plain.emplace(dm::init_device_mesh(*nccl_world, mesh3(1, 1, world->size()), no));
  no.watchdog = std::chrono::seconds(600);
  nccl_watched.emplace(dm::init_device_mesh(*nccl_world, mesh3(1, 1, world->size()), no));
  nccl_handle = nccl_plain->comm<"tp">().native();
  cudaMalloc(reinterpret_cast<void**>(&nccl_value), sizeof(float));
#endif
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
#if defined(BENCH_DISPATCH_NCCL)
  cudaDeviceSynchronize();
  cudaFree(nccl_value);
  nccl_watched.reset();
  nccl_plain.reset();
  nccl_world.reset();
#endif
  watched.reset();
  unrecorded.reset();
  mesh.reset();
  return 0;
}
