// tests/nccl/double/fake_cuda.cpp: the double's CUDA runtime and its device model
// (fake_streams.h): streams as queues of works, events as positions in them, "device memory"
// as host memory. The NCCL calls (fake_nccl.cpp) enqueue their works here.
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <string>

#include "fake_control.h"
#include "fake_streams.h"

namespace fake {
namespace {

std::deque<std::shared_ptr<work>> unfinished;                     // in enqueue order
std::map<cudaStream_t, std::deque<std::shared_ptr<work>>> queues;  // per stream, in order
std::vector<std::shared_ptr<work>> parked;                         // abandoned, MPI may still write
int live_allocs = 0, current_device = -1, live_events = 0, works_abandoned = 0;

bool launch_blocking() {
  static const bool on = [] {
    const char* v = std::getenv("CUDA_LAUNCH_BLOCKING");
    return v && std::string(v) == "1";
  }();
  return on;
}

/// w is first on every stream it is on.
bool first_on_streams(const work& w) {
  for (cudaStream_t s : w.streams)
    if (queues[s].front().get() != &w) return false;
  return true;
}

/// An earlier work that has not started shares a communicator with unfinished[i].
bool waits_for_earlier(std::size_t i) {
  const work& w = *unfinished[i];
  for (std::size_t j = 0; j < i; ++j) {
    const work& e = *unfinished[j];
    if (e.started) continue;
    for (ncclComm* c : e.comms)
      if (std::find(w.comms.begin(), w.comms.end(), c) != w.comms.end()) return true;
  }
  return false;
}

/// One pass over the unfinished works; true when one of them started or completed.
bool advance() {
  bool moved = false;
  for (std::size_t i = 0; i < unfinished.size(); ++i) {
    work& w = *unfinished[i];
    if (w.done) continue;
    if (!w.started) {
      if (!first_on_streams(w) || waits_for_earlier(i)) continue;
      w.started = true;
      if (w.start) w.start(w);
      moved = true;
    }
    int flag = 1;
    if (!w.reqs.empty() && MPI_Testall(static_cast<int>(w.reqs.size()), w.reqs.data(), &flag, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      flag = 1;  // an MPI error ends the work (the start reported it)
    if (flag) {
      w.done = true;
      if (w.finish) w.finish();
      moved = true;
    }
  }
  return moved;
}

/// Drops finished works from the list and the queues' fronts.
void drop_finished() {
  std::erase_if(unfinished, [](const std::shared_ptr<work>& w) { return w->done; });
  for (auto it = queues.begin(); it != queues.end();) {
    auto& q = it->second;
    while (!q.empty() && q.front()->done) q.pop_front();
    it = q.empty() ? queues.erase(it) : std::next(it);
  }
}

}  // namespace

std::mutex& mutex() {
  static std::mutex m;
  return m;
}

void progress() {
  int ready = 0, finalized = 0;
  MPI_Initialized(&ready);
  MPI_Finalized(&finalized);
  if (!ready || finalized) return;
  while (advance()) drop_finished();
  drop_finished();
}

void enqueue(lock& lk, std::shared_ptr<work> w) {
  if (w->streams.empty()) w->streams.push_back(nullptr);
  std::sort(w->streams.begin(), w->streams.end());
  w->streams.erase(std::unique(w->streams.begin(), w->streams.end()), w->streams.end());
  for (cudaStream_t s : w->streams) queues[s].push_back(w);
  unfinished.push_back(w);
  progress();
  if (launch_blocking()) wait_until(lk, [&] { return w->done; });
}

void abandon(const ncclComm* c) {
  for (auto& w : unfinished) {
    if (w->done || std::find(w->comms.begin(), w->comms.end(), c) == w->comms.end()) continue;
    w->done = w->abandoned = true;
    ++works_abandoned;
    if (w->started) parked.push_back(w);  // its requests stay MPI's: never freed, never waited
  }
  drop_finished();
}

bool has_pending(const ncclComm* c) {
  return std::any_of(unfinished.begin(), unfinished.end(), [&](const std::shared_ptr<work>& w) {
    return !w->done && std::find(w->comms.begin(), w->comms.end(), c) != w->comms.end();
  });
}

bool has_unstarted(const ncclComm* c) {
  return std::any_of(unfinished.begin(), unfinished.end(), [&](const std::shared_ptr<work>& w) {
    return !w->started && std::find(w->comms.begin(), w->comms.end(), c) != w->comms.end();
  });
}

bool stream_busy(cudaStream_t s) {
  const auto it = queues.find(s);
  return it != queues.end() && !it->second.empty();
}

bool device_busy() { return !unfinished.empty(); }

}  // namespace fake

namespace {
/// An event: the last work of its stream when recorded (null: nothing before it).
struct fake_event {
  std::shared_ptr<fake::work> after;
};
fake_event* event_of(cudaEvent_t e) { return reinterpret_cast<fake_event*>(e); }
bool event_done(const fake_event& e) { return !e.after || e.after->done; }

/// A local stream operation (cudaMemcpyAsync, cudaMemsetAsync): a work without MPI.
cudaError_t local_op(cudaStream_t s, std::function<void()> f) {
  fake::lock lk(fake::mutex());
  auto w = std::make_shared<fake::work>();
  w->streams = {s};
  w->start = [f = std::move(f)](fake::work&) { f(); };
  fake::enqueue(lk, std::move(w));
  return cudaSuccess;
}
/// Waits for every stream (what cudaMemcpy, cudaMemset, cudaFree and cudaDeviceSynchronize do).
void device_sync(fake::lock& lk) {
  fake::wait_until(lk, [] { return !fake::device_busy(); });
}
}  // namespace

extern "C" {
int devmesh_fake_cuda_live_allocs(void) {
  fake::lock lk(fake::mutex());
  return fake::live_allocs;
}
int devmesh_fake_cuda_current_device(void) {
  fake::lock lk(fake::mutex());
  return fake::current_device;
}
int devmesh_fake_cuda_live_events(void) {
  fake::lock lk(fake::mutex());
  return fake::live_events;
}
int devmesh_fake_cuda_pending(cudaStream_t s) {
  fake::lock lk(fake::mutex());
  fake::progress();
  const auto it = fake::queues.find(s);
  return it == fake::queues.end() ? 0 : static_cast<int>(it->second.size());
}
int devmesh_fake_nccl_works_abandoned(void) {
  fake::lock lk(fake::mutex());
  return fake::works_abandoned;
}
}  // extern "C"

// ---- CUDA runtime ------------------------------------------------------------------------
cudaError_t cudaGetDeviceCount(int* count) {
  const char* n = std::getenv("DEVMESH_FAKE_CUDA_DEVICES");
  *count = n ? std::atoi(n) : 8;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  int n = 0;
  cudaGetDeviceCount(&n);
  if (device < 0 || device >= n) return cudaErrorInvalidDevice;
  fake::lock lk(fake::mutex());
  fake::current_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  fake::lock lk(fake::mutex());
  *device = fake::current_device < 0 ? 0 : fake::current_device;
  return cudaSuccess;
}

cudaError_t cudaGetLastError() { return cudaSuccess; }

const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    default: return "fake cuda error";
  }
}

const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    default: return "cudaErrorUnknown";
  }
}

cudaError_t cudaMalloc(void** p, size_t n) {
  *p = std::malloc(n ? n : 1);
  if (!*p) return cudaErrorMemoryAllocation;
  fake::lock lk(fake::mutex());
  ++fake::live_allocs;
  return cudaSuccess;
}

cudaError_t cudaFree(void* p) {
  if (!p) return cudaSuccess;
  fake::lock lk(fake::mutex());
  device_sync(lk);  // as CUDA: cudaFree waits for the device
  std::free(p);
  --fake::live_allocs;
  return cudaSuccess;
}

namespace {
/// memmove of n bytes; nothing for n == 0, where CUDA accepts null pointers (memmove does not).
void move_bytes(void* dst, const void* src, size_t n) {
  if (n) std::memmove(dst, src, n);
}
}  // namespace

cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind) {
  fake::lock lk(fake::mutex());
  device_sync(lk);  // the legacy default stream: after the work before it
  move_bytes(dst, src, n);
  return cudaSuccess;
}

// As CUDA with pageable host memory (the double has no pinned memory): a copy from the host
// takes the source before it returns (the caller may reuse it at once), a copy to the host
// returns once its stream got there and the copy is done; a device-to-device copy is queued.
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t s) {
  if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost) {
    auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src), static_cast<const char*>(src) + n);
    return local_op(s, [=] { move_bytes(dst, staged->data(), n); });
  }
  if (kind == cudaMemcpyDeviceToHost) {
    fake::lock lk(fake::mutex());
    fake::wait_until(lk, [s] { return !fake::stream_busy(s); });
    move_bytes(dst, src, n);
    return cudaSuccess;
  }
  return local_op(s, [=] { move_bytes(dst, src, n); });
}

// Rows of a 2-D copy: as cudaMemcpyAsync for each row, in one work (device-to-device: queued).
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t s) {
  if (width > dpitch || width > spitch) return cudaErrorInvalidPitchValue;
  if (kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault) return cudaErrorInvalidMemcpyDirection;
  return local_op(s, [=] {
    for (size_t r = 0; r < height; ++r)
      move_bytes(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
  });
}

// Stream-ordered allocation: the memory is the caller's from now on in stream order (the double
// allocates at once); a stream-ordered free happens once the work queued before it is done.
cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t) { return cudaMalloc(p, n); }

cudaError_t cudaFreeAsync(void* p, cudaStream_t s) {
  if (!p) return cudaSuccess;
  return local_op(s, [p] {  // in a work: the double's mutex is held
    std::free(p);
    --fake::live_allocs;
  });
}

cudaError_t cudaMemset(void* p, int v, size_t n) {
  fake::lock lk(fake::mutex());
  device_sync(lk);
  if (n) std::memset(p, v, n);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* p, int v, size_t n, cudaStream_t s) {
  return local_op(s, [=] {
    if (n) std::memset(p, v, n);
  });
}

cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  fake::lock lk(fake::mutex());
  fake::wait_until(lk, [s] { return !fake::stream_busy(s); });
  return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t s) {
  fake::lock lk(fake::mutex());
  fake::progress();
  return fake::stream_busy(s) ? cudaErrorNotReady : cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
  fake::lock lk(fake::mutex());
  device_sync(lk);
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* s) {
  // Distinct handles, never dereferenced (and never reused: a destroyed stream's work may
  // still be queued).
  static std::uintptr_t next = 0x1000;
  fake::lock lk(fake::mutex());
  *s = reinterpret_cast<cudaStream_t>(next += 16);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int) { return cudaStreamCreate(s); }

cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }  // its work still completes

cudaError_t cudaEventCreate(cudaEvent_t* e) {
  fake::lock lk(fake::mutex());
  *e = reinterpret_cast<cudaEvent_t>(new fake_event);
  ++fake::live_events;
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int) { return cudaEventCreate(e); }

cudaError_t cudaEventDestroy(cudaEvent_t e) {
  if (!e) return cudaErrorInvalidResourceHandle;
  fake::lock lk(fake::mutex());
  delete event_of(e);
  --fake::live_events;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  if (!e) return cudaErrorInvalidResourceHandle;
  fake::lock lk(fake::mutex());
  fake::progress();
  const auto it = fake::queues.find(s);
  event_of(e)->after = it == fake::queues.end() || it->second.empty() ? nullptr : it->second.back();
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e) {
  if (!e) return cudaErrorInvalidResourceHandle;
  fake::lock lk(fake::mutex());
  fake::progress();
  return event_done(*event_of(e)) ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  if (!e) return cudaErrorInvalidResourceHandle;
  fake::lock lk(fake::mutex());
  fake_event* ev = event_of(e);
  fake::wait_until(lk, [ev] { return event_done(*ev); });
  return cudaSuccess;
}

// ---- module registration that nvcc emits into every .cu host object ------------------------
// (No kernels run under the double; the registration only has to succeed.)
extern "C" {
void** __cudaRegisterFatBinary(void*) {
  static void* handle = nullptr;
  return &handle;
}
void __cudaRegisterFatBinaryEnd(void**) {}
void __cudaUnregisterFatBinary(void**) {}
char __cudaInitModule(void**) { return 1; }
}
