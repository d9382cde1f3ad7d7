// tests/nccl/double/fake_streams.h: the double's device model, shared by fake_nccl.cpp (the
// NCCL calls) and fake_cuda.cpp (the CUDA runtime calls and the model itself). Internal to the
// double; tests use fake_control.h.
//
// As on a GPU, work is asynchronous: an NCCL call (or cudaMemcpyAsync) enqueues a `work` on its
// stream and returns. A work starts (its MPI operations are posted, non-blocking: MPI_I*) when it
// is first on every stream it is on and every earlier work on one of its communicators has
// started (so the ranks post a communicator's operations in the order they made the calls, as
// NCCL requires); it completes when MPI_Testall says so. Nothing progresses by itself: every
// call into the double advances what it can (progress()), and the calls that wait
// (cudaStreamSynchronize, cudaEventSynchronize, cudaDeviceSynchronize, cudaMemcpy, cudaFree,
// a blocking ncclCommFinalize, CUDA_LAUNCH_BLOCKING=1) poll: they release the double's mutex
// between polls, so that ncclCommAbort from another thread ends them. ncclCommAbort abandons
// the works on its communicator (done, never completed); their MPI requests and the buffers
// the double made for them are parked, never freed (MPI may still write them).
#pragma once
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace fake {

/// One "kernel": MPI operations on one or more communicators, on one or more streams (a
/// group's works are one), or a local copy (no communicator).
struct work {
  std::vector<ncclComm*> comms;        // abort() of one of them abandons the work
  std::vector<cudaStream_t> streams;   // in the queue of each
  std::function<void(work&)> start;    // posts reqs (reads send buffers now), or copies
  std::function<void()> finish;        // after completion (ncclAvg divides here)
  std::vector<MPI_Request> reqs;
  std::vector<std::vector<char>> keep;  // the double's own buffers, alive until done or parked
  bool started = false, done = false, abandoned = false;
};

/// The double's one mutex: every entry point holds it; waits release it between polls.
std::mutex& mutex();
using lock = std::unique_lock<std::mutex>;

/// Enqueues w on its streams and starts what can start; with CUDA_LAUNCH_BLOCKING=1 (as
/// CUDA: every launch completes before it returns) waits for w's streams.
void enqueue(lock& lk, std::shared_ptr<work> w);
/// Starts and completes what can be (the mutex held).
void progress();
/// Abandons every unfinished work on c (ncclCommAbort, ncclCommDestroy): done, never
/// completed; its requests and buffers parked.
void abandon(const ncclComm* c);
/// True while a work on c is unfinished / has not started.
bool has_pending(const ncclComm* c);
bool has_unstarted(const ncclComm* c);
/// True while stream s has unfinished work (nullptr: the default stream).
bool stream_busy(cudaStream_t s);
/// True while any stream has unfinished work.
bool device_busy();

/// Polls (progress(), then done()) until done() is true, releasing the mutex between polls:
/// 2 ms of yields, then naps of 50 us growing to 500 us.
template <class Done>
void wait_until(lock& lk, Done done) {
  const auto spin_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
  auto nap = std::chrono::microseconds(50);
  for (;;) {
    progress();
    if (done()) return;
    lk.unlock();
    if (std::chrono::steady_clock::now() < spin_until) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(nap);
      if (nap < std::chrono::microseconds(500)) nap *= 2;
    }
    lk.lock();
  }
}

}  // namespace fake
