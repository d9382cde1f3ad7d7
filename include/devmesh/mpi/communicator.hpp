// devmesh/mpi/communicator.hpp: dm::mpi::communicator, an MPI_Comm with RAII that models
// devmesh::communicator. Collectives take host memory; the stream argument is no_stream.
#pragma once
#include <algorithm>
#include <atomic>
#include <climits>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "native.hpp"

#include "../runtime/backend.hpp"
#include "../runtime/deadline.hpp"
#include "../core/diagnostics.hpp"
#include "datatype.hpp"
#include "error.hpp"

namespace devmesh::mpi {

namespace detail {
/// Buffers and requests of control steps that timed out: MPI may still write into them, so
/// they stay alive (and reachable) until the process ends.
inline void park(std::unique_ptr<unsigned char[]> buf, MPI_Request req) {
  static std::mutex m;
  static std::vector<std::pair<std::unique_ptr<unsigned char[]>, MPI_Request>> parked;
  std::lock_guard lock(m);
  parked.emplace_back(std::move(buf), req);
}
}  // namespace detail

namespace detail {
/// Whether MPI may be finalized, as the collectives' hot path sees it, in one relaxed load:
/// `live` once MPI is initialized and devmesh watches MPI_Finalize (below), until that
/// begins; anything else sends the caller to the slow path, which asks MPI_Finalized.
enum class mpi_phase : int { unwatched = 0, live = 1, finalizing = 2 };
inline std::atomic<int> phase{static_cast<int>(mpi_phase::unwatched)};
inline std::mutex phase_mutex;

/// MPI_Finalize deletes MPI_COMM_SELF's attributes before anything else (MPI 3.1, 8.7.1,
/// "Allowing User Functions at Process Termination"): this callback marks the process
/// finalizing, so that no later call takes the fast path.
inline int on_finalize(MPI_Comm, int, void*, void*) {
  phase.store(static_cast<int>(mpi_phase::finalizing), std::memory_order_relaxed);
  return MPI_SUCCESS;
}

/// Registers on_finalize once per process (thread-safe), if MPI is initialized and not
/// finalized; until then (or if MPI refuses the attribute) the phase stays `unwatched` and
/// every call asks MPI_Finalized, as it would without the watch.
inline void watch_finalize() {
  if (phase.load(std::memory_order_acquire) != static_cast<int>(mpi_phase::unwatched)) return;
  std::lock_guard lock(phase_mutex);
  if (phase.load(std::memory_order_relaxed) != static_cast<int>(mpi_phase::unwatched)) return;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return;
  int key = MPI_KEYVAL_INVALID;
  if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &on_finalize, &key, nullptr) != MPI_SUCCESS) return;
  const bool set = MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr) == MPI_SUCCESS;
  MPI_Comm_free_keyval(&key);  // the attribute keeps it alive until MPI_Finalize deletes it
  if (set) phase.store(static_cast<int>(mpi_phase::live), std::memory_order_release);
}

/// True when MPI is finalized: exact (MPI_Finalized), for the slow path.
inline bool mpi_finalized() noexcept {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

__extension__ typedef __int128 wide_int;  // GCC/Clang/nvcc host extension (no -Wpedantic warning)
/// MPI_SUM over wide_int, which MPI has no datatype for.
inline void wide_int_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const wide_int*>(in);
  auto* b = static_cast<wide_int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] += a[i];
}
struct wide_sum_handles {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};
/// Created on first use (after MPI_Init); MPI_Finalize frees them.
inline const wide_sum_handles& wide_sum() {
  static const wide_sum_handles h = [] {
    wide_sum_handles w;
    check(MPI_Type_contiguous(static_cast<int>(sizeof(wide_int)), MPI_BYTE, &w.type), "MPI_Type_contiguous");
    check(MPI_Type_commit(&w.type), "MPI_Type_commit");
    check(MPI_Op_create(&wide_int_sum, 1, &w.op), "MPI_Op_create");
    return w;
  }();
  return h;
}
}  // namespace detail

/// Creation options of one communicator (device_mesh_options::per_dim["tp"], ...).
struct comm_options {
  /// MPI_Comm_set_name; device_mesh sets "mesh:<dim>" when left empty.
  std::string name;
  /// MPI_Info hints (key, value), applied with MPI_Comm_set_info after the split, e.g.
  /// {"mpi_assert_no_any_tag", "true"}. Unknown keys are ignored by MPI, as the standard says.
  std::vector<std::pair<std::string, std::string>> hints;
  /// Called with every new communicator, after hints and name (e.g. to attach attributes).
  std::function<void(MPI_Comm)> on_create;

  /// What enters the mesh-wide consistency fingerprint (the name is per dim, not here).
  std::string describe() const {
    std::string s;
    for (const auto& [k, v] : hints) s += (s.empty() ? "" : ",") + k + "=" + v;
    if (on_create) s += (s.empty() ? "" : ",") + std::string("on_create");
    return s;
  }
};

/// An MPI communicator. Move-only; owning (adopt, split: MPI_Comm_free at destruction,
/// skipped once MPI is finalized) or borrowed (borrow, world(): never freed).
class communicator {
 public:
  using native_type = MPI_Comm;
  using options_type = comm_options;
  using stream_type = no_stream;

  /// An invalid communicator (what non-members of a split get).
  communicator() = default;
  /// Takes ownership of c (freed at destruction) and sets MPI_ERRORS_RETURN on it.
  static communicator adopt(MPI_Comm c) {
    if (c != MPI_COMM_NULL) detail::check(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    return communicator(c, c != MPI_COMM_WORLD && c != MPI_COMM_SELF);
  }
  /// Uses c without owning it: the caller keeps it alive and frees it.
  static communicator borrow(MPI_Comm c) { return communicator(c, false); }

  /// Takes over o's MPI_Comm and ownership; o becomes invalid.
  communicator(communicator&& o) noexcept
      : comm_(std::exchange(o.comm_, MPI_COMM_NULL)), owned_(std::exchange(o.owned_, false)),
        rank_(std::exchange(o.rank_, -1)), size_(std::exchange(o.size_, 0)),
        broken_(std::exchange(o.broken_, std::string())), group_tag_(std::exchange(o.group_tag_, 0u)) {}
  /// Frees this communicator if it owns one, then takes over o's; o becomes invalid.
  communicator& operator=(communicator&& o) noexcept {
    if (this != &o) {
      reset();
      comm_ = std::exchange(o.comm_, MPI_COMM_NULL);
      owned_ = std::exchange(o.owned_, false);
      rank_ = std::exchange(o.rank_, -1);
      size_ = std::exchange(o.size_, 0);
      broken_ = std::exchange(o.broken_, std::string());
      group_tag_ = std::exchange(o.group_tag_, 0u);
    }
    return *this;
  }
  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;
  /// Frees the MPI_Comm if owned (MPI_Comm_free, skipped once MPI is finalized).
  ~communicator() { reset(); }

  /// False for a default-constructed, moved-from or non-member (no_color) communicator.
  bool valid() const { return comm_ != MPI_COMM_NULL; }
  /// Rank in this communicator (-1 if invalid).
  int rank() const { return rank_; }
  /// Number of ranks (0 if invalid).
  int size() const { return size_; }
  /// The MPI_Comm (MPI_COMM_NULL if invalid); this object keeps ownership.
  MPI_Comm native() const { return comm_; }
  /// True if this object frees the MPI_Comm (adopt, split, duplicate).
  bool owns() const { return owned_; }
  /// "mpi": the backend's name in messages and in the consistency check.
  static const char* backend_name() { return "mpi"; }

  /// Collective over this communicator: MPI_Comm_split. color == no_color gives an
  /// invalid communicator. The result owns its MPI_Comm and gets opts applied.
  communicator split(int color, int key, const options_type& opts = {}) const {
    require_valid("split");
    MPI_Comm out = MPI_COMM_NULL;
    detail::check(MPI_Comm_split(comm_, color == no_color ? MPI_UNDEFINED : color, key, &out), "MPI_Comm_split");
    communicator c = adopt(out);
    if (out != MPI_COMM_NULL) c.apply(opts);
    return c;
  }

  /// A split whose groups every rank already knows: `ranks` are the ranks of this
  /// communicator in this rank's group, in the new communicator's rank order (empty: no
  /// group, an invalid communicator, and no call). MPI_Comm_create_group: collective over
  /// the group's members only, so it costs what a communicator of the group's size costs,
  /// where MPI_Comm_split gathers every rank's color and key over the whole parent. Every
  /// member must make the same sequence of these calls on this communicator (device_mesh
  /// does: they are SPMD steps): each gets the next tag, so calls never mix.
  communicator split_group(std::span<const int> ranks, const options_type& opts = {}) const {
    require_valid("split_group");
    if (ranks.empty()) return communicator();
    const int tag = static_cast<int>(group_tag_++ & 0x7fffu);  // MPI_TAG_UB is at least 32767
    MPI_Group all = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
    detail::check(MPI_Comm_group(comm_, &all), "MPI_Comm_group");
    int rc = MPI_Group_incl(all, count("split_group", ranks.size()), ranks.data(), &group);
    MPI_Group_free(&all);
    detail::check(rc, "MPI_Group_incl");
    MPI_Comm out = MPI_COMM_NULL;
    rc = MPI_Comm_create_group(comm_, group, tag, &out);
    MPI_Group_free(&group);
    detail::check(rc, "MPI_Comm_create_group");
    communicator c = adopt(out);
    if (out != MPI_COMM_NULL) c.apply(opts);
    return c;
  }

  // ---- the control plane: non-blocking MPI calls polled until the deadline --------------
  /// Collective: n bytes from every rank, in rank order, into out.
  void all_gather_bytes(const void* in, void* out, std::size_t n, const deadline& d = deadline::never()) const {
    require_valid("all_gather_bytes");
    const std::size_t total = n * static_cast<std::size_t>(size_);
    auto buf = std::make_unique<unsigned char[]>(n + total);  // MPI owns it until completion
    std::memcpy(buf.get(), in, n);
    const int c = count("all_gather_bytes", n);
    bounded("MPI_Iallgather", d, std::move(buf), [&](unsigned char* b, MPI_Request* r) {
      return MPI_Iallgather(b, c, MPI_BYTE, b + n, c, MPI_BYTE, comm_, r);
    }, [&](const unsigned char* b) { std::memcpy(out, b + n, total); });
  }
  /// Collective: element-wise maximum of n words over every rank, in place.
  void all_reduce_max(std::uint64_t* words, std::size_t n, const deadline& d = deadline::never()) const {
    require_valid("all_reduce_max");
    auto buf = std::make_unique<unsigned char[]>(n * sizeof(std::uint64_t));
    std::memcpy(buf.get(), words, n * sizeof(std::uint64_t));
    const int c = count("all_reduce_max", n);
    bounded("MPI_Iallreduce", d, std::move(buf), [&](unsigned char* b, MPI_Request* r) {
      return MPI_Iallreduce(MPI_IN_PLACE, b, c, MPI_UINT64_T, MPI_MAX, comm_, r);
    }, [&](const unsigned char* b) { std::memcpy(words, b, n * sizeof(std::uint64_t)); });
  }
  /// Collective: MPI_Comm_idup, bounded. The copy owns its MPI_Comm and returns errors.
  communicator duplicate(const deadline& d = deadline::never()) const {
    return duplicate(d, [] {});
  }
  /// The same, running `meanwhile()` once while the MPI_Comm_idup is in flight: local work
  /// hidden behind the communication (device_mesh builds the mesh's descriptor there). An
  /// exception from it is rethrown once the idup is done (the request is never left behind).
  template <class Meanwhile>
  communicator duplicate(const deadline& d, Meanwhile&& meanwhile) const {
    require_valid("duplicate");
    auto out = std::make_unique<unsigned char[]>(sizeof(MPI_Comm));
    MPI_Comm* dup = reinterpret_cast<MPI_Comm*>(out.get());
    *dup = MPI_COMM_NULL;
    MPI_Comm result = MPI_COMM_NULL;
    std::exception_ptr failed;
    bounded("MPI_Comm_idup", d, std::move(out), [&](unsigned char*, MPI_Request* r) {
      const int rc = MPI_Comm_idup(comm_, dup, r);
      if (rc == MPI_SUCCESS) try {
          meanwhile();
        } catch (...) {
          failed = std::current_exception();
        }
      return rc;
    }, [&](const unsigned char* b) { std::memcpy(&result, b, sizeof result); });
    communicator c = adopt(result);
    if (failed) std::rethrow_exception(failed);
    return c;
  }

  /// MPI has no abort of one communicator's pending work short of MPI_Abort, which kills
  /// the job; devmesh's MPI calls are blocking, so nothing is pending. Marks the
  /// communicator unusable instead: every later call throws comm_error, as NCCL's do after
  /// ncclCommAbort. (The MPI_Comm is still freed at destruction.)
  void abort() noexcept {
    try {
      if (broken_.empty()) broken_ = "it was aborted (abort())";
    } catch (...) {  // no memory for the text: the communicator stays usable, as before
    }
  }
  /// No-op: MPI has no group calls (NCCL's ncclGroupStart).
  static void group_start() {}
  /// No-op: MPI has no group calls (NCCL's ncclGroupEnd).
  static void group_end() {}

  // ---- typed collectives (host memory); counts in elements -----------------------------
  /// MPI_Allreduce of n elements (send == recv: in place); op::avg sums, then divides.
  template <class T>
  void all_reduce(const T* send, T* recv, std::size_t n, op o, stream_type = {}) const {
    require_valid("all_reduce");
    if constexpr (is_integer<T>)
      if (o == op::avg) return integer_avg(reduction::all, send, recv, n, n, 0);
    const std::vector<T> copy = send == recv ? std::vector<T>() : copy_if_overlapping(send, n, recv, n);
    detail::check(MPI_Allreduce(send == recv ? MPI_IN_PLACE : copy.empty() ? send : copy.data(), recv,
                                count("all_reduce", n), datatype<T>(), mpi_op<T>(o), comm_),
                  "MPI_Allreduce");
    if (o == op::avg) divide(recv, n);
  }
  /// MPI_Reduce of n elements onto rank root (send == recv: in place).
  template <class T>
  void reduce(const T* send, T* recv, std::size_t n, op o, int root, stream_type = {}) const {
    require_valid("reduce");
    if constexpr (is_integer<T>)
      if (o == op::avg) return integer_avg(reduction::to_root, send, recv, n, n, root);
    const bool in_place = send == recv && rank_ == root;
    const std::vector<T> copy = send == recv ? std::vector<T>() : copy_if_overlapping(send, n, recv, n);
    detail::check(MPI_Reduce(in_place ? MPI_IN_PLACE : copy.empty() ? send : copy.data(), recv, count("reduce", n),
                             datatype<T>(), mpi_op<T>(o), root, comm_),
                  "MPI_Reduce");
    if (o == op::avg && rank_ == root) divide(recv, n);
  }
  /// MPI_Bcast of n elements from rank root.
  template <class T>
  void broadcast(T* buf, std::size_t n, int root, stream_type = {}) const {
    require_valid("broadcast");
    detail::check(MPI_Bcast(buf, count("broadcast", n), datatype<T>(), root, comm_), "MPI_Bcast");
  }
  /// MPI_Allgather: send_count elements from each rank into recv, in rank order.
  template <class T>
  void all_gather(const T* send, T* recv, std::size_t send_count, stream_type = {}) const {
    require_valid("all_gather");
    const std::vector<T> copy = copy_if_overlapping(send, send_count, recv, send_count * static_cast<std::size_t>(size_));
    detail::check(MPI_Allgather(copy.empty() ? send : copy.data(), count("all_gather", send_count), datatype<T>(), recv,
                                count("all_gather", send_count), datatype<T>(), comm_),
                  "MPI_Allgather");
  }
  /// MPI_Reduce_scatter_block: block rank() of the reduction, recv_count elements.
  template <class T>
  void reduce_scatter(const T* send, T* recv, std::size_t recv_count, op o, stream_type = {}) const {
    require_valid("reduce_scatter");
    if constexpr (is_integer<T>)
      if (o == op::avg)
        return integer_avg(reduction::scatter, send, recv, recv_count * static_cast<std::size_t>(size_), recv_count, 0);
    const std::vector<T> copy = copy_if_overlapping(send, recv_count * static_cast<std::size_t>(size_), recv, recv_count);
    detail::check(MPI_Reduce_scatter_block(copy.empty() ? send : copy.data(), recv, count("reduce_scatter", recv_count),
                                           datatype<T>(), mpi_op<T>(o), comm_),
                  "MPI_Reduce_scatter_block");
    if (o == op::avg) divide(recv, recv_count);
  }
  /// MPI_Alltoall: block j of send to rank j, block i of recv from rank i.
  template <class T>
  void all_to_all(const T* send, T* recv, std::size_t count_per_rank, stream_type = {}) const {
    require_valid("all_to_all");
    const std::size_t total = count_per_rank * static_cast<std::size_t>(size_);
    const std::vector<T> copy = copy_if_overlapping(send, total, recv, total);
    detail::check(MPI_Alltoall(copy.empty() ? send : copy.data(), count("all_to_all", count_per_rank), datatype<T>(),
                               recv, count("all_to_all", count_per_rank), datatype<T>(), comm_),
                  "MPI_Alltoall");
  }
  /// MPI_Barrier.
  void barrier(stream_type = {}) const {
    require_valid("barrier");
    detail::check(MPI_Barrier(comm_), "MPI_Barrier");
  }
  /// dest/source -1: no send/receive on that side (MPI_PROC_NULL).
  template <class T>
  void sendrecv(const T* send, std::size_t send_count, int dest, T* recv, std::size_t recv_count, int source,
                stream_type = {}) const {
    require_valid("sendrecv");
    constexpr int tag = 0x646d;  // "dm"
    // MPI forbids overlapping send and receive buffers: shift(buf, buf) sends a copy.
    const std::vector<T> copy = dest < 0 || source < 0 ? std::vector<T>()
                                                       : copy_if_overlapping(send, send_count, recv, recv_count);
    if (!copy.empty()) send = copy.data();
    detail::check(MPI_Sendrecv(send, count("sendrecv", send_count), datatype<T>(), dest < 0 ? MPI_PROC_NULL : dest, tag,
                               recv, count("sendrecv", recv_count), datatype<T>(), source < 0 ? MPI_PROC_NULL : source,
                               tag, comm_, MPI_STATUS_IGNORE),
                  "MPI_Sendrecv");
  }

 private:
  communicator(MPI_Comm c, bool owned) : comm_(c), owned_(owned) {
    if (c != MPI_COMM_NULL) {
      detail::watch_finalize();  // a communicator exists: from now on, calls check one flag
      if (detail::phase.load(std::memory_order_relaxed) != static_cast<int>(detail::mpi_phase::live)) [[unlikely]]
        require_initialized();
      detail::check(MPI_Comm_rank(c, &rank_), "MPI_Comm_rank");
      detail::check(MPI_Comm_size(c, &size_), "MPI_Comm_size");
    }
  }

  void reset() noexcept {
    if (owned_ && comm_ != MPI_COMM_NULL) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Comm_free(&comm_);
    }
    comm_ = MPI_COMM_NULL;
    owned_ = false;
    rank_ = -1;
    size_ = 0;
  }

  void apply(const options_type& o) {
    if (!o.hints.empty()) {
      MPI_Info info = MPI_INFO_NULL;
      detail::check(MPI_Info_create(&info), "MPI_Info_create");
      int rc = MPI_SUCCESS;
      for (const auto& [k, v] : o.hints)
        if (rc == MPI_SUCCESS) rc = MPI_Info_set(info, k.c_str(), v.c_str());
      if (rc == MPI_SUCCESS) rc = MPI_Comm_set_info(comm_, info);
      MPI_Info_free(&info);
      detail::check(rc, "MPI_Comm_set_info");
    }
    if (!o.name.empty()) detail::check(MPI_Comm_set_name(comm_, o.name.c_str()), "MPI_Comm_set_name");
    if (o.on_create) o.on_create(comm_);
  }

  /// Every call starts here: an MPI call after MPI_Finalize (or before MPI_Init) would
  /// make MPI abort the job; a communicator whose control step timed out has a pending
  /// operation that would match the next call. Both throw instead. The common case costs
  /// two tests and one relaxed atomic load (detail::phase): MPI_Finalized is asked only
  /// when devmesh does not watch MPI_Finalize, or once MPI_Finalize has begun.
  void require_valid(const char* what) const {
    if (comm_ == MPI_COMM_NULL) [[unlikely]]
      invalid_error(what);
    if (detail::phase.load(std::memory_order_relaxed) != static_cast<int>(detail::mpi_phase::live)) [[unlikely]]
      require_not_finalized(what);
    if (!broken_.empty()) [[unlikely]]
      broken_error(what);
  }
  /// A handle made before MPI_Init or after MPI_Finalize: MPI_Comm_rank would abort the job.
  [[gnu::cold, gnu::noinline]] static void require_initialized() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized)
      throw comm_error("devmesh: mpi: communicator: MPI is not initialized (create a devmesh::mpi::environment first)");
    require_not_finalized("communicator");
  }
  [[gnu::cold, gnu::noinline]] static void require_not_finalized(const char* what) {
    detail::watch_finalize();
    if (detail::mpi_finalized())
      throw comm_error("devmesh: mpi: " + std::string(what) + ": MPI is finalized (MPI_Finalize was called)");
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void invalid_error(const char* what) {
    throw comm_error("devmesh: mpi: " + std::string(what) + " on an invalid communicator (MPI_COMM_NULL)");
  }
  [[noreturn, gnu::cold, gnu::noinline]] void broken_error(const char* what) const {
    throw comm_error("devmesh: mpi: " + std::string(what) + " on a communicator that is unusable: " + broken_);
  }

  /// Starts a non-blocking call on a heap buffer and polls it until done or the deadline.
  /// On time-out the request and its buffer are left to MPI (MPI may still complete them:
  /// they are parked, never freed), this communicator is marked unusable, and
  /// timeout_error is thrown.
  template <class Start, class Finish>
  void bounded(const char* call, const deadline& d, std::unique_ptr<unsigned char[]> buf, Start start,
               Finish finish) const {
    MPI_Request req = MPI_REQUEST_NULL;
    detail::check(start(buf.get(), &req), call);
    int done = 0;
    int rc = MPI_SUCCESS;
    devmesh::detail::poll_until(d, [&] {
      if (rc == MPI_SUCCESS && !done) rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      return done != 0 || rc != MPI_SUCCESS;
    });
    detail::check(rc, call);
    if (!done) {
      broken_ = std::string(call) + " timed out after " + d.describe();
      detail::park(std::move(buf), req);
      throw timeout_error("devmesh: mpi: " + std::string(call) + " on a communicator of " + std::to_string(size_) +
                          " ranks: not every rank arrived within " + d.describe() +
                          " (a rank skipped this step, is blocked elsewhere, or died)");
    }
    finish(buf.get());
  }
  static int count(const char* what, std::size_t n) {
    if (n > static_cast<std::size_t>(INT_MAX))
      throw comm_error("devmesh: mpi: " + std::string(what) + ": " + std::to_string(n) +
                       " elements exceed MPI's int count (split the buffer)");
    return static_cast<int>(n);
  }

  template <class T>
  static MPI_Op mpi_op(op o) {
    static_assert(!std::is_same_v<std::remove_cv_t<T>, std::byte>,
                  "devmesh: mpi: std::byte has no arithmetic, so reductions (all_reduce, reduce, reduce_scatter) "
                  "on it are errors; reduce std::uint8_t instead (std::byte is for moves: broadcast, all_gather, "
                  "all_to_all, shift)");
    switch (o) {
      case op::sum: return MPI_SUM;
      case op::prod: return MPI_PROD;
      case op::min: return MPI_MIN;
      case op::max: return MPI_MAX;
      case op::avg: return MPI_SUM;  // then divided by the size
    }
    return MPI_OP_NULL;
  }
  enum class reduction { all, to_root, scatter };
  template <class T>
  static constexpr bool is_integer = std::is_integral_v<std::remove_cv_t<T>> && !std::is_same_v<std::remove_cv_t<T>, bool>;
  /// op::avg on integers, exactly: the sum is taken in 128 bits (it cannot overflow for
  /// any element type and rank count), then divided by the size (rounding toward zero) and
  /// narrowed: the average of values of T always fits T.
  template <class T>
  void integer_avg(reduction kind, const T* send, T* recv, std::size_t n_in, std::size_t n_out, int root) const {
    std::vector<detail::wide_int> wide(send, send + n_in);
    const auto& w = detail::wide_sum();
    const char* call = kind == reduction::all ? "MPI_Allreduce (op::avg)"
                       : kind == reduction::to_root ? "MPI_Reduce (op::avg)"
                                                    : "MPI_Reduce_scatter_block (op::avg)";
    const int c = count(call, n_out);
    int rc = MPI_SUCCESS;
    if (kind == reduction::all)
      rc = MPI_Allreduce(MPI_IN_PLACE, wide.data(), c, w.type, w.op, comm_);
    else if (kind == reduction::to_root)
      rc = MPI_Reduce(rank_ == root ? MPI_IN_PLACE : wide.data(), wide.data(), c, w.type, w.op, root, comm_);
    else
      rc = MPI_Reduce_scatter_block(MPI_IN_PLACE, wide.data(), c, w.type, w.op, comm_);
    detail::check(rc, call);
    if (kind == reduction::to_root && rank_ != root) return;
    for (std::size_t i = 0; i < n_out; ++i) recv[i] = static_cast<T>(wide[i] / size_);
  }
  /// op::avg: MPI has no MPI_AVG; the sum is divided by the size (integer division for
  /// integers, as NCCL's ncclAvg).
  template <class T>
  void divide(T* buf, std::size_t n) const {
    using U = std::remove_cv_t<T>;
    if constexpr ((std::is_arithmetic_v<U> && !std::is_same_v<U, bool>) || std::is_same_v<U, std::complex<float>> ||
                  std::is_same_v<U, std::complex<double>>) {
      for (std::size_t i = 0; i < n; ++i) buf[i] = static_cast<U>(buf[i] / static_cast<U>(size_));
    } else {
      (void)buf, (void)n;
      throw comm_error("devmesh: mpi: op::avg needs an arithmetic element type");
    }
  }
  /// The send buffer copied when it overlaps recv (MPI forbids aliasing outside MPI_IN_PLACE).
  template <class T>
  static std::vector<T> copy_if_overlapping(const T* send, std::size_t ns, const T* recv, std::size_t nr) {
    const auto s = reinterpret_cast<std::uintptr_t>(send), r = reinterpret_cast<std::uintptr_t>(recv);
    if (ns == 0 || nr == 0 || s + ns * sizeof(T) <= r || r + nr * sizeof(T) <= s) return {};
    return std::vector<T>(send, send + ns);
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owned_ = false;
  int rank_ = -1;
  int size_ = 0;
  mutable std::string broken_;  // why the communicator is unusable ("" when it is fine)
  mutable unsigned group_tag_ = 0;  // split_group calls made on it: the next one's tag
};

static_assert(devmesh::communicator<communicator>);

}  // namespace devmesh::mpi
