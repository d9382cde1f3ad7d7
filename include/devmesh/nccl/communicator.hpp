// devmesh/nccl/communicator.hpp: dm::nccl::communicator, an RAII ncclComm_t that
// satisfies dm::communicator.
//
// Ownership: a communicator made by world(), split() or adopt() owns its ncclComm_t and
// ends it with ncclCommFinalize then ncclCommDestroy; after a failure (abort(), a timeout,
// an async error) it has been ncclCommAbort'ed and the destructor frees nothing twice.
// borrow() wraps a handle someone else ends. The state lives on the heap so a moved-from
// communicator is simply empty (valid() == false) and pending group work keeps a stable
// address.
//
// Non-blocking communicators (the default, options::blocking == false) make every NCCL
// call return ncclInProgress; devmesh then polls with options::timeout and, on timeout or
// async error, aborts and throws dm::comm_error. Collectives only *enqueue* work on the
// caller's stream: the timeout bounds the enqueue, not the kernel.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "../runtime/backend.hpp"
#include "../core/diagnostics.hpp"
#include "error.hpp"
#include "host_channel.hpp"
#include "options.hpp"
#include "types.hpp"
#include "wait.hpp"

namespace devmesh::nccl {

class communicator;

namespace detail {

struct comm_state {
  ncclComm_t comm = nullptr;
  int rank = -1;
  int size = 0;
  options opts;
  bool owned = true;
  bool aborted = false;
  void* scratch = nullptr;  // one device int for barrier(), allocated on first use
  std::shared_ptr<const host_channel> channel;

  std::string label() const {
    std::string name = opts.name.empty() ? std::string("nccl communicator") : "'" + opts.name + "'";
    return name + " (rank " + std::to_string(rank) + " of " + std::to_string(size) + ")";
  }

  void abort() noexcept {
    if (comm && owned) ncclCommAbort(comm);
    if (comm) aborted = true;
    comm = nullptr;
  }

  // Finalize (flushes this rank's work), then destroy; abort when finalize fails or does
  // not settle within the timeout.
  void end() noexcept {
    if (comm && owned) {
      ncclResult_t r = ncclCommFinalize(comm);
      if (r == ncclInProgress || (r == ncclSuccess && !opts.blocking)) r = wait_all({comm}, opts.timeout).result;
      if (r == ncclSuccess)
        ncclCommDestroy(comm);
      else
        ncclCommAbort(comm);
    }
    comm = nullptr;
    if (scratch) cudaFree(scratch);
    scratch = nullptr;
  }
};

// Per-thread mirror of the NCCL group depth, and the non-blocking communicators whose
// calls inside the group returned ncclInProgress: group_end() waits for them.
struct group_registry {
  int depth = 0;
  std::vector<comm_state*> pending;
};
inline group_registry& groups() {
  thread_local group_registry g;
  return g;
}

inline void add_pending(comm_state* s) {
  auto& p = groups().pending;
  for (auto* q : p)
    if (q == s) return;
  p.push_back(s);
}

}  // namespace detail

/// An NCCL communicator (ncclComm_t): move-only; owning (adopt, split: finalized and
/// destroyed at destruction) or borrowed. Collectives are enqueued on a cudaStream_t.
class communicator {
 public:
  using native_type = ncclComm_t;
  using options_type = options;
  using stream_type = cudaStream_t;

  /// An invalid communicator (what split() returns to ranks with dm::no_color).
  communicator() = default;
  /// Takes over the other's ncclComm_t; the other becomes invalid.
  communicator(communicator&&) noexcept = default;
  /// Ends this communicator (if it owns one), then takes over o's; o becomes invalid.
  communicator& operator=(communicator&& o) noexcept {
    if (this != &o) {
      if (st_) st_->end();
      st_ = std::move(o.st_);
    }
    return *this;
  }
  /// Finalizes and destroys the ncclComm_t if owned.
  ~communicator() {
    if (st_) st_->end();
  }

  /// Takes ownership of `comm` (it will be finalized and destroyed).
  static communicator adopt(ncclComm_t comm, options opts = {}) { return communicator(comm, std::move(opts), true, nullptr); }
  /// Wraps `comm` without owning it: the caller keeps ending it.
  static communicator borrow(ncclComm_t comm, options opts = {}) { return communicator(comm, std::move(opts), false, nullptr); }

  /// False for a default-constructed, moved-from or non-member (no_color) communicator.
  bool valid() const { return st_ && st_->comm != nullptr; }
  /// True after abort() or after a failure that aborted this communicator.
  bool aborted() const { return st_ && st_->aborted; }
  /// Rank in this communicator (-1 if invalid).
  int rank() const { return st_ ? st_->rank : -1; }
  /// Number of ranks (0 if invalid).
  int size() const { return st_ ? st_->size : 0; }
  /// The ncclComm_t (nullptr if invalid); this object keeps ownership.
  ncclComm_t native() const { return st_ ? st_->comm : nullptr; }
  /// The options it was created with.
  const options& opts() const {
    static const options none{};
    return st_ ? st_->opts : none;
  }
  /// True when a host (MPI) channel backs all_gather_bytes and the outcome agreement.
  bool has_host_channel() const { return st_ && st_->channel; }

  /// "nccl": the backend's name in messages and in the consistency check.
  static const char* backend_name() { return "nccl"; }

  /// ncclCommAbort: ends pending work and frees the communicator; never throws.
  void abort() noexcept {
    if (st_) st_->abort();
  }

  // ---- split --------------------------------------------------------------------------
  /// ncclCommSplit, collective over this communicator. color >= 0 or dm::no_color
  /// (NCCL_SPLIT_NOCOLOR: the result is invalid); key orders ranks in the new communicator.
  /// On failure or timeout anywhere, the new communicator and this one are aborted and
  /// comm_error is thrown (on every rank when a host channel lets the ranks agree).
  communicator split(int color, int key, const options& o) const {
    require_valid("ncclCommSplit");
    const std::string call = "ncclCommSplit(color=" + std::to_string(color) + ", key=" + std::to_string(key) +
                             (o.name.empty() ? std::string() : ", commName='" + o.name + "'") + ") of " +
                             st_->label();
    if (color < 0 && color != no_color)
      throw comm_error("devmesh: " + call + ": color must be >= 0 or dm::no_color");
    ncclConfig_t cfg = to_config(o);
    ncclComm_t child = nullptr;
    ncclResult_t r = ncclCommSplit(st_->comm, color == no_color ? NCCL_SPLIT_NOCOLOR : color, key, &child, &cfg);
    detail::wait_result w{r, st_->comm, false};
    if (r == ncclInProgress || (r == ncclSuccess && !(o.blocking && st_->opts.blocking)))
      w = detail::wait_all({st_->opts.blocking ? nullptr : st_->comm, child}, std::min(o.timeout, st_->opts.timeout));
    std::string local = w.timed_out ? "timed out after " + std::to_string(std::min(o.timeout, st_->opts.timeout).count()) + " ms"
                        : w.result != ncclSuccess ? detail::describe(w.result, w.comm ? w.comm : st_->comm)
                                                  : std::string();
    detail::rank_outcome mine{static_cast<int>(w.timed_out                ? detail::outcome::timed_out
                                               : w.result != ncclSuccess ? detail::outcome::failed
                                                                         : detail::outcome::ok),
                              static_cast<int>(w.result)};
    agree(mine, call, local, [&]() noexcept {
      if (child) ncclCommAbort(child);
      child = nullptr;
    });
    // The child's host channel: the parent's split alike, so that its control steps
    // (outcome agreement, the collective check mode) stay on the host.
    std::shared_ptr<const detail::host_channel> channel;
    if (st_->channel) channel = st_->channel->split(child ? color : no_color, key);
    if (!child) return communicator();  // no_color
    return communicator(child, o, true, std::move(channel));
  }

  /// devmesh's control plane on NCCL: a borrowed alias of this ncclComm_t (a new NCCL
  /// communicator would cost GPU memory) with a private copy of the host channel (bounded
  /// MPI_Comm_idup), so that each mesh's control steps are its own. Its splits are splits
  /// of this communicator. Without a host channel (world_from_env) the alias shares this
  /// communicator's NCCL traffic.
  communicator duplicate(const deadline& d = deadline::never()) const {
    require_valid("duplicate");
    return communicator(st_->comm, st_->opts, false, st_->channel ? st_->channel->duplicate(d) : nullptr);
  }

  // ---- consistency check --------------------------------------------------------------
  /// n bytes from every rank, gathered in rank order into `out` (host memory). Over the
  /// host channel when this communicator has one (the MPI world it was bootstrapped from),
  /// else an ncclAllGather through a temporary device buffer on the default stream.
  void all_gather_bytes(const void* in, void* out, std::size_t n, const deadline& d = deadline::never()) const {
    require_valid("all_gather_bytes");
    if (st_->channel) return st_->channel->all_gather_bytes(in, out, n, d);
    const std::size_t total = n * static_cast<std::size_t>(st_->size);
    device_buffer buf(total + n);
    auto* base = static_cast<unsigned char*>(buf.ptr);
    detail::check_cuda(cudaMemcpy(base + total, in, n, cudaMemcpyHostToDevice), "cudaMemcpy (all_gather_bytes)");
    enqueued("ncclAllGather (all_gather_bytes)", ncclAllGather(base + total, base, n, ncclUint8, st_->comm, nullptr));
    detail::check_cuda(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize (all_gather_bytes)");
    detail::check_cuda(cudaMemcpy(out, base, total, cudaMemcpyDeviceToHost), "cudaMemcpy (all_gather_bytes)");
  }

  /// Element-wise maximum of n words over every rank, in place: over the host channel
  /// when there is one (bounded by `d`), else an ncclAllReduce through a device buffer
  /// (bounded by the options' timeout while enqueueing).
  void all_reduce_max(std::uint64_t* words, std::size_t n, const deadline& d = deadline::never()) const {
    require_valid("all_reduce_max");
    if (st_->channel) return st_->channel->all_reduce_max(words, n, d);
    const std::size_t bytes = n * sizeof(std::uint64_t);
    device_buffer buf(bytes);
    detail::check_cuda(cudaMemcpy(buf.ptr, words, bytes, cudaMemcpyHostToDevice), "cudaMemcpy (all_reduce_max)");
    enqueued("ncclAllReduce (all_reduce_max)", ncclAllReduce(buf.ptr, buf.ptr, n, ncclUint64, ncclMax, st_->comm, nullptr));
    detail::check_cuda(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize (all_reduce_max)");
    detail::check_cuda(cudaMemcpy(words, buf.ptr, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy (all_reduce_max)");
  }

  // ---- groups -------------------------------------------------------------------------
  /// ncclGroupStart: calls until the matching group_end() are batched (across
  /// communicators too). Prefer the RAII dm::nccl::group.
  static void group_start() {
    ncclResult_t r = ncclGroupStart();
    if (r != ncclSuccess) detail::throw_nccl("ncclGroupStart", r, nullptr);
    ++detail::groups().depth;
  }
  /// ncclGroupEnd; for the outermost group, waits (bounded) for the non-blocking
  /// communicators used inside it, and aborts them all if one fails or times out.
  static void group_end() {
    auto& g = detail::groups();
    ncclResult_t r = ncclGroupEnd();
    if (g.depth > 0) --g.depth;
    if (g.depth > 0) {
      if (r != ncclSuccess && r != ncclInProgress) detail::throw_nccl("ncclGroupEnd (nested)", r, nullptr);
      return;
    }
    std::vector<detail::comm_state*> pending = std::move(g.pending);
    g.pending.clear();
    if (r != ncclSuccess && r != ncclInProgress) {
      for (auto* s : pending) s->abort();
      detail::throw_nccl("ncclGroupEnd", r, nullptr);
    }
    if (pending.empty()) return;
    std::vector<ncclComm_t> comms;
    auto timeout = pending.front()->opts.timeout;
    for (auto* s : pending) {
      comms.push_back(s->comm);
      timeout = std::max(timeout, s->opts.timeout);
    }
    detail::wait_result w = detail::wait_all(comms, timeout);
    if (w.timed_out || w.result != ncclSuccess) {
      std::string what = w.timed_out ? "timed out after " + std::to_string(timeout.count()) + " ms"
                                     : detail::describe(w.result, w.comm);
      std::string names;
      for (auto* s : pending) {
        names += (names.empty() ? "" : ", ") + s->label();
        s->abort();
      }
      throw comm_error("devmesh: ncclGroupEnd over " + names + ": " + what + "; aborted every communicator of the group");
    }
  }

  // ---- typed collectives (see backend.hpp) ---------------------------------------------
  /// Partially overlapping send and recv (identical ones are in place) reduce from a copy.
  template <class T>
  void all_reduce(const T* send, T* recv, std::size_t count, op o, stream_type s) const {
    require_valid("ncclAllReduce");
    require_avg_type<T>("ncclAllReduce", o);
    send_copy<T> copy(send, recv, count, s);
    enqueued("ncclAllReduce", ncclAllReduce(copy.send, recv, count, datatype<T>, redop(o), st_->comm, s));
    copy.settle(s);
  }
  /// ncclReduce of count elements onto rank root, enqueued on s.
  template <class T>
  void reduce(const T* send, T* recv, std::size_t count, op o, int root, stream_type s) const {
    require_valid("ncclReduce");
    require_avg_type<T>("ncclReduce", o);
    require_rank("ncclReduce", "root", root);
    send_copy<T> copy(send, recv, count, s);
    enqueued("ncclReduce", ncclReduce(copy.send, recv, count, datatype<T>, redop(o), root, st_->comm, s));
    copy.settle(s);
  }
  /// ncclBroadcast of count elements from rank root, in place, enqueued on s.
  template <class T>
  void broadcast(T* buf, std::size_t count, int root, stream_type s) const {
    require_valid("ncclBroadcast");
    require_rank("ncclBroadcast", "root", root);
    enqueued("ncclBroadcast", ncclBroadcast(buf, buf, count, datatype<T>, root, st_->comm, s));
  }
  /// ncclAllGather: send_count elements from each rank into recv, in rank order, on s.
  template <class T>
  void all_gather(const T* send, T* recv, std::size_t send_count, stream_type s) const {
    require_valid("ncclAllGather");
    enqueued("ncclAllGather", ncclAllGather(send, recv, send_count, datatype<T>, st_->comm, s));
  }
  /// ncclReduceScatter: block rank() of the reduction, recv_count elements, on s.
  template <class T>
  void reduce_scatter(const T* send, T* recv, std::size_t recv_count, op o, stream_type s) const {
    require_valid("ncclReduceScatter");
    require_avg_type<T>("ncclReduceScatter", o);
    enqueued("ncclReduceScatter", ncclReduceScatter(send, recv, recv_count, datatype<T>, redop(o), st_->comm, s));
  }
  /// count_per_rank elements to and from every rank, as one group of ncclSend/ncclRecv.
  /// In place (send == recv) goes through a temporary device copy of send.
  template <class T>
  void all_to_all(const T* send, T* recv, std::size_t count_per_rank, stream_type s) const {
    require_valid("all_to_all");
    constexpr ncclDataType_t t = datatype<T>;
    const std::size_t n = static_cast<std::size_t>(st_->size);
    device_buffer copy(send == recv ? n * count_per_rank * sizeof(T) : 0);
    if (copy.ptr) {
      detail::check_cuda(cudaMemcpyAsync(copy.ptr, send, n * count_per_rank * sizeof(T), cudaMemcpyDeviceToDevice, s),
                         "cudaMemcpyAsync (in-place all_to_all)");
      send = static_cast<const T*>(copy.ptr);
    }
    group_start();
    try {
      for (std::size_t p = 0; p < n; ++p) {
        enqueued("ncclSend (all_to_all)",
                 ncclSend(send + p * count_per_rank, count_per_rank, t, static_cast<int>(p), st_->comm, s));
        enqueued("ncclRecv (all_to_all)",
                 ncclRecv(recv + p * count_per_rank, count_per_rank, t, static_cast<int>(p), st_->comm, s));
      }
    } catch (...) {
      try { group_end(); } catch (...) {}
      throw;
    }
    group_end();
    // The temporary must outlive the kernels that read it.
    if (copy.ptr) detail::check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize (in-place all_to_all)");
  }
  /// A host barrier: a one-element all-reduce, then the stream is synchronized.
  void barrier(stream_type s) const {
    require_valid("barrier");
    if (!st_->scratch) {
      detail::check_cuda(cudaMalloc(&st_->scratch, sizeof(int)), "cudaMalloc (barrier)");
      detail::check_cuda(cudaMemset(st_->scratch, 0, sizeof(int)), "cudaMemset (barrier)");
    }
    enqueued("ncclAllReduce (barrier)", ncclAllReduce(st_->scratch, st_->scratch, 1, ncclInt32, ncclSum, st_->comm, s));
    if (detail::groups().depth == 0) detail::check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize (barrier)");
  }
  /// Sends to `dest` and receives from `source` (either may be -1: none), as one group.
  template <class T>
  void sendrecv(const T* send, std::size_t send_count, int dest, T* recv, std::size_t recv_count, int source,
                stream_type s) const {
    require_valid("sendrecv");
    if (dest != -1) require_rank("ncclSend", "dest", dest);
    if (source != -1) require_rank("ncclRecv", "source", source);
    constexpr ncclDataType_t t = datatype<T>;
    // Overlapping send and receive buffers (shift(buf, buf)): send a device copy.
    device_buffer copy(dest != -1 && source != -1 && overlap(send, send_count, recv, recv_count) ? send_count * sizeof(T) : 0);
    if (copy.ptr) {
      detail::check_cuda(cudaMemcpyAsync(copy.ptr, send, send_count * sizeof(T), cudaMemcpyDeviceToDevice, s),
                         "cudaMemcpyAsync (overlapping sendrecv)");
      send = static_cast<const T*>(copy.ptr);
    }
    group_start();
    try {
      if (dest != -1) enqueued("ncclSend", ncclSend(send, send_count, t, dest, st_->comm, s));
      if (source != -1) enqueued("ncclRecv", ncclRecv(recv, recv_count, t, source, st_->comm, s));
    } catch (...) {
      try { group_end(); } catch (...) {}
      throw;
    }
    group_end();
    // The copy must outlive the kernel that reads it.
    if (copy.ptr) detail::check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize (overlapping sendrecv)");
  }

 private:
  friend communicator make_communicator(ncclComm_t, options, std::shared_ptr<const detail::host_channel>);

  communicator(ncclComm_t comm, options opts, bool owned, std::shared_ptr<const detail::host_channel> channel)
      : st_(std::make_unique<detail::comm_state>()) {
    st_->comm = comm;
    st_->opts = std::move(opts);
    st_->owned = owned;
    st_->channel = std::move(channel);
    if (!comm) throw comm_error("devmesh: nccl::communicator: null ncclComm_t");
    ncclResult_t r = ncclCommUserRank(comm, &st_->rank);
    if (r == ncclSuccess) r = ncclCommCount(comm, &st_->size);
    if (r != ncclSuccess) {
      std::string what = detail::describe(r, comm);
      st_->abort();
      throw comm_error("devmesh: ncclCommUserRank/ncclCommCount failed: " + what);
    }
  }

  // A device allocation freed on scope exit (n == 0: none).
  struct device_buffer {
    void* ptr = nullptr;
    explicit device_buffer(std::size_t n) {
      if (n) detail::check_cuda(cudaMalloc(&ptr, n), "cudaMalloc");
    }
    device_buffer(const device_buffer&) = delete;
    device_buffer& operator=(const device_buffer&) = delete;
    ~device_buffer() {
      if (ptr) cudaFree(ptr);
    }
  };

  // Every call starts here: one test inline, the message out of line. (No MPI_Finalized
  // here: NCCL calls do not touch MPI; the host channel's MPI steps check it themselves.)
  void require_valid(const char* call) const {
    if (!valid()) [[unlikely]]
      invalid_error(call);
  }
  [[noreturn, gnu::cold, gnu::noinline]] void invalid_error(const char* call) const {
    throw comm_error(std::string("devmesh: ") + call + " on an invalid nccl::communicator (" +
                       (!st_ ? "empty: default-constructed, moved-from, or a split with dm::no_color"
                             : "aborted: abort() or an earlier failure") +
                       ")");
  }
  /// send, or a device copy of it when it partially overlaps recv (count elements each).
  template <class T>
  struct send_copy {
    const T* send;
    device_buffer buf;
    send_copy(const T* s, const T* recv, std::size_t count, stream_type st)
        : send(s), buf(s != recv && overlap(s, count, recv, count) ? count * sizeof(T) : 0) {
      if (!buf.ptr) return;
      // Inside a group the call runs at group_end, after this copy would be freed.
      if (detail::groups().depth > 0)
        throw comm_error("devmesh: partially overlapping send and recv buffers inside an NCCL group: use "
                         "identical buffers (in place) or disjoint ones");
      detail::check_cuda(cudaMemcpyAsync(buf.ptr, s, count * sizeof(T), cudaMemcpyDeviceToDevice, st),
                         "cudaMemcpyAsync (overlapping buffers)");
      send = static_cast<const T*>(buf.ptr);
    }
    /// The copy must outlive the kernel that reads it.
    void settle(stream_type st) const {
      if (buf.ptr)
        detail::check_cuda(cudaStreamSynchronize(st), "cudaStreamSynchronize (overlapping buffers)");
    }
  };
  template <class T>
  static bool overlap(const T* a, std::size_t na, const T* b, std::size_t nb) {
    const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
    return na && nb && x < y + nb * sizeof(T) && y < x + na * sizeof(T);
  }
  /// ncclAvg on integers sums in the element type (it can overflow, then divides): refused
  /// rather than silently wrong.
  template <class T>
  static void require_avg_type(const char* call, op o) {
    if constexpr (std::is_integral_v<T>)
      if (o == op::avg)
        throw comm_error(std::string("devmesh: ") + call +
                         ": op::avg on an integer type (ncclAvg sums in the element type, which can overflow); "
                         "reduce with op::sum in a wider type and divide, or average floats");
  }
  void require_rank(const char* call, const char* what, int r) const {
    if (r < 0 || r >= st_->size)
      throw comm_error(std::string("devmesh: ") + call + " on " + st_->label() + ": " + what + " " +
                       std::to_string(r) + " is not a rank of this communicator");
  }

  // The result of an enqueueing call: errors throw; inside a group the communicator is
  // settled by group_end(), outside one ncclInProgress is waited for here (bounded; abort
  // on failure).
  void enqueued(const char* call, ncclResult_t r) const {
    if (r != ncclSuccess && r != ncclInProgress) detail::throw_nccl(std::string(call) + " on " + st_->label(), r, st_->comm);
    // Inside a group a non-blocking communicator settles after ncclGroupEnd, whatever
    // this call answered: group_end() waits for it.
    if (detail::groups().depth > 0) {
      if (!st_->opts.blocking) detail::add_pending(st_.get());
      return;
    }
    if (r == ncclSuccess) return;
    detail::wait_result w = detail::wait_all({st_->comm}, st_->opts.timeout);
    if (w.timed_out || w.result != ncclSuccess) {
      std::string what = w.timed_out ? "timed out after " + std::to_string(st_->opts.timeout.count()) + " ms"
                                     : detail::describe(w.result, st_->comm);
      std::string label = st_->label();
      st_->abort();
      throw comm_error("devmesh: " + std::string(call) + " on " + label + ": " + what + "; communicator aborted");
    }
  }

  // After a collective creation step (split): every rank learns every rank's outcome over
  // the host channel (when there is one). On any failure: `drop_result` aborts what the
  // step created, this communicator is aborted, and every rank throws the same summary
  // plus its own detail.
  template <class Drop>
  void agree(detail::rank_outcome mine, const std::string& call, const std::string& local, Drop drop_result) const {
    std::string summary;
    try {
      summary = detail::agree(st_->channel.get(), st_->rank, mine,
                              [](int c) { return result_name(static_cast<ncclResult_t>(c)); });
    } catch (...) {
      drop_result();
      st_->abort();
      throw;
    }
    if (summary.empty()) return;
    drop_result();
    st_->abort();
    throw comm_error("devmesh: " + call + " " + summary + (local.empty() ? std::string() : "; here: " + local) +
                     "; aborted the new and the parent communicator");
  }

  std::unique_ptr<detail::comm_state> st_;
};

/// A communicator owning `comm` with a host channel (used by the bootstraps).
inline communicator make_communicator(ncclComm_t comm, options opts, std::shared_ptr<const detail::host_channel> ch) {
  return communicator(comm, std::move(opts), true, std::move(ch));
}

static_assert(devmesh::communicator<communicator>);

}  // namespace devmesh::nccl
