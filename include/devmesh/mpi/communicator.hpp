// devmesh/mpi/communicator.hpp: dm::mpi::communicator, an MPI_Comm with RAII that models
// devmesh::communicator. Collectives take host memory; the stream argument is no_stream.
//
// A thin class over its rooms: handle.hpp (the MPI_Comm, its lifetime and the checks every
// call starts with), control.hpp (devmesh's bounded control steps), split.hpp (new
// communicators), collectives.hpp (the typed collectives).
#pragma once
#include <climits>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "native.hpp"

#include "../runtime/backend.hpp"
#include "../runtime/deadline.hpp"
#include "collectives.hpp"
#include "collectives_v.hpp"
#include "control.hpp"
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
  template <class = void>
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
  template <class = void>
  communicator split_group(std::span<const int> ranks, const options_type& opts = {}) const {
    return communicator(detail::split_group(h_, ranks, opts));
  }

  // ---- the control plane: non-blocking MPI calls polled until the deadline --------------
  /// Collective: n bytes from every rank, in rank order, into out.
  template <class = void>
  void all_gather_bytes(const void* in, void* out, std::size_t n, const deadline& d = deadline::never()) const {
    detail::all_gather_bytes(h_, in, out, n, d);
  }
  /// Collective: element-wise maximum of n words over every rank, in place.
  template <class = void>
  void all_reduce_max(std::uint64_t* words, std::size_t n, const deadline& d = deadline::never()) const {
    detail::all_reduce_max(h_, words, n, d);
  }
  /// Collective: MPI_Comm_idup, bounded. The copy owns its MPI_Comm and returns errors.
  template <class = void>
  communicator duplicate(const deadline& d = deadline::never()) const {
    return duplicate(d, [] {});
  }
  /// The same, running `meanwhile()` once while the MPI_Comm_idup is in flight: local work
  /// hidden behind the communication (device_mesh builds the mesh's descriptor there). An
  /// exception from it is rethrown once the idup is done (the request is never left behind).
  template <class Meanwhile>
  communicator duplicate(const deadline& d, Meanwhile&& meanwhile) const {
    return communicator(detail::duplicate(h_, d, std::forward<Meanwhile>(meanwhile)));
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

  // ---- typed collectives (host memory); counts in elements -----------------------------
  /// MPI_Allreduce of n elements (send == recv: in place); op::avg sums, then divides
  /// (integers exactly, average.hpp).
  template <class T>
  void all_reduce(const T* send, T* recv, std::size_t n, op o, stream_type = {}, const watched_call* watch = nullptr) const {
    detail::all_reduce(h_, send, recv, n, o, watch);
  }
  /// MPI_Reduce of n elements onto rank root (send == recv: in place).
  template <class T>
  void reduce(const T* send, T* recv, std::size_t n, op o, int root, stream_type = {},
              const watched_call* watch = nullptr) const {
    detail::reduce(h_, send, recv, n, o, root, watch);
  }
  /// MPI_Bcast of n elements from rank root.
  template <class T>
  void broadcast(T* buf, std::size_t n, int root, stream_type = {}, const watched_call* watch = nullptr) const {
    detail::broadcast(h_, buf, n, root, watch);
  }
  /// MPI_Allgather: send_count elements from each rank into recv, in rank order.
  template <class T>
  void all_gather(const T* send, T* recv, std::size_t send_count, stream_type = {},
                  const watched_call* watch = nullptr) const {
    detail::all_gather(h_, send, recv, send_count, watch);
  }
  /// MPI_Reduce_scatter_block: block rank() of the reduction, recv_count elements.
  template <class T>
  void reduce_scatter(const T* send, T* recv, std::size_t recv_count, op o, stream_type = {},
                      const watched_call* watch = nullptr) const {
    detail::reduce_scatter(h_, send, recv, recv_count, o, watch);
  }
  /// MPI_Alltoall: block j of send to rank j, block i of recv from rank i.
  template <class T>
  void all_to_all(const T* send, T* recv, std::size_t count_per_rank, stream_type = {},
                  const watched_call* watch = nullptr) const {
    detail::all_to_all(h_, send, recv, count_per_rank, watch);
  }
  /// MPI_Alltoallv: send_counts[j] elements to rank j from send + send_at[j], recv_counts[i]
  /// from rank i into recv + recv_at[i]; empty displacements: packed in rank order
  /// (redistribute's exchanges; an optional member of the concept).
  template <class T>
  void all_to_allv(const T* send, std::span<const std::size_t> send_counts, std::span<const std::size_t> send_at,
                   T* recv, std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_at,
                   stream_type = {}, const watched_call* watch = nullptr) const {
    detail::all_to_allv(h_, send, send_counts, send_at, recv, recv_counts, recv_at, watch);
  }
  /// MPI_Reduce_scatter: rank i receives recv_counts[i] elements of the reduction of the
  /// ranks' packed sends (redistribute's Partial -> Shard; an optional member).
  template <class T>
  void reduce_scatterv(const T* send, T* recv, std::span<const std::size_t> recv_counts, op o,
                       stream_type = {}, const watched_call* watch = nullptr) const {
    detail::reduce_scatterv(h_, send, recv, recv_counts, o, watch);
  }
  /// MPI_Barrier.
  template <class = void>
  void barrier(stream_type = {}, const watched_call* watch = nullptr) const { detail::barrier(h_, watch); }
  /// MPI_Sendrecv; dest/source -1: no send/receive on that side (MPI_PROC_NULL).
  template <class T>
  void sendrecv(const T* send, std::size_t send_count, int dest, T* recv, std::size_t recv_count, int source,
                stream_type = {}, const watched_call* watch = nullptr) const {
    detail::sendrecv(h_, send, send_count, dest, recv, recv_count, source, watch);
  }

 private:
  explicit communicator(detail::comm_handle h) noexcept : h_(std::move(h)) {}

  detail::comm_handle h_;
};

static_assert(devmesh::communicator<communicator>);

}  // namespace devmesh::mpi
