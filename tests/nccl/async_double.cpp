// tests/nccl/async_double.cpp: the NCCL test double is asynchronous, as a GPU (double/
// fake_streams.h), under mpirun (2 ranks). Checks the model the watchdog's tests rely on:
// work on a stream runs in stream order and completes only when its peers enqueue theirs;
// queries and events see it pending, then done; ncclCommAbort from another thread ends a
// pending wait; nothing is left behind.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "common.hpp"
#include "../mpi/mpi_doctest.hpp"

namespace nccl_async_double_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;
using namespace nccl_test;
using namespace std::chrono_literals;

namespace {
struct stream {
  cudaStream_t s = nullptr;
  stream() { REQUIRE(cudaStreamCreate(&s) == cudaSuccess); }
  ~stream() { cudaStreamDestroy(s); }
};
double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

TEST_CASE("stream order: a copy in, a collective, a copy out; pending until the peer enqueues") {
  auto w = dm::nccl::world(MPI_COMM_WORLD, fast());
  stream st;
  const int r = w.rank();
  std::vector<int> in{r + 1, 10}, dev(2, 0), out(2, -1);
  cudaEvent_t done = nullptr;
  REQUIRE(cudaEventCreateWithFlags(&done, cudaEventDisableTiming) == cudaSuccess);
  // Rank 1 enqueues only after rank 0 saw its own work pending.
  if (r == 1) MPI_Recv(nullptr, 0, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  REQUIRE(cudaMemcpyAsync(dev.data(), in.data(), 2 * sizeof(int), cudaMemcpyHostToDevice, st.s) == cudaSuccess);
  in.assign(2, -7);  // the copy took the source when it returned (pageable memory)
  w.all_reduce(dev.data(), dev.data(), 2, dm::op::sum, st.s);
  REQUIRE(cudaMemcpyAsync(out.data(), dev.data(), 2 * sizeof(int), cudaMemcpyDeviceToDevice, st.s) == cudaSuccess);
  REQUIRE(cudaEventRecord(done, st.s) == cudaSuccess);
  if (r == 0) {
    std::this_thread::sleep_for(50ms);
    CHECK(cudaStreamQuery(st.s) == cudaErrorNotReady);  // rank 1 has not enqueued
    CHECK(cudaEventQuery(done) == cudaErrorNotReady);
    CHECK(devmesh_fake_cuda_pending(st.s) == 2);  // the collective and the copy out (the copy in is done)
    CHECK(out[0] == -1);  // the copy out waits behind the collective
    MPI_Send(nullptr, 0, MPI_INT, 1, 5, MPI_COMM_WORLD);
  }
  REQUIRE(cudaEventSynchronize(done) == cudaSuccess);
  CHECK(cudaEventQuery(done) == cudaSuccess);
  CHECK(cudaStreamQuery(st.s) == cudaSuccess);
  const int n = w.size();
  CHECK(out[0] == n * (n + 1) / 2);
  CHECK(out[1] == 10 * n);
  CHECK(cudaEventDestroy(done) == cudaSuccess);
}

TEST_CASE("ncclCommAbort from another thread ends a wait on the stream") {
  const int abandoned = devmesh_fake_nccl_works_abandoned();
  {
    auto w = dm::nccl::world(MPI_COMM_WORLD, fast());
    auto c = w.split(0, w.rank(), fast());
    stream st;
    std::vector<float> v(4, 1.f);
    if (c.rank() == 0) {
      c.all_reduce(v.data(), v.data(), 4, dm::op::sum, st.s);  // no peer ever makes it
      std::thread aborter([&] {
        std::this_thread::sleep_for(300ms);
        c.abort();
      });
      const auto t0 = std::chrono::steady_clock::now();
      CHECK(cudaStreamSynchronize(st.s) == cudaSuccess);  // ended by the abort
      aborter.join();
      CHECK(since(t0) > 0.25);
      CHECK(devmesh_fake_nccl_works_abandoned() == abandoned + 1);
      CHECK(devmesh_fake_cuda_pending(st.s) == 0);
      CHECK(c.aborted());
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  CHECK(devmesh_fake_nccl_live_comms() == 0);
  CHECK(devmesh_fake_cuda_live_events() == 0);
}
}  // namespace nccl_async_double_test
