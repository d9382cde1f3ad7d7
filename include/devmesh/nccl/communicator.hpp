// devmesh/nccl/communicator.hpp: dm::nccl::communicator, an RAII ncclComm_t that
// satisfies dm::communicator.
//
// Non-blocking communicators (the default, options::blocking == false) make every NCCL
// call return ncclInProgress; devmesh then polls with options::timeout and, on timeout or
// async error, aborts and throws dm::comm_error. Collectives only *enqueue* work on the
// caller's stream: the timeout bounds the enqueue, not the kernel.
//
// A thin class over its rooms: handle.hpp (the ncclComm_t, its ownership and the check
// every call starts with), enqueue.hpp (when enqueued work settles; groups), control.hpp
// (devmesh's control steps), split.hpp (new communicators), collectives.hpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "../runtime/backend.hpp"
#include "../runtime/deadline.hpp"
#include "../runtime/element_type.hpp"
#include "collectives.hpp"
#include "collectives_v.hpp"
#include "control.hpp"
#include "device_memory.hpp"
#include "enqueue.hpp"
#include "handle.hpp"
#include "host_channel.hpp"
#include "options.hpp"
#include "split.hpp"
#include "types.hpp"
#include "watch.hpp"

namespace devmesh::nccl {

/// An NCCL communicator (ncclComm_t): move-only; owning (adopt, split: finalized and
/// destroyed at destruction) or borrowed. Collectives are enqueued on a cudaStream_t.
class communicator {
 public:
  using native_type = ncclComm_t;
  using options_type = options;
  using stream_type = cudaStream_t;
  using memory_space = detail::device_memory;  // redistribute's blocks: device memory, this stream

  /// An invalid communicator (what split() returns to ranks with dm::no_color).
  communicator() = default;
  /// Takes over the other's ncclComm_t; the other becomes invalid.
  communicator(communicator&&) noexcept = default;
  /// Ends this communicator (if it owns one), then takes over o's; o becomes invalid.
  communicator& operator=(communicator&& o) noexcept = default;
  /// Finalizes and destroys the ncclComm_t if owned.
  ~communicator() = default;

  /// Takes ownership of `comm` (it will be finalized and destroyed).
  static communicator adopt(ncclComm_t comm, options opts = {}) {
    return communicator(detail::comm_handle(comm, std::move(opts), true, nullptr));
  }
  /// Wraps `comm` without owning it: the caller keeps ending it.
  static communicator borrow(ncclComm_t comm, options opts = {}) {
    return communicator(detail::comm_handle(comm, std::move(opts), false, nullptr));
  }

  /// False for a default-constructed, moved-from or non-member (no_color) communicator.
  bool valid() const { return h_.valid(); }
  /// True after abort() or after a failure that aborted this communicator.
  bool aborted() const { return h_.aborted(); }
  /// Rank in this communicator (-1 if invalid).
  int rank() const { return h_.rank(); }
  /// Number of ranks (0 if invalid).
  int size() const { return h_.size(); }
  /// The ncclComm_t (nullptr if invalid); this object keeps ownership.
  ncclComm_t native() const { return h_.native(); }
  /// The options it was created with.
  const options& opts() const { return h_.opts(); }
  /// True when a host (MPI) channel backs all_gather_bytes and the outcome agreement.
  bool has_host_channel() const { return h_.has_host_channel(); }

  /// "nccl": the backend's name in messages and in the consistency check.
  static const char* backend_name() { return "nccl"; }

  /// ncclCommAbort: ends pending work and frees the communicator; never throws.
  void abort() noexcept { h_.abort(); }
  /// abort(), and every later call's comm_error says `why` (the watchdog's reason).
  void abort(const std::string& why) noexcept { h_.abort(why.c_str()); }

  // ---- the watchdog (runtime/impl/stream_watchdog.hpp) ---------------------------------------
  /// Collectives run on streams: the watchdog watches each through an event recorded after it
  /// (the last argument of every typed collective, a watch*).
  static constexpr bool stream_watchable = true;
  using watch_type = watch;
  using event_type = cudaEvent_t;
  /// 1 when the work before e is done, 0 while it is not, -1 when CUDA reports an error.
  static int query_event(cudaEvent_t e) noexcept {
    const cudaError_t r = cudaEventQuery(e);
    return r == cudaSuccess ? 1 : r == cudaErrorNotReady ? 0 : -1;
  }
  /// cudaEventDestroy (null: nothing).
  static void destroy_event(cudaEvent_t e) noexcept {
    if (e) cudaEventDestroy(e);
  }
  /// The watchdog's roll call over the host channel, from the watchdog's thread: why it cannot
  /// be held here ("" when it can), a note of two words to rank `to`, the next note received
  /// (false: none). Never blocks.
  std::string roll_call_unavailable() const { return detail::notes_unavailable(h_); }
  /// Sends the note `words` to rank `to` (fire and forget); false when it cannot.
  bool post_note(int to, const std::uint64_t (&words)[2]) const noexcept { return detail::post_note(h_, to, words); }
  /// The next note received into `words`, its sender into `from`; false: none.
  bool take_note(int& from, std::uint64_t (&words)[2]) const noexcept { return detail::take_note(h_, from, words); }

  /// ncclCommSplit, collective over this communicator. color >= 0 or dm::no_color
  /// (NCCL_SPLIT_NOCOLOR: the result is invalid); key orders ranks in the new communicator.
  /// On failure or timeout anywhere, the new communicator and this one are aborted and
  /// comm_error is thrown (on every rank when a host channel lets the ranks agree).
  communicator split(int color, int key, const options& o) const {
    return communicator(detail::split(h_, color, key, o));
  }
  /// devmesh's control plane on NCCL: a borrowed alias of this ncclComm_t (a new NCCL
  /// communicator would cost GPU memory) with a private copy of the host channel (bounded
  /// MPI_Comm_idup), so that each mesh's control steps are its own. Its splits are splits
  /// of this communicator. Without a host channel (world_from_env) the alias shares this
  /// communicator's NCCL traffic.
  communicator duplicate(const deadline& d = deadline::never()) const {
    return communicator(detail::duplicate(h_, d));
  }

  // ---- consistency check --------------------------------------------------------------
  /// n bytes from every rank, gathered in rank order into `out` (host memory). Over the
  /// host channel when this communicator has one (the MPI world it was bootstrapped from),
  /// else an ncclAllGather through a temporary device buffer on the default stream.
  void all_gather_bytes(const void* in, void* out, std::size_t n, const deadline& d = deadline::never()) const {
    detail::all_gather_bytes(h_, in, out, n, d);
  }
  /// Element-wise maximum of n words over every rank, in place: over the host channel
  /// when there is one (bounded by `d`), else an ncclAllReduce through a device buffer
  /// (bounded by the options' timeout while enqueueing).
  void all_reduce_max(std::uint64_t* words, std::size_t n, const deadline& d = deadline::never()) const {
    detail::all_reduce_max(h_, words, n, d);
  }

  // ---- groups -------------------------------------------------------------------------
  /// ncclGroupStart: calls until the matching group_end() are batched (across
  /// communicators too). Prefer the RAII dm::nccl::group.
  static void group_start() { detail::group_start(); }
  /// ncclGroupEnd; for the outermost group, waits (bounded) for the non-blocking
  /// communicators used inside it, and aborts them all if one fails or times out.
  static void group_end() { detail::group_end(); }

  // ---- collectives (see backend.hpp) --------------------------------------------------
  // Each over an element type given as a value (runtime/element_type.hpp), then the same over
  // T (element_of<T>: a static_assert naming T when NCCL has no datatype for it).
  /// True if NCCL has a datatype for T (runtime/backend.hpp).
  template <class T>
  static constexpr bool carries = has_datatype<T>;
  /// ncclAllReduce of count elements, enqueued on s. Partially overlapping send and recv
  /// (identical ones are in place) reduce from a copy.
  void all_reduce(const void* send, void* recv, std::size_t count, element_type t, op o, stream_type s,
                  watch* w = nullptr) const {
    detail::all_reduce(h_, send, recv, count, t, o, s, w);
  }
  /// all_reduce over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void all_reduce(const T* send, T* recv, std::size_t count, op o, stream_type s, watch* w = nullptr) const {
    all_reduce(send, recv, count, element_of<T>(), o, s, w);
  }
  /// ncclReduce of count elements onto rank root, enqueued on s.
  void reduce(const void* send, void* recv, std::size_t count, element_type t, op o, int root, stream_type s,
              watch* w = nullptr) const {
    detail::reduce(h_, send, recv, count, t, o, root, s, w);
  }
  /// reduce over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void reduce(const T* send, T* recv, std::size_t count, op o, int root, stream_type s, watch* w = nullptr) const {
    reduce(send, recv, count, element_of<T>(), o, root, s, w);
  }
  /// ncclBroadcast of count elements from rank root, in place, enqueued on s.
  void broadcast(void* buf, std::size_t count, element_type t, int root, stream_type s, watch* w = nullptr) const {
    detail::broadcast(h_, buf, count, t, root, s, w);
  }
  /// broadcast over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void broadcast(T* buf, std::size_t count, int root, stream_type s, watch* w = nullptr) const {
    broadcast(buf, count, element_of<T>(), root, s, w);
  }
  /// ncclAllGather: send_count elements from each rank into recv, in rank order, on s.
  void all_gather(const void* send, void* recv, std::size_t send_count, element_type t, stream_type s,
                  watch* w = nullptr) const {
    detail::all_gather(h_, send, recv, send_count, t, s, w);
  }
  /// all_gather over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void all_gather(const T* send, T* recv, std::size_t send_count, stream_type s, watch* w = nullptr) const {
    all_gather(send, recv, send_count, element_of<T>(), s, w);
  }
  /// ncclReduceScatter: block rank() of the reduction, recv_count elements, on s.
  void reduce_scatter(const void* send, void* recv, std::size_t recv_count, element_type t, op o, stream_type s,
                      watch* w = nullptr) const {
    detail::reduce_scatter(h_, send, recv, recv_count, t, o, s, w);
  }
  /// reduce_scatter over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void reduce_scatter(const T* send, T* recv, std::size_t recv_count, op o, stream_type s, watch* w = nullptr) const {
    reduce_scatter(send, recv, recv_count, element_of<T>(), o, s, w);
  }
  /// count_per_rank elements to and from every rank, as one group of ncclSend/ncclRecv.
  /// Overlapping send and recv (in place) go through a temporary device copy of send.
  void all_to_all(const void* send, void* recv, std::size_t count_per_rank, element_type t, stream_type s,
                  watch* w = nullptr) const {
    detail::all_to_all(h_, send, recv, count_per_rank, t, s, w);
  }
  /// all_to_all over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void all_to_all(const T* send, T* recv, std::size_t count_per_rank, stream_type s, watch* w = nullptr) const {
    all_to_all(send, recv, count_per_rank, element_of<T>(), s, w);
  }
  /// send_counts[j] elements to rank j from send + send_at[j], recv_counts[i] from rank i to
  /// recv + recv_at[i] (empty displacements: packed in rank order), as one group of
  /// ncclSend/ncclRecv (a zero count: no call). Overlapping send and recv go through a
  /// temporary device copy of send.
  void all_to_allv(const void* send, std::span<const std::size_t> send_counts, std::span<const std::size_t> send_at,
                   void* recv, std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_at,
                   element_type t, stream_type s, watch* w = nullptr) const {
    detail::all_to_allv(h_, send, send_counts, send_at, recv, recv_counts, recv_at, t, s, w);
  }
  /// all_to_allv over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void all_to_allv(const T* send, std::span<const std::size_t> send_counts, std::span<const std::size_t> send_at,
                   T* recv, std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_at,
                   stream_type s, watch* w = nullptr) const {
    all_to_allv(send, send_counts, send_at, recv, recv_counts, recv_at, element_of<T>(), s, w);
  }
  /// The reduction of every rank's send (blocks packed in rank order, recv_counts[i]
  /// elements for rank i); this rank's block lands in recv. One group of ncclReduce, one per
  /// rank as its block's root (NCCL has no reduce-scatter of uneven blocks).
  void reduce_scatterv(const void* send, void* recv, std::span<const std::size_t> recv_counts, element_type t, op o,
                       stream_type s, watch* w = nullptr) const {
    detail::reduce_scatterv(h_, send, recv, recv_counts, t, o, s, w);
  }
  /// reduce_scatterv over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void reduce_scatterv(const T* send, T* recv, std::span<const std::size_t> recv_counts, op o, stream_type s,
                       watch* w = nullptr) const {
    reduce_scatterv(send, recv, recv_counts, element_of<T>(), o, s, w);
  }
  /// A host barrier: a one-element all-reduce, then the stream is synchronized (under the
  /// watchdog, w: by the runtime, watched).
  void barrier(stream_type s, watch* w = nullptr) const { detail::barrier(h_, s, w); }
  /// Sends to `dest` and receives from `source` (either may be -1: none), as one group.
  void sendrecv(const void* send, std::size_t send_count, int dest, void* recv, std::size_t recv_count, int source,
                element_type t, stream_type s, watch* w = nullptr) const {
    detail::sendrecv(h_, send, send_count, dest, recv, recv_count, source, t, s, w);
  }
  /// sendrecv over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void sendrecv(const T* send, std::size_t send_count, int dest, T* recv, std::size_t recv_count, int source,
                stream_type s, watch* w = nullptr) const {
    sendrecv(send, send_count, dest, recv, recv_count, source, element_of<T>(), s, w);
  }

 private:
  friend communicator make_communicator(ncclComm_t, options, std::shared_ptr<const detail::host_channel>);

  explicit communicator(detail::comm_handle h) noexcept : h_(std::move(h)) {}

  detail::comm_handle h_;
};

/// A communicator owning `comm` with a host channel (used by the bootstraps).
inline communicator make_communicator(ncclComm_t comm, options opts, std::shared_ptr<const detail::host_channel> ch) {
  return communicator(detail::comm_handle(comm, std::move(opts), true, std::move(ch)));
}

static_assert(devmesh::communicator<communicator>);

}  // namespace devmesh::nccl
