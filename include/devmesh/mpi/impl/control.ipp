// devmesh/mpi/impl/control.ipp: control.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp), and the machinery every MPI call of the backend's
// implementation files shares: issue (blocking, or watched), bounded (a control step polled
// until its deadline), and what a call that timed out leaves to MPI (park).
#pragma once
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../control.hpp"
#include "../error.hpp"

namespace devmesh::mpi::detail {

/// What a call that timed out leaves to MPI (a control step, a watched collective, a roll
/// call's note): its requests and the buffers devmesh made for it, which MPI may still read
/// or write, kept alive and reachable until the process ends, in a list never freed (a list
/// of nodes, not a vector: one type less to instantiate in every TU, issue 21's include cost).
struct parked_call {
  std::shared_ptr<void> keep;
  std::unique_ptr<MPI_Request[]> requests;
  const parked_call* next;
};

DEVMESH_DECL void park(std::shared_ptr<void> keep, std::span<const MPI_Request> reqs) {
  static std::mutex m;
  static const parked_call* parked = nullptr;
  auto requests = std::make_unique_for_overwrite<MPI_Request[]>(reqs.size());
  std::copy(reqs.begin(), reqs.end(), requests.get());
  std::lock_guard lock(m);
  parked = new parked_call{std::move(keep), std::move(requests), parked};
}

// The three places a call that timed out leaves memory to MPI for good (send_note,
// start_watched, bounded) are plain functions of external linkage, never templates over a
// caller's lambda: their names then read the same in every build (a template over a lambda of
// a compiled function has internal linkage and symbolizes unqualified), and
// tests/sanitizers/lsan.supp names exactly them (scripts/sanitize checks they exist).

/// A roll call's note: "here, in call #seq" to rank r, fire and forget. The note's buffer
/// outlives the send (parked, a word per note); the send to a rank that never reads it stays
/// queued in MPI for good.
DEVMESH_DECL void send_note(MPI_Comm comm, int r, int tag, std::uint64_t seq) {
  auto note = std::make_unique<std::uint64_t>(seq);
  const std::uint64_t* word = note.get();
  park(std::move(note), {});
  MPI_Request req = MPI_REQUEST_NULL;
  if (MPI_Isend(word, 1, MPI_UINT64_T, r, tag, comm, &req) == MPI_SUCCESS) MPI_Request_free(&req);
}

/// The watchdog's roll call on one communicator: who says they are in call #seq. Each rank
/// that waits past a bound tells the others "here, in call #seq" (point-to-point on the
/// communicator, a tag of devmesh's own, which no collective matches), and answers such
/// notes from the others while it waits; a note for another call is stale and dropped.
class roll_call {
 public:
  static constexpr int tag = 0x6472;  // "dr"
  roll_call(const comm_handle& h, std::uint64_t seq)
      : h_(h), seq_(seq), here_(static_cast<std::size_t>(h.size()), 0), told_(here_.size(), 0) {
    here_[static_cast<std::size_t>(h.rank())] = 1;
  }
  /// Receives the notes that have arrived; answers each rank that is in this call.
  void listen() {
    for (;;) {
      int flag = 0;
      MPI_Status st;
      if (MPI_Iprobe(MPI_ANY_SOURCE, tag, h_.native(), &flag, &st) != MPI_SUCCESS || !flag) return;
      std::uint64_t seq = 0;
      if (MPI_Recv(&seq, 1, MPI_UINT64_T, st.MPI_SOURCE, tag, h_.native(), MPI_STATUS_IGNORE) != MPI_SUCCESS) return;
      if (seq != seq_) continue;
      here_[static_cast<std::size_t>(st.MPI_SOURCE)] = 1;
      tell(st.MPI_SOURCE);
    }
  }
  /// Tells every rank not told yet that this one is in the call.
  void tell_all() {
    for (int r = 0; r < h_.size(); ++r) tell(r);
  }
  /// The ranks that did not say they are in the call.
  std::vector<int> absent() const {
    std::vector<int> out;
    for (std::size_t r = 0; r < here_.size(); ++r)
      if (!here_[r]) out.push_back(static_cast<int>(r));
    return out;
  }

 private:
  void tell(int r) {
    auto& told = told_[static_cast<std::size_t>(r)];
    if (told || r == h_.rank()) return;
    told = 1;
    send_note(h_.native(), r, tag, seq_);
  }

  const comm_handle& h_;
  std::uint64_t seq_;
  std::vector<char> here_, told_;
};

/// The "gave up" notes: a rank whose watchdog ends a call tells every other rank of the group
/// "I gave up on call #seq" (point-to-point, a tag of devmesh's own, fire and forget); a late
/// rank whose call then completes reads them and fails too, so that every rank of the group
/// gets an error for the call, not only the ranks that waited.
inline constexpr int gave_up_tag = 0x6473;  // "ds"
DEVMESH_DECL void tell_gave_up(const comm_handle& h, std::uint64_t seq) {
  for (int r = 0; r < h.size(); ++r)
    if (r != h.rank()) send_note(h.native(), r, gave_up_tag, seq);
}
/// The ranks that said they gave up on call #seq (notes of other calls are stale: dropped).
DEVMESH_DECL std::vector<int> gave_up_on(const comm_handle& h, std::uint64_t seq) {
  std::vector<int> out;
  for (;;) {
    int flag = 0;
    MPI_Status st;
    if (MPI_Iprobe(MPI_ANY_SOURCE, gave_up_tag, h.native(), &flag, &st) != MPI_SUCCESS || !flag) break;
    std::uint64_t note = 0;
    if (MPI_Recv(&note, 1, MPI_UINT64_T, st.MPI_SOURCE, gave_up_tag, h.native(), MPI_STATUS_IGNORE) != MPI_SUCCESS)
      break;
    if (note == seq) out.push_back(st.MPI_SOURCE);
  }
  std::sort(out.begin(), out.end());
  return out;
}
/// A watched call completed on this rank: unless some rank gave up on it first, in which case
/// h is marked unusable and watchdog_timeout names them (the call's result is not delivered).
DEVMESH_DECL void check_not_given_up(const comm_handle& h, const char* call, const watched_call& watch) {
  std::vector<int> ranks = gave_up_on(h, watch.seq);
  if (ranks.empty()) return;
  h.mark_unusable(std::string(call) + " completed after other ranks' watchdogs had given up on it");
  throw watchdog_timeout("devmesh: mpi: " + std::string(call) + " on a communicator of " + std::to_string(h.size()) +
                             " ranks completed here after other ranks gave up on it (watchdog)",
                         {}, std::move(ranks));
}

/// Leaves `keep` (a Keep) to MPI with the requests of a call that timed out.
template <class Keep>
void park_keep(void* keep, std::span<const MPI_Request> reqs) {
  park(std::make_shared<Keep>(std::move(*static_cast<Keep*>(keep))), reqs);
}

/// The watchdog's wait (a collective issued non-blocking): polls `reqs` until they complete
/// or `watch.until` passes, holding a roll call once it has waited 10 ms. Past the deadline
/// it tells every rank it is here, listens for a grace of a tenth of the bound (at most 1 s),
/// leaves the requests and the call's own buffers to MPI (`leave(keep, reqs)`), marks h
/// unusable and throws watchdog_timeout with the ranks that never said they were in the
/// call. The caller's buffers stay MPI's too (docs/reliability.md: a late rank may still
/// complete it). One function for every element type (keep is type-erased).
DEVMESH_DECL void wait_watched(const comm_handle& h, const char* call, const watched_call& watch,
                               std::span<MPI_Request> reqs, void* keep,
                               void (*leave)(void*, std::span<const MPI_Request>)) {
  int done = 0;
  int rc = MPI_SUCCESS;
  const int n = static_cast<int>(reqs.size());
  const auto roll_from = std::chrono::steady_clock::now() + std::chrono::milliseconds(10);
  std::unique_ptr<roll_call> roll;  // held once the wait passes 10 ms
  auto test = [&] {
    if (rc == MPI_SUCCESS && !done) rc = MPI_Testall(n, reqs.data(), &done, MPI_STATUSES_IGNORE);
    return done != 0 || rc != MPI_SUCCESS;
  };
  devmesh::detail::poll_until(watch.until, [&] {
    if (test()) return true;
    if (!roll && std::chrono::steady_clock::now() >= roll_from)
      roll = std::make_unique<roll_call>(h, watch.seq);
    if (roll) roll->listen();
    return false;
  });
  check(rc, call);
  if (done) return check_not_given_up(h, call, watch);
  if (!roll) roll = std::make_unique<roll_call>(h, watch.seq);
  roll->tell_all();
  const auto grace = std::min<std::chrono::milliseconds>(std::chrono::milliseconds(1000), watch.until.bound / 10);
  devmesh::detail::poll_until(deadline::after(grace), [&] {
    roll->listen();
    return test();
  });
  check(rc, call);
  if (done) return check_not_given_up(h, call, watch);  // the late rank came during the grace
  h.mark_unusable(std::string(call) + " did not complete within the watchdog's " + watch.until.describe());
  tell_gave_up(h, watch.seq);
  leave(keep, reqs);
  throw watchdog_timeout("devmesh: mpi: " + std::string(call) + " on a communicator of " + std::to_string(h.size()) +
                             " ranks did not complete within " + watch.until.describe() + " (watchdog)",
                         roll->absent());
}

/// Starts one non-blocking collective (start(&request)) and waits for it under the watchdog
/// (wait_watched): what a watched collective that times out leaves to MPI is made here.
DEVMESH_DECL void start_watched(const comm_handle& h, const char* icall, const watched_call& watch,
                                devmesh::detail::function_ref<int(MPI_Request*)> start, void* keep,
                                void (*leave)(void*, std::span<const MPI_Request>)) {
  MPI_Request req = MPI_REQUEST_NULL;
  check(start(&req), icall);
  wait_watched(h, icall, watch, std::span<MPI_Request>(&req, 1), keep, leave);
}

/// The staging memory of a thread's watched calls (class staged), reused from call to call: a
/// fresh allocation per call cost page faults and made MPI meet new memory each time (a 1 MiB
/// all_reduce over 8 ranks took 3x its time here). It holds the largest call's bytes so far.
struct staging_memory {
  std::unique_ptr<unsigned char[]> bytes;
  std::size_t size = 0;
};
inline staging_memory& thread_staging() {
  thread_local staging_memory m;
  return m;
}

/// A watched call's own copies of the caller's buffers (issue 41): MPI reads the data from and
/// writes the result into memory devmesh owns, and the result is copied back once the call has
/// completed. A call the watchdog gives up on may still be completed by a late rank; its result
/// then lands in these copies, parked with the request (never freed), not in buffers the caller
/// has freed or reused since: the caller's output holds what it held before the call. Without a
/// watch nothing is copied (the blocking path, the common case, is unchanged).
class staged {
 public:
  staged() = default;
  /// Under a watch, points send (send_bytes; MPI_IN_PLACE and null stay) and recv (recv_bytes)
  /// at copies in the thread's staging memory; recv's bytes are copied in too where MPI reads
  /// them (`recv_read`: an in-place call, a broadcast).
  staged(const watched_call* watch, const void*& send, std::size_t send_bytes, void*& recv, std::size_t recv_bytes,
         bool recv_read) {
    const bool copy_send = send != nullptr && send != MPI_IN_PLACE && send_bytes > 0;
    if (!watch || (!copy_send && recv_bytes == 0)) return;
    staging_memory& cache = thread_staging();
    const std::size_t need = (copy_send ? send_bytes : 0) + recv_bytes;
    if (cache.size < need) cache.bytes = std::make_unique_for_overwrite<unsigned char[]>(need), cache.size = need;
    mem_ = std::move(cache.bytes), size_ = cache.size, cache.size = 0;
    if (recv_bytes > 0) {
      if (recv_read) std::memcpy(mem_.get(), recv, recv_bytes);
      out_ = recv, bytes_ = recv_bytes, recv = mem_.get();
    }
    if (copy_send) {
      std::memcpy(mem_.get() + recv_bytes, send, send_bytes);
      send = mem_.get() + recv_bytes;
    }
  }
  staged(staged&&) = default;
  staged& operator=(staged&&) = default;
  /// Memory whose call did not complete stays MPI's (parked), whatever ended it.
  ~staged() {
    if (mem_) park(std::shared_ptr<unsigned char[]>(std::move(mem_)), {});
  }
  /// The call completed: its result into the caller's buffer, the memory back to the thread.
  void finish() {
    if (!mem_) return;
    if (bytes_ > 0) std::memcpy(out_, mem_.get(), bytes_);
    staging_memory& cache = thread_staging();
    if (cache.size < size_) cache.bytes = std::move(mem_), cache.size = size_;
    mem_.reset();
  }

 private:
  std::unique_ptr<unsigned char[]> mem_;
  std::size_t size_ = 0;
  void* out_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Makes one collective: blocking (watch == nullptr, the common case), or, under the
/// watchdog, non-blocking and waited for until *watch (control.hpp's wait_watched; `keep`:
/// the call's own buffers, left to MPI with the request if it times out).
template <class Blocking, class Start, class Keep>
void issue(const comm_handle& h, const char* call, const char* icall, const watched_call* watch, Blocking&& blocking,
           Start&& start, Keep& keep) {
  if (!watch) [[likely]]
    return check(blocking(), call);
  start_watched(h, icall, *watch, start, &keep, &park_keep<Keep>);
}

/// Starts a non-blocking call on a heap buffer (start(buf, &request)) and polls it until
/// done or the deadline, then finish(buf). On time-out the request and its buffer are left
/// to MPI (MPI may still complete them: they are parked, never freed), `h` is marked
/// unusable, and timeout_error is thrown.
DEVMESH_DECL void bounded(const comm_handle& h, const char* call, const deadline& d,
                          std::unique_ptr<unsigned char[]> buf,
                          devmesh::detail::function_ref<int(unsigned char*, MPI_Request*)> start,
                          devmesh::detail::function_ref<void(const unsigned char*)> finish) {
  MPI_Request req = MPI_REQUEST_NULL;
  check(start(buf.get(), &req), call);
  int done = 0;
  int rc = MPI_SUCCESS;
  devmesh::detail::poll_until(d, [&] {
    if (rc == MPI_SUCCESS && !done) rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    return done != 0 || rc != MPI_SUCCESS;
  });
  check(rc, call);
  if (!done) {
    h.mark_unusable(std::string(call) + " timed out after " + d.describe());
    park(std::shared_ptr<unsigned char[]>(std::move(buf)), std::span<const MPI_Request>(&req, 1));
    throw timeout_error("devmesh: mpi: " + std::string(call) + " on a communicator of " + std::to_string(h.size()) +
                        " ranks: not every rank arrived within " + d.describe() +
                        " (a rank skipped this step, is blocked elsewhere, or died)");
  }
  finish(buf.get());
}

/// n bytes from every rank of h, in rank order, into out (MPI_Iallgather, bounded).
DEVMESH_DECL void all_gather_bytes(const comm_handle& h, const void* in, void* out, std::size_t n,
                                   const deadline& d) {
  const MPI_Comm comm = h.use("all_gather_bytes");
  const int c = int_count("all_gather_bytes", n);
  const std::size_t total = n * static_cast<std::size_t>(h.size());
  auto buf = std::make_unique<unsigned char[]>(n + total);  // MPI owns it until completion
  std::memcpy(buf.get(), in, n);
  bounded(h, "MPI_Iallgather", d, std::move(buf), [&](unsigned char* b, MPI_Request* r) {
    return MPI_Iallgather(b, c, MPI_BYTE, b + n, c, MPI_BYTE, comm, r);
  }, [&](const unsigned char* b) { std::memcpy(out, b + n, total); });
}

/// Element-wise maximum of n words over every rank of h, in place (MPI_Iallreduce, bounded).
DEVMESH_DECL void all_reduce_max(const comm_handle& h, std::uint64_t* words, std::size_t n, const deadline& d) {
  const MPI_Comm comm = h.use("all_reduce_max");
  const int c = int_count("all_reduce_max", n);
  auto buf = std::make_unique<unsigned char[]>(n * sizeof(std::uint64_t));
  std::memcpy(buf.get(), words, n * sizeof(std::uint64_t));
  bounded(h, "MPI_Iallreduce", d, std::move(buf), [&](unsigned char* b, MPI_Request* r) {
    return MPI_Iallreduce(MPI_IN_PLACE, b, c, MPI_UINT64_T, MPI_MAX, comm, r);
  }, [&](const unsigned char* b) { std::memcpy(words, b, n * sizeof(std::uint64_t)); });
}

/// MPI_Comm_idup of h, bounded, running `meanwhile()` once while it is in flight: local work
/// hidden behind the communication. The copy owns its MPI_Comm and returns errors. An
/// exception from meanwhile is rethrown once the idup is done (the request is never left
/// behind), after the copy is adopted, so that it is freed.
DEVMESH_DECL comm_handle duplicate(const comm_handle& h, const deadline& d,
                                   devmesh::detail::call_ref<void> meanwhile) {
  const MPI_Comm comm = h.use("duplicate");
  auto out = std::make_unique<unsigned char[]>(sizeof(MPI_Comm));  // MPI writes the handle here
  MPI_Comm* dup = reinterpret_cast<MPI_Comm*>(out.get());
  *dup = MPI_COMM_NULL;
  MPI_Comm result = MPI_COMM_NULL;
  std::exception_ptr failed;
  bounded(h, "MPI_Comm_idup", d, std::move(out), [&](unsigned char*, MPI_Request* r) {
    const int rc = MPI_Comm_idup(comm, dup, r);
    if (rc == MPI_SUCCESS) try {
        meanwhile();
      } catch (...) {
        failed = std::current_exception();
      }
    return rc;
  }, [&](const unsigned char* b) { std::memcpy(&result, b, sizeof result); });
  comm_handle c = comm_handle::adopt(result);
  if (failed) std::rethrow_exception(failed);
  return c;
}

}  // namespace devmesh::mpi::detail
