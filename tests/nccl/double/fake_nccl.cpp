// tests/nccl/double/fake_nccl.cpp: a link-time test double for libnccl + libcudart.
//
// Implements exactly the NCCL and CUDA runtime functions devmesh's NCCL backend calls,
// with the real headers' signatures (nccl.h, cuda_runtime_api.h), so the backend is
// compiled unchanged and linked against this instead of the real libraries.
//
// Model: every rank is an MPI process; "device memory" is host memory; work is asynchronous
// as on a GPU (fake_streams.h, fake_cuda.cpp): a collective enqueues a work on its stream, which
// posts non-blocking MPI operations and completes when the program synchronizes or queries
// (stream, event, device), or a later stream operation needs it; ncclCommAbort from any thread
// abandons a communicator's pending work. Each ncclComm mirrors an MPI
// communicator: init = MPI_Comm_split of MPI_COMM_WORLD by the unique id (every world rank
// must take part, which is what the tests do), ncclCommSplit = MPI_Comm_split of the
// parent's mirror with the same color/key, and collectives are real MPI reductions and
// exchanges. Non-blocking communicators answer ncclInProgress and settle after a few
// ncclCommGetAsyncError polls, so the backend's polling path runs.
//
// Fault injection (read at first use):
//   DEVMESH_FAKE_NCCL_FAIL      init | split | async | hang
//   DEVMESH_FAKE_NCCL_FAIL_RANK MPI_COMM_WORLD rank that fails (default 0)
//   DEVMESH_FAKE_NCCL_FAIL_CALL init | split: where async/hang strike (default init)
//   DEVMESH_FAKE_NCCL_FAIL_AT   which ncclCommSplit call (0-based, per process) for split
//                               faults (default 0)
// init/split: the failing rank's call returns ncclInternalError. The other ranks do what a
// real NCCL would: they wait for it, i.e. stay ncclInProgress forever (non-blocking), or
// get ncclRemoteError (blocking; the double does not hang a blocking call).
// async: the communicator is created, then reports ncclSystemError on the failing rank
// and ncclRemoteError on the others. hang: every rank of it stays ncclInProgress forever.
// The ranks learn of a fault through an MPI all-reduce inside the creating call, so the
// double itself never blocks on a missing rank there.
//
// At exit, communicators still alive (created, never destroyed or aborted) are reported
// and the process exits with status 3.
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <unistd.h>
#include <vector>

#include "fake_control.h"
#include "fake_streams.h"

struct ncclComm {
  MPI_Comm mpi = MPI_COMM_NULL;
  int rank = 0;
  int size = 0;
  int blocking = 1;
  enum class state { ready, hang, async_error, remote_error } st = state::ready;
  int pending_polls = 0;  // ncclInProgress answers left before `st` shows
  bool finalized = false;
  devmesh_fake_comm_info info{};
};

namespace {

// ---- bookkeeping ---------------------------------------------------------------------
int live_comms = 0, aborted = 0, destroyed = 0, destroyed_unfinalized = 0;
int split_calls = 0, group_ends = 0, last_nids = 0;
int last_color = -2, last_key = -2;
devmesh_fake_call last_call{"", ncclInt8, 0, -1, -1, 0};
std::string last_error;

struct leak_check {
  ~leak_check() {
    const int allocs = devmesh_fake_cuda_live_allocs(), events = devmesh_fake_cuda_live_events();
    if (live_comms != 0 || allocs != 0 || events != 0) {
      std::fprintf(stderr, "fake nccl: %d communicator(s), %d device allocation(s) and %d event(s) leaked\n",
                   live_comms, allocs, events);
      std::fflush(stderr);
      _exit(3);
    }
  }
} leak_checker;

ncclResult_t fail(ncclResult_t r, std::string what) {
  last_error = "fake nccl: " + std::move(what);
  return r;
}

// ---- fault injection -----------------------------------------------------------------
enum class fault { none, init, split, async, hang };
struct fault_config {
  fault kind = fault::none;
  int rank = 0;
  bool at_split = false;  // async/hang strike at a split rather than at init
  int at = 0;
};
const fault_config& faults() {
  static const fault_config f = [] {
    fault_config c;
    auto env = [](const char* n) { return std::getenv(n); };
    if (const char* k = env("DEVMESH_FAKE_NCCL_FAIL")) {
      std::string s = k;
      c.kind = s == "init" ? fault::init : s == "split" ? fault::split : s == "async" ? fault::async
             : s == "hang" ? fault::hang : fault::none;
      if (c.kind == fault::none && !s.empty()) {
        std::fprintf(stderr, "fake nccl: unknown DEVMESH_FAKE_NCCL_FAIL=%s\n", k);
        std::abort();
      }
    }
    if (const char* r = env("DEVMESH_FAKE_NCCL_FAIL_RANK")) c.rank = std::atoi(r);
    if (const char* w = env("DEVMESH_FAKE_NCCL_FAIL_CALL")) c.at_split = std::string(w) == "split";
    if (const char* a = env("DEVMESH_FAKE_NCCL_FAIL_AT")) c.at = std::atoi(a);
    return c;
  }();
  return f;
}
int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
bool mpi_ready() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

// Which fault this rank injects into the current creation call (init or split #n).
fault local_fault(bool is_split, int split_index) {
  const fault_config& f = faults();
  if (f.kind == fault::none || world_rank() != f.rank) return fault::none;
  if (f.kind == fault::init) return is_split ? fault::none : fault::init;
  if (f.kind == fault::split) return is_split && split_index == f.at ? fault::split : fault::none;
  if (is_split != f.at_split) return fault::none;
  if (is_split && split_index != f.at) return fault::none;
  return f.kind;
}

// ---- communicators -------------------------------------------------------------------
ncclComm* make_comm(MPI_Comm mpi, int blocking, const ncclConfig_t* cfg) {
  auto* c = new ncclComm;
  c->mpi = mpi;
  MPI_Comm_set_errhandler(mpi, MPI_ERRORS_RETURN);
  MPI_Comm_rank(mpi, &c->rank);
  MPI_Comm_size(mpi, &c->size);
  c->blocking = blocking;
  c->pending_polls = blocking ? 0 : 2;
  MPI_Group g, wg;
  MPI_Comm_group(mpi, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  int n = std::min(c->size, 64);
  std::vector<int> mine(static_cast<std::size_t>(n)), world(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) mine[static_cast<std::size_t>(i)] = i;
  MPI_Group_translate_ranks(g, n, mine.data(), wg, world.data());
  MPI_Group_free(&g);
  MPI_Group_free(&wg);
  for (int i = 0; i < n; ++i) c->info.world_ranks[i] = world[static_cast<std::size_t>(i)];
  c->info.size = c->size;
  c->info.blocking = blocking;
  auto int_or = [](int v) { return v == NCCL_CONFIG_UNDEF_INT ? -1 : v; };
  c->info.cga_cluster_size = cfg ? int_or(cfg->cgaClusterSize) : -1;
  c->info.min_ctas = cfg ? int_or(cfg->minCTAs) : -1;
  c->info.max_ctas = cfg ? int_or(cfg->maxCTAs) : -1;
  c->info.split_share = cfg ? int_or(cfg->splitShare) : -1;
  if (cfg && cfg->netName) std::snprintf(c->info.net_name, sizeof c->info.net_name, "%s", cfg->netName);
  if (cfg && cfg->commName) std::snprintf(c->info.comm_name, sizeof c->info.comm_name, "%s", cfg->commName);
  ++live_comms;
  return c;
}
void free_comm(ncclComm* c) {
  if (c->mpi != MPI_COMM_NULL && mpi_ready()) MPI_Comm_free(&c->mpi);
  delete c;
  --live_comms;
}

ncclResult_t check_config(const ncclConfig_t* cfg) {
  if (!cfg) return ncclSuccess;
  if (cfg->magic != 0xcafebeef || cfg->size != sizeof(ncclConfig_t))
    return fail(ncclInvalidArgument, "ncclConfig_t not made from NCCL_CONFIG_INITIALIZER");
  return ncclSuccess;
}
int blocking_of(const ncclConfig_t* cfg, int inherited) {
  return cfg && cfg->blocking != NCCL_CONFIG_UNDEF_INT ? cfg->blocking : inherited;
}

// The ranks of `mpi` agree on the worst fault any of them injects. Encoded: 0 none,
// else 1 + fault_index * 4096 + rank (so the failing rank is known to the others).
int agree_fault(MPI_Comm mpi, fault mine) {
  int code = mine == fault::none ? 0 : 1 + static_cast<int>(mine) * 4096 + world_rank();
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, mpi);
  return worst;
}
fault fault_of(int code) { return code == 0 ? fault::none : static_cast<fault>((code - 1) / 4096); }
int fault_rank(int code) { return (code - 1) % 4096; }

// A communicator just created, in the light of the agreed fault. Returns what the
// creating call returns; may free `c` and null `*out`.
ncclResult_t settle_new(ncclComm* c, ncclComm_t* out, int code, fault mine, const char* call) {
  const fault f = fault_of(code);
  const std::string who = "rank " + std::to_string(fault_rank(code));
  if (mine == fault::init || mine == fault::split) {  // this rank fails the call itself
    if (c) free_comm(c);
    *out = nullptr;
    return fail(ncclInternalError, std::string("injected failure of ") + call + " on this rank");
  }
  if (f == fault::init || f == fault::split) {  // a peer failed: a real NCCL waits for it
    if (c && !c->blocking) {
      c->st = ncclComm::state::hang;
      *out = c;
      last_error = "fake nccl: waiting for " + who + " in " + call;
      return ncclInProgress;
    }
    if (c) free_comm(c);
    *out = nullptr;
    return fail(ncclRemoteError, std::string(call) + ": " + who + " failed");
  }
  *out = c;
  if (!c) return ncclSuccess;
  if (f == fault::hang) {
    c->st = ncclComm::state::hang;
    if (c->blocking) {  // a blocking call would never return; the double gives up loudly
      free_comm(c);
      *out = nullptr;
      return fail(ncclSystemError, std::string("injected hang in blocking ") + call);
    }
  } else if (f == fault::async) {
    c->st = mine == fault::async ? ncclComm::state::async_error : ncclComm::state::remote_error;
    last_error = std::string("fake nccl: injected async error") + (mine == fault::async ? "" : " on " + who);
  }
  return c->blocking ? (c->st == ncclComm::state::ready ? ncclSuccess : ncclSystemError) : ncclInProgress;
}

std::uint32_t hash_bytes(const void* p, std::size_t n) {
  std::uint32_t h = 2166136261u;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 16777619u;
  return h & 0x7fffffffu;
}

ncclResult_t init(ncclComm_t* out, int nranks, const void* id, std::size_t id_bytes, int rank, const ncclConfig_t* cfg,
                  const char* call) {
  if (!out) return fail(ncclInvalidArgument, std::string(call) + ": null comm pointer");
  *out = nullptr;
  if (!mpi_ready()) return fail(ncclSystemError, "MPI is not initialized (the double runs over MPI)");
  if (ncclResult_t r = check_config(cfg); r != ncclSuccess) return r;
  MPI_Comm mpi;
  MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(hash_bytes(id, id_bytes)), rank, &mpi);
  int size = 0, me = 0;
  MPI_Comm_size(mpi, &size);
  MPI_Comm_rank(mpi, &me);
  const fault mine = local_fault(false, 0);
  const int code = agree_fault(mpi, mine);
  if (size != nranks || me != rank) {
    MPI_Comm_free(&mpi);
    return fail(ncclInvalidArgument, std::string(call) + ": nranks " + std::to_string(nranks) + "/rank " +
                                         std::to_string(rank) + " do not match the " + std::to_string(size) +
                                         " processes that used this unique id");
  }
  return settle_new(make_comm(mpi, blocking_of(cfg, 1), cfg), out, code, mine, call);
}

// ---- collectives -----------------------------------------------------------------------
MPI_Datatype mpi_type(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: return MPI_INT8_T;
    case ncclUint8: return MPI_UINT8_T;
    case ncclInt32: return MPI_INT32_T;
    case ncclUint32: return MPI_UINT32_T;
    case ncclInt64: return MPI_INT64_T;
    case ncclUint64: return MPI_UINT64_T;
    case ncclFloat16:
    case ncclBfloat16: return MPI_UINT16_T;  // moved, never reduced
    case ncclFloat32: return MPI_FLOAT;
    case ncclFloat64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
  }
}
std::size_t type_size(ncclDataType_t t) {
  int s = 0;
  MPI_Type_size(mpi_type(t), &s);
  return static_cast<std::size_t>(s);
}
MPI_Op mpi_op(ncclRedOp_t o) {
  switch (o) {
    case ncclSum: case ncclAvg: return MPI_SUM;
    case ncclProd: return MPI_PROD;
    case ncclMax: return MPI_MAX;
    case ncclMin: return MPI_MIN;
    default: return MPI_OP_NULL;
  }
}
template <class T>
void divide(void* p, std::size_t n, int by) {
  T* v = static_cast<T*>(p);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(v[i] / static_cast<T>(by));
}
void average(void* p, std::size_t n, ncclDataType_t t, int by) {
  switch (t) {
    case ncclInt8: divide<std::int8_t>(p, n, by); break;
    case ncclUint8: divide<std::uint8_t>(p, n, by); break;
    case ncclInt32: divide<std::int32_t>(p, n, by); break;
    case ncclUint32: divide<std::uint32_t>(p, n, by); break;
    case ncclInt64: divide<std::int64_t>(p, n, by); break;
    case ncclUint64: divide<std::uint64_t>(p, n, by); break;
    case ncclFloat32: divide<float>(p, n, by); break;
    case ncclFloat64: divide<double>(p, n, by); break;
    default: break;
  }
}

// One NCCL call's part of a work (fake_streams.h): `copy` takes what it reads from its send
// buffer (for every call of a group before any posts: a send buffer may be another call's
// receive buffer), `post` starts its MPI operation, `finish` runs when it is complete.
struct call_part {
  ncclComm* comm;
  cudaStream_t stream;
  std::function<void(fake::work&)> copy, post;
  std::function<void()> finish;
};
// Group state: the calls of the outermost group become one work at ncclGroupEnd, so that its
// sends and receives are posted together and any pairing completes.
int group_depth = 0;
bool group_nonblocking = false;
std::vector<call_part> queued;

// One work of `parts` (one call, or a group's).
std::shared_ptr<fake::work> work_of(std::vector<call_part> parts) {
  auto w = std::make_shared<fake::work>();
  for (const auto& p : parts) {
    if (std::find(w->comms.begin(), w->comms.end(), p.comm) == w->comms.end()) w->comms.push_back(p.comm);
    w->streams.push_back(p.stream);
  }
  auto shared = std::make_shared<std::vector<call_part>>(std::move(parts));
  w->start = [shared](fake::work& me) {
    for (auto& p : *shared)
      if (p.copy) p.copy(me);
    for (auto& p : *shared) p.post(me);
  };
  w->finish = [shared] {
    for (auto& p : *shared)
      if (p.finish) p.finish();
  };
  return w;
}

ncclResult_t usable(ncclComm* c, const char* call) {
  if (!c) return fail(ncclInvalidArgument, std::string(call) + ": null communicator");
  if (c->st != ncclComm::state::ready || c->pending_polls > 0)
    return fail(ncclInvalidUsage, std::string(call) + ": communicator is not ready (in progress or failed)");
  return ncclSuccess;
}
void record(const char* name, ncclDataType_t t, std::size_t count, int op, int peer) {
  last_call = {name, t, count, op, peer, group_depth > 0 ? 1 : 0};
}
ncclResult_t mpi_result(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return ncclSuccess;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return fail(ncclSystemError, std::string(call) + ": MPI: " + std::string(text, static_cast<std::size_t>(len)));
}

// Enqueues `part` on its stream (fake_streams.h), or at the outermost ncclGroupEnd inside a
// group; in non-blocking mode the enqueue answers ncclInProgress once, as a real non-blocking
// communicator may.
ncclResult_t issue(fake::lock& lk, call_part part) {
  ncclComm* c = part.comm;
  if (group_depth > 0) {
    if (!c->blocking) group_nonblocking = true;
    queued.push_back(std::move(part));
    return ncclSuccess;
  }
  std::vector<call_part> one;
  one.push_back(std::move(part));
  fake::enqueue(lk, work_of(std::move(one)));
  if (c->blocking) return ncclSuccess;
  c->pending_polls = 1;
  return ncclInProgress;
}

// A posted MPI operation's result: an error makes the communicator report it (the call that
// enqueued it has returned, as a kernel's failure shows later on a GPU).
void posted(ncclComm* c, int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  mpi_result(rc, call);
  c->st = ncclComm::state::async_error;
}

ncclResult_t check_reducible(ncclDataType_t t, ncclRedOp_t o, const char* call) {
  if (mpi_type(t) == MPI_DATATYPE_NULL) return fail(ncclInvalidArgument, std::string(call) + ": invalid datatype");
  if (t == ncclFloat16 || t == ncclBfloat16)
    return fail(ncclInvalidArgument, std::string(call) + ": the double does not reduce 16-bit floats");
  if (mpi_op(o) == MPI_OP_NULL) return fail(ncclInvalidArgument, std::string(call) + ": invalid op");
  return ncclSuccess;
}

}  // namespace

// =========================================================================================
extern "C" {

int devmesh_fake_nccl_live_comms(void) {
  fake::lock lk(fake::mutex());
  return live_comms;
}
int devmesh_fake_nccl_aborted(void) {
  fake::lock lk(fake::mutex());
  return aborted;
}
int devmesh_fake_nccl_destroyed(void) {
  fake::lock lk(fake::mutex());
  return destroyed;
}
int devmesh_fake_nccl_destroyed_unfinalized(void) {
  fake::lock lk(fake::mutex());
  return destroyed_unfinalized;
}
void devmesh_fake_nccl_last_split(int* color, int* key) {
  fake::lock lk(fake::mutex());
  *color = last_color;
  *key = last_key;
}
int devmesh_fake_nccl_split_calls(void) {
  fake::lock lk(fake::mutex());
  return split_calls;
}
int devmesh_fake_nccl_group_ends(void) {
  fake::lock lk(fake::mutex());
  return group_ends;
}
int devmesh_fake_nccl_last_init_nids(void) {
  fake::lock lk(fake::mutex());
  return last_nids;
}
devmesh_fake_call devmesh_fake_nccl_last_call(void) {
  fake::lock lk(fake::mutex());
  return last_call;
}
int devmesh_fake_nccl_comm_info(ncclComm_t comm, devmesh_fake_comm_info* info) {
  fake::lock lk(fake::mutex());
  if (!comm) return 0;
  *info = comm->info;
  return 1;
}

}  // extern "C"

// ---- NCCL ------------------------------------------------------------------------------
ncclResult_t ncclGetVersion(int* version) {
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

const char* ncclGetLastError(ncclComm_t) {
  fake::lock lk(fake::mutex());
  return last_error.c_str();
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  fake::lock lk(fake::mutex());
  std::memset(id, 0, sizeof *id);
  static int counter = 0;
  std::string s;
  if (const char* env = std::getenv("NCCL_COMM_ID"))
    s = std::string("comm-id:") + env;  // NCCL_COMM_ID: every rank derives the same id
  else
    s = "fake:" + std::to_string(getpid()) + ":" + std::to_string(counter++);
  std::snprintf(id->internal, sizeof id->internal, "%s", s.c_str());
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t* config) {
  fake::lock lk(fake::mutex());
  last_nids = 0;
  return init(comm, nranks, &id, sizeof id, rank, config, "ncclCommInitRankConfig");
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  fake::lock lk(fake::mutex());
  last_nids = 0;
  return init(comm, nranks, &id, sizeof id, rank, nullptr, "ncclCommInitRank");
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t* comm, int nranks, int rank, int nId, ncclUniqueId* ids,
                                      ncclConfig_t* config) {
  fake::lock lk(fake::mutex());
  last_nids = nId;
  if (nId < 1 || !ids) return fail(ncclInvalidArgument, "ncclCommInitRankScalable: no ids");
  return init(comm, nranks, ids, sizeof(ncclUniqueId) * static_cast<std::size_t>(nId), rank, config,
              "ncclCommInitRankScalable");
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  fake::lock lk(fake::mutex());
  const int index = split_calls++;
  last_color = color;
  last_key = key;
  if (!newcomm) return fail(ncclInvalidArgument, "ncclCommSplit: null newcomm");
  *newcomm = nullptr;
  if (ncclResult_t r = usable(comm, "ncclCommSplit"); r != ncclSuccess) return r;
  if (ncclResult_t r = check_config(config); r != ncclSuccess) return r;
  if (color < 0 && color != NCCL_SPLIT_NOCOLOR) return fail(ncclInvalidArgument, "ncclCommSplit: negative color");
  // The split is a blocking MPI call on the parent's mirror: the parent's operations enqueued
  // before it are posted first, in the same order on every rank.
  fake::wait_until(lk, [comm] { return !fake::has_unstarted(comm); });
  const fault mine = local_fault(true, index);
  const int code = agree_fault(comm->mpi, mine);
  MPI_Comm mpi;
  if (int rc = MPI_Comm_split(comm->mpi, color == NCCL_SPLIT_NOCOLOR ? MPI_UNDEFINED : color, key, &mpi);
      rc != MPI_SUCCESS)
    return mpi_result(rc, "ncclCommSplit");
  ncclComm* child = mpi == MPI_COMM_NULL ? nullptr : make_comm(mpi, blocking_of(config, comm->blocking), config);
  ncclResult_t r = settle_new(child, newcomm, code, mine, "ncclCommSplit");
  // A peer's failure or a hang also stalls the parent (it runs the split); the call
  // answers by the parent's blocking mode.
  const fault f = fault_of(code);
  if (!comm->blocking && mine == fault::none && (f == fault::init || f == fault::split || f == fault::hang)) {
    comm->st = ncclComm::state::hang;
    return ncclInProgress;
  }
  if (r == ncclInProgress && comm->blocking) return ncclSuccess;  // the child settles by polling
  if (r == ncclSuccess && !comm->blocking) return ncclInProgress;
  return r;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* async) {
  fake::lock lk(fake::mutex());
  if (!comm) return fail(ncclInvalidArgument, "ncclCommGetAsyncError: null communicator");
  fake::progress();
  if (comm->pending_polls > 0 || (comm->finalized && fake::has_pending(comm))) {  // finalize flushes its work
    if (comm->pending_polls > 0) --comm->pending_polls;
    *async = ncclInProgress;
    return ncclSuccess;
  }
  switch (comm->st) {
    case ncclComm::state::ready: *async = ncclSuccess; break;
    case ncclComm::state::hang: *async = ncclInProgress; break;
    case ncclComm::state::async_error: *async = ncclSystemError; break;
    case ncclComm::state::remote_error: *async = ncclRemoteError; break;
  }
  return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  fake::lock lk(fake::mutex());
  if (ncclResult_t r = usable(comm, "ncclCommFinalize"); r != ncclSuccess) return r;
  comm->finalized = true;
  if (comm->blocking) {  // flushes the communicator's work
    fake::wait_until(lk, [comm] { return !fake::has_pending(comm); });
    return ncclSuccess;
  }
  comm->pending_polls = 1;
  return ncclInProgress;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  fake::lock lk(fake::mutex());
  if (!comm) return fail(ncclInvalidArgument, "ncclCommDestroy: null communicator");
  if (!comm->finalized) ++destroyed_unfinalized;
  ++destroyed;
  fake::abandon(comm);
  free_comm(comm);
  return ncclSuccess;
}

// Ends the communicator's pending work (fake_streams.h: abandoned, its MPI requests parked)
// and frees it; a thread waiting for that work (cudaStreamSynchronize) returns.
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (!comm) return ncclSuccess;
  fake::lock lk(fake::mutex());
  ++aborted;
  fake::abandon(comm);
  free_comm(comm);
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  fake::lock lk(fake::mutex());
  if (!comm) return fail(ncclInvalidArgument, "ncclCommCount: null communicator");
  *count = comm->size;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  fake::lock lk(fake::mutex());
  if (!comm) return fail(ncclInvalidArgument, "ncclCommUserRank: null communicator");
  *rank = comm->rank;
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t t, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t st) {
  fake::lock lk(fake::mutex());
  if (ncclResult_t r = usable(comm, "ncclAllReduce"); r != ncclSuccess) return r;
  if (ncclResult_t r = check_reducible(t, op, "ncclAllReduce"); r != ncclSuccess) return r;
  record("ncclAllReduce", t, count, op, -1);
  call_part p{comm, st, {}, {}, {}};
  p.post = [=](fake::work& w) {
    MPI_Request q = MPI_REQUEST_NULL;
    const void* in = send == recv ? MPI_IN_PLACE : send;
    const int rc = MPI_Iallreduce(in, recv, static_cast<int>(count), mpi_type(t), mpi_op(op), comm->mpi, &q);
    if (rc == MPI_SUCCESS) w.reqs.push_back(q);
    posted(comm, rc, "ncclAllReduce");
  };
  if (op == ncclAvg) p.finish = [=, n = comm->size] { average(recv, count, t, n); };
  return issue(lk, std::move(p));
}

ncclResult_t ncclReduce(const void* send, void* recv, size_t count, ncclDataType_t t, ncclRedOp_t op, int root,
                        ncclComm_t comm, cudaStream_t st) {
  fake::lock lk(fake::mutex());
  if (ncclResult_t r = usable(comm, "ncclReduce"); r != ncclSuccess) return r;
  if (ncclResult_t r = check_reducible(t, op, "ncclReduce"); r != ncclSuccess) return r;
  if (root < 0 || root >= comm->size) return fail(ncclInvalidArgument, "ncclReduce: root out of range");
  record("ncclReduce", t, count, op, root);
  const bool am_root = comm->rank == root;
  call_part p{comm, st, {}, {}, {}};
  p.post = [=](fake::work& w) {
    MPI_Request q = MPI_REQUEST_NULL;
    const void* in = am_root && send == recv ? MPI_IN_PLACE : send;
    const int rc = MPI_Ireduce(in, recv, static_cast<int>(count), mpi_type(t), mpi_op(op), root, comm->mpi, &q);
    if (rc == MPI_SUCCESS) w.reqs.push_back(q);
    posted(comm, rc, "ncclReduce");
  };
  if (op == ncclAvg && am_root) p.finish = [=, n = comm->size] { average(recv, count, t, n); };
  return issue(lk, std::move(p));
}

ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t t, int root, ncclComm_t comm,
                           cudaStream_t st) {
  fake::lock lk(fake::mutex());
  if (ncclResult_t r = usable(comm, "ncclBroadcast"); r != ncclSuccess) return r;
  if (root < 0 || root >= comm->size) return fail(ncclInvalidArgument, "ncclBroadcast: root out of range");
  if (mpi_type(t) == MPI_DATATYPE_NULL) return fail(ncclInvalidArgument, "ncclBroadcast: invalid datatype");
  record("ncclBroadcast", t, count, -1, root);
  call_part p{comm, st, {}, {}, {}};
  p.post = [=](fake::work& w) {
    if (comm->rank == root && send != recv) std::memcpy(recv, send, count * type_size(t));
    MPI_Request q = MPI_REQUEST_NULL;
    const int rc = MPI_Ibcast(recv, static_cast<int>(count), mpi_type(t), root, comm->mpi, &q);
    if (rc == MPI_SUCCESS) w.reqs.push_back(q);
    posted(comm, rc, "ncclBroadcast");
  };
  return issue(lk, std::move(p));
}

// A copy of `bytes` of `from` kept by the work (what MPI sends from: NCCL's send buffer may
// overlap the receive buffer), and its index in w.keep.
std::size_t keep_copy(fake::work& w, const void* from, std::size_t bytes) {
  w.keep.emplace_back(static_cast<const char*>(from), static_cast<const char*>(from) + bytes);
  return w.keep.size() - 1;
}

ncclResult_t ncclAllGather(const void* send, void* recv, size_t count, ncclDataType_t t, ncclComm_t comm,
                           cudaStream_t st) {
  fake::lock lk(fake::mutex());
  if (ncclResult_t r = usable(comm, "ncclAllGather"); r != ncclSuccess) return r;
  if (mpi_type(t) == MPI_DATATYPE_NULL) return fail(ncclInvalidArgument, "ncclAllGather: invalid datatype");
  record("ncclAllGather", t, count, -1, -1);
  auto at = std::make_shared<std::size_t>(0);
  call_part p{comm, st, {}, {}, {}};
  p.copy = [=](fake::work& w) { *at = keep_copy(w, send, count * type_size(t)); };
  p.post = [=](fake::work& w) {
    MPI_Request q = MPI_REQUEST_NULL;
    const int rc = MPI_Iallgather(w.keep[*at].data(), static_cast<int>(count), mpi_type(t), recv,
                                  static_cast<int>(count), mpi_type(t), comm->mpi, &q);
    if (rc == MPI_SUCCESS) w.reqs.push_back(q);
    posted(comm, rc, "ncclAllGather");
  };
  return issue(lk, std::move(p));
}

ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t count, ncclDataType_t t, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t st) {
  fake::lock lk(fake::mutex());
  if (ncclResult_t r = usable(comm, "ncclReduceScatter"); r != ncclSuccess) return r;
  if (ncclResult_t r = check_reducible(t, op, "ncclReduceScatter"); r != ncclSuccess) return r;
  record("ncclReduceScatter", t, count, op, -1);
  auto at = std::make_shared<std::size_t>(0);
  call_part p{comm, st, {}, {}, {}};
  p.copy = [=](fake::work& w) { *at = keep_copy(w, send, count * type_size(t) * static_cast<std::size_t>(comm->size)); };
  p.post = [=](fake::work& w) {
    MPI_Request q = MPI_REQUEST_NULL;
    const int rc = MPI_Ireduce_scatter_block(w.keep[*at].data(), recv, static_cast<int>(count), mpi_type(t), mpi_op(op),
                                             comm->mpi, &q);
    if (rc == MPI_SUCCESS) w.reqs.push_back(q);
    posted(comm, rc, "ncclReduceScatter");
  };
  if (op == ncclAvg) p.finish = [=, n = comm->size] { average(recv, count, t, n); };
  return issue(lk, std::move(p));
}

static ncclResult_t group_start_locked() {
  ++group_depth;
  return ncclSuccess;
}

static ncclResult_t group_end_locked(fake::lock& lk) {
  if (group_depth == 0) return fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  if (--group_depth > 0) return ncclSuccess;
  ++group_ends;
  std::vector<call_part> parts = std::move(queued);
  queued.clear();
  const bool nonblocking = group_nonblocking;
  group_nonblocking = false;
  if (parts.empty()) return ncclSuccess;
  std::vector<ncclComm*> comms;
  for (const auto& p : parts) comms.push_back(p.comm);
  fake::enqueue(lk, work_of(std::move(parts)));
  if (!nonblocking) return ncclSuccess;
  for (ncclComm* c : comms)
    if (!c->blocking) c->pending_polls = 1;
  return ncclInProgress;
}

static ncclResult_t point_to_point(bool send, void* buf, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                                   cudaStream_t st, const char* call) {
  fake::lock lk(fake::mutex());
  if (ncclResult_t r = usable(comm, call); r != ncclSuccess) return r;
  if (peer < 0 || peer >= comm->size) return fail(ncclInvalidArgument, std::string(call) + ": peer out of range");
  if (mpi_type(t) == MPI_DATATYPE_NULL) return fail(ncclInvalidArgument, std::string(call) + ": invalid datatype");
  record(call, t, count, -1, peer);
  const bool outside = group_depth == 0;
  if (outside) group_start_locked();
  if (!comm->blocking) group_nonblocking = true;
  const std::size_t bytes = count * type_size(t);
  call_part p{comm, st, {}, {}, {}};
  if (send) {
    auto at = std::make_shared<std::size_t>(0);
    p.copy = [=](fake::work& w) { *at = keep_copy(w, buf, bytes); };
    p.post = [=](fake::work& w) {
      MPI_Request q = MPI_REQUEST_NULL;
      const int rc = MPI_Isend(w.keep[*at].data(), static_cast<int>(bytes), MPI_BYTE, peer, 7, comm->mpi, &q);
      if (rc == MPI_SUCCESS) w.reqs.push_back(q);
      posted(comm, rc, "ncclSend");
    };
  } else {
    p.post = [=](fake::work& w) {
      MPI_Request q = MPI_REQUEST_NULL;
      const int rc = MPI_Irecv(buf, static_cast<int>(bytes), MPI_BYTE, peer, 7, comm->mpi, &q);
      if (rc == MPI_SUCCESS) w.reqs.push_back(q);
      posted(comm, rc, "ncclRecv");
    };
  }
  queued.push_back(std::move(p));
  return outside ? group_end_locked(lk) : ncclSuccess;
}

ncclResult_t ncclSend(const void* send, size_t count, ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t st) {
  return point_to_point(true, const_cast<void*>(send), count, t, peer, comm, st, "ncclSend");
}

ncclResult_t ncclRecv(void* recv, size_t count, ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t st) {
  return point_to_point(false, recv, count, t, peer, comm, st, "ncclRecv");
}

ncclResult_t ncclGroupStart() {
  fake::lock lk(fake::mutex());
  return group_start_locked();
}

ncclResult_t ncclGroupEnd() {
  fake::lock lk(fake::mutex());
  return group_end_locked(lk);
}
