// devmesh/mpi/communicator.hpp: dm::mpi::communicator, an MPI_Comm with RAII that models
// devmesh::communicator. Collectives take host memory; the stream argument is no_stream.
//
// A thin class over its rooms: handle.hpp (the MPI_Comm, its lifetime and the checks every
// call starts with), control.hpp (devmesh's bounded control steps), split.hpp (new
// communicators), collectives.hpp and collectives_v.hpp (the collectives, over an element
// type given as a value, compiled once); its typed members only turn T into that value.
#pragma once
#include <climits>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "native.hpp"

#include "../runtime/backend.hpp"
#include "../runtime/deadline.hpp"
#include "../runtime/element_type.hpp"
#include "../runtime/text_ref.hpp"
#include "collectives.hpp"
#include "collectives_v.hpp"
#include "control.hpp"
#include "datatype.hpp"
#include "handle.hpp"
#include "options.hpp"
#include "split.hpp"

namespace devmesh::mpi {

/// An MPI communicator. Move-only; owning (adopt, split: MPI_Comm_free at destruction,
/// skipped once MPI is finalized) or borrowed (borrow, world(): never freed).
class communicator {
 public:
  using native_type = MPI_Comm;
  using options_type = comm_options;
  using stream_type = no_stream;
  /// The typed collectives take a watchdog bound (runtime/backend.hpp's watchable).
  static constexpr bool watchable = true;
  /// The most elements one block of a call can have (MPI's counts are int; runtime/backend.hpp).
  static constexpr std::size_t max_count = INT_MAX;
  /// True if MPI has a datatype for T (runtime/backend.hpp).
  template <class T>
  static constexpr bool carries = has_datatype<T>;

  /// An invalid communicator (what non-members of a split get).
  communicator() = default;
  /// Takes ownership of c (freed at destruction) and sets MPI_ERRORS_RETURN on it.
  static communicator adopt(MPI_Comm c) { return communicator(detail::comm_handle::adopt(c)); }
  /// Uses c without owning it: the caller keeps it alive and frees it.
  static communicator borrow(MPI_Comm c) { return communicator(detail::comm_handle::borrow(c)); }

  /// Takes over o's MPI_Comm and ownership; o becomes invalid.
  communicator(communicator&& o) noexcept = default;
  /// Frees this communicator if it owns one, then takes over o's; o becomes invalid.
  communicator& operator=(communicator&& o) noexcept = default;
  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;
  /// Frees the MPI_Comm if owned (MPI_Comm_free, skipped once MPI is finalized).
  ~communicator() = default;

  /// False for a default-constructed, moved-from or non-member (no_color) communicator.
  bool valid() const { return h_.valid(); }
  /// Rank in this communicator (-1 if invalid).
  int rank() const { return h_.rank(); }
  /// Number of ranks (0 if invalid).
  int size() const { return h_.size(); }
  /// The MPI_Comm (MPI_COMM_NULL if invalid); this object keeps ownership.
  MPI_Comm native() const { return h_.native(); }
  /// True if this object frees the MPI_Comm (adopt, split, duplicate).
  bool owns() const { return h_.owns(); }
  /// "mpi": the backend's name in messages and in the consistency check.
  static const char* backend_name() { return "mpi"; }

  /// Collective over this communicator: MPI_Comm_split. color == no_color gives an
  /// invalid communicator. The result owns its MPI_Comm and gets opts applied.
  communicator split(int color, int key, const options_type& opts = {}) const {
    return communicator(detail::split(h_, color, key, opts));
  }
  /// A split whose groups every rank already knows: `ranks` are the ranks of this
  /// communicator in this rank's group, in the new communicator's rank order (empty: no
  /// group, an invalid communicator, and no call). MPI_Comm_create_group: collective over
  /// the group's members only, so it costs what a communicator of the group's size costs,
  /// where MPI_Comm_split gathers every rank's color and key over the whole parent. Every
  /// member must make the same sequence of these calls on this communicator (device_mesh
  /// does: they are SPMD steps): each gets the next tag, so calls never mix.
  communicator split_group(std::span<const int> ranks, const options_type& opts = {}) const {
    return communicator(detail::split_group(h_, ranks, opts));
  }

  // ---- the control plane: non-blocking MPI calls polled until the deadline --------------
  /// Collective: n bytes from every rank, in rank order, into out.
  void all_gather_bytes(const void* in, void* out, std::size_t n, const deadline& d = deadline::never()) const {
    detail::all_gather_bytes(h_, in, out, n, d);
  }
  /// Collective: element-wise maximum of n words over every rank, in place.
  void all_reduce_max(std::uint64_t* words, std::size_t n, const deadline& d = deadline::never()) const {
    detail::all_reduce_max(h_, words, n, d);
  }
  /// Collective: MPI_Comm_idup, bounded. The copy owns its MPI_Comm and returns errors.
  communicator duplicate(const deadline& d = deadline::never()) const {
    return duplicate(d, [] {});
  }
  /// The same, running `meanwhile()` once while the MPI_Comm_idup is in flight: local work
  /// hidden behind the communication (device_mesh builds the mesh's descriptor there). An
  /// exception from it is rethrown once the idup is done (the request is never left behind).
  communicator duplicate(const deadline& d, devmesh::detail::call_ref<void> meanwhile) const {
    return communicator(detail::duplicate(h_, d, meanwhile));
  }

  /// MPI has no abort of one communicator's pending work short of MPI_Abort, which kills
  /// the job; devmesh's MPI calls are blocking, so nothing is pending. Marks the
  /// communicator unusable instead: every later call throws comm_error, as NCCL's do after
  /// ncclCommAbort. (The MPI_Comm is still freed at destruction.)
  void abort() noexcept { h_.abort(); }
  /// abort(), with the reason every later call's comm_error gives (the watchdog's).
  void abort(const std::string& why) noexcept {
    try {
      h_.mark_unusable(why);
    } catch (...) {  // no memory for the text
      h_.abort();
    }
  }
  /// No-op: MPI has no group calls (NCCL's ncclGroupStart).
  static void group_start() {}
  /// No-op: MPI has no group calls (NCCL's ncclGroupEnd).
  static void group_end() {}

  // ---- collectives (host memory); counts in elements --------------------------------------
  // Each over an element type given as a value (runtime/element_type.hpp), then the same over
  // T (element_of<T>: a static_assert naming T if MPI has no datatype for it).
  /// MPI_Allreduce of n elements (send == recv: in place); op::avg sums, then divides
  /// (integers exactly, average.hpp).
  void all_reduce(const void* send, void* recv, std::size_t n, element_type t, op o, stream_type = {},
                  const watched_call* watch = nullptr) const {
    detail::all_reduce(h_, send, recv, n, t, o, watch);
  }
  /// all_reduce over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void all_reduce(const T* send, T* recv, std::size_t n, op o, stream_type s = {},
                  const watched_call* watch = nullptr) const {
    all_reduce(send, recv, n, reduced<T>(), o, s, watch);
  }
  /// MPI_Reduce of n elements onto rank root (send == recv: in place).
  void reduce(const void* send, void* recv, std::size_t n, element_type t, op o, int root, stream_type = {},
              const watched_call* watch = nullptr) const {
    detail::reduce(h_, send, recv, n, t, o, root, watch);
  }
  /// reduce over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void reduce(const T* send, T* recv, std::size_t n, op o, int root, stream_type s = {},
              const watched_call* watch = nullptr) const {
    reduce(send, recv, n, reduced<T>(), o, root, s, watch);
  }
  /// MPI_Bcast of n elements from rank root.
  void broadcast(void* buf, std::size_t n, element_type t, int root, stream_type = {},
                 const watched_call* watch = nullptr) const {
    detail::broadcast(h_, buf, n, t, root, watch);
  }
  /// broadcast over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void broadcast(T* buf, std::size_t n, int root, stream_type s = {}, const watched_call* watch = nullptr) const {
    broadcast(buf, n, element_of<T>(), root, s, watch);
  }
  /// MPI_Allgather: send_count elements from each rank into recv, in rank order.
  void all_gather(const void* send, void* recv, std::size_t send_count, element_type t, stream_type = {},
                  const watched_call* watch = nullptr) const {
    detail::all_gather(h_, send, recv, send_count, t, watch);
  }
  /// all_gather over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void all_gather(const T* send, T* recv, std::size_t send_count, stream_type s = {},
                  const watched_call* watch = nullptr) const {
    all_gather(send, recv, send_count, element_of<T>(), s, watch);
  }
  /// MPI_Reduce_scatter_block: block rank() of the reduction, recv_count elements.
  void reduce_scatter(const void* send, void* recv, std::size_t recv_count, element_type t, op o, stream_type = {},
                      const watched_call* watch = nullptr) const {
    detail::reduce_scatter(h_, send, recv, recv_count, t, o, watch);
  }
  /// reduce_scatter over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void reduce_scatter(const T* send, T* recv, std::size_t recv_count, op o, stream_type s = {},
                      const watched_call* watch = nullptr) const {
    reduce_scatter(send, recv, recv_count, reduced<T>(), o, s, watch);
  }
  /// MPI_Alltoall: block j of send to rank j, block i of recv from rank i.
  void all_to_all(const void* send, void* recv, std::size_t count_per_rank, element_type t, stream_type = {},
                  const watched_call* watch = nullptr) const {
    detail::all_to_all(h_, send, recv, count_per_rank, t, watch);
  }
  /// all_to_all over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void all_to_all(const T* send, T* recv, std::size_t count_per_rank, stream_type s = {},
                  const watched_call* watch = nullptr) const {
    all_to_all(send, recv, count_per_rank, element_of<T>(), s, watch);
  }
  /// MPI_Alltoallv: send_counts[j] elements to rank j from send + send_at[j], recv_counts[i]
  /// from rank i into recv + recv_at[i]; empty displacements: packed in rank order
  /// (redistribute's exchanges; an optional member of the concept).
  void all_to_allv(const void* send, std::span<const std::size_t> send_counts, std::span<const std::size_t> send_at,
                   void* recv, std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_at,
                   element_type t, stream_type = {}, const watched_call* watch = nullptr) const {
    detail::all_to_allv(h_, send, send_counts, send_at, recv, recv_counts, recv_at, t, watch);
  }
  /// all_to_allv over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void all_to_allv(const T* send, std::span<const std::size_t> send_counts, std::span<const std::size_t> send_at,
                   T* recv, std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_at,
                   stream_type s = {}, const watched_call* watch = nullptr) const {
    all_to_allv(send, send_counts, send_at, recv, recv_counts, recv_at, element_of<T>(), s, watch);
  }
  /// MPI_Reduce_scatter: rank i receives recv_counts[i] elements of the reduction of the
  /// ranks' packed sends (redistribute's Partial -> Shard; an optional member).
  void reduce_scatterv(const void* send, void* recv, std::span<const std::size_t> recv_counts, element_type t, op o,
                       stream_type = {}, const watched_call* watch = nullptr) const {
    detail::reduce_scatterv(h_, send, recv, recv_counts, t, o, watch);
  }
  /// reduce_scatterv over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void reduce_scatterv(const T* send, T* recv, std::span<const std::size_t> recv_counts, op o, stream_type s = {},
                       const watched_call* watch = nullptr) const {
    reduce_scatterv(send, recv, recv_counts, reduced<T>(), o, s, watch);
  }
  /// MPI_Barrier.
  void barrier(stream_type = {}, const watched_call* watch = nullptr) const { detail::barrier(h_, watch); }
  /// MPI_Sendrecv; dest/source -1: no send/receive on that side (MPI_PROC_NULL).
  void sendrecv(const void* send, std::size_t send_count, int dest, void* recv, std::size_t recv_count, int source,
                element_type t, stream_type = {}, const watched_call* watch = nullptr) const {
    detail::sendrecv(h_, send, send_count, dest, recv, recv_count, source, t, watch);
  }
  /// sendrecv over pointers to T (element_of<T>: a static_assert naming T when there is no datatype).
  template <class T>
  void sendrecv(const T* send, std::size_t send_count, int dest, T* recv, std::size_t recv_count, int source,
                stream_type s = {}, const watched_call* watch = nullptr) const {
    sendrecv(send, send_count, dest, recv, recv_count, source, element_of<T>(), s, watch);
  }

 private:
  explicit communicator(detail::comm_handle h) noexcept : h_(std::move(h)) {}
  /// T for a reduction: element_of<T>, and not std::byte (which has no arithmetic).
  template <class T>
  static constexpr element_type reduced() {
    static_assert(!std::is_same_v<std::remove_cv_t<T>, std::byte>,
                  "devmesh: mpi: std::byte has no arithmetic, so reductions (all_reduce, reduce, reduce_scatter) "
                  "on it are errors; reduce std::uint8_t instead (std::byte is for moves: broadcast, all_gather, "
                  "all_to_all, shift)");
    return element_of<T>();
  }

  detail::comm_handle h_;
};

static_assert(devmesh::communicator<communicator>);

}  // namespace devmesh::mpi
