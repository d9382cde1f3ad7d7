// devmesh/runtime/backend.hpp: what a communicator backend must provide (dm::mpi, dm::nccl).
//
// device_mesh<Layout, Comm> is written against this concept only. A backend wraps one
// native communicator (MPI_Comm, ncclComm_t) with RAII and exposes: its rank and size, a
// collective split by (color, key), a host-memory all-gather of bytes for the mesh-wide
// consistency check, an abort for failure paths, and the collectives over an element type
// given as a value (element_type.hpp): one function per collective, not one per element type,
// so that the runtime above it is compiled once per backend.
#pragma once
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../core/config.hpp"
#include "deadline.hpp"
#include "element_type.hpp"

namespace devmesh {

/// Reduction operators of the typed collectives.
enum class op { sum, prod, min, max, avg };

/// Name of a reduction operator, for messages.
constexpr const char* op_name(op o) {
  switch (o) {
    case op::sum: return "sum";
    case op::prod: return "prod";
    case op::min: return "min";
    case op::max: return "max";
    case op::avg: return "avg";
  }
  return "?";
}

/// Stream argument of backends that have none (MPI): collectives take it and ignore it.
struct no_stream {};

namespace detail {
/// True when the bytes [a, a + na) and [b, b + nb) overlap: a collective's send and recv that
/// alias other than in place (MPI forbids it; NCCL reads send while it writes recv), so the
/// backend sends a copy.
inline bool bytes_overlap(const void* a, std::size_t na, const void* b, std::size_t nb) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return na && nb && x < y + nb && y < x + na;
}
/// The same for na and nb elements of T.
template <class T>
bool buffers_overlap(const T* a, std::size_t na, const T* b, std::size_t nb) {
  return bytes_overlap(a, na * sizeof(T), b, nb * sizeof(T));
}
}  // namespace detail

/// Color passed to split() by ranks that belong to no group of the split (meshes smaller
/// than the world): they get an invalid communicator back.
inline constexpr int no_color = -1;

/// A communicator backend. C is move-only and owns its native handle (or not, see
/// adopt/borrow in each backend). rank()/size() are of this communicator.
template <class C>
concept communicator = std::movable<C> && requires(C& c, const C& cc, int color, int key,
                                                   const typename C::options_type& opts,
                                                   const void* in, void* out, std::size_t n,
                                                   std::uint64_t* words, const deadline& d, element_type t,
                                                   op o, int peer, typename C::stream_type s) {
  typename C::native_type;
  typename C::options_type;   // per-communicator creation options (NCCL config, MPI info)
  typename C::stream_type;    // cudaStream_t for NCCL, no_stream for MPI
  { cc.valid() } -> std::same_as<bool>;
  { cc.rank() } -> std::same_as<int>;
  { cc.size() } -> std::same_as<int>;
  { cc.native() } -> std::same_as<typename C::native_type>;
  // Collective over cc: every rank of cc calls it. color == no_color: no group, invalid C.
  { cc.split(color, key, opts) } -> std::same_as<C>;
  // The control plane: devmesh's own collective steps, in host memory, each bounded by a
  // deadline. Past it they throw devmesh::timeout_error, and cc is unusable afterwards.
  // n bytes from every rank, gathered in rank order into out:
  { cc.all_gather_bytes(in, out, n, d) } -> std::same_as<void>;
  // In place, element-wise maximum of n words over every rank (min is max of ~x):
  { cc.all_reduce_max(words, n, d) } -> std::same_as<void>;
  // A communicator of the same ranks in the same order that no one else uses (the mesh's
  // private control plane; MPI_Comm_idup). Collective over cc.
  { cc.duplicate(d) } -> std::same_as<C>;
  // Best-effort abort of this communicator's pending work; never throws.
  { c.abort() } noexcept;
  { C::backend_name() } -> std::convertible_to<const char*>;
  // Batching of calls across communicators (ncclGroupStart/End; no-ops for MPI).
  { C::group_start() } -> std::same_as<void>;
  { C::group_end() } -> std::same_as<void>;
  // Whether the backend has a datatype for T (a variable template; checked for one type here,
  // by the typed collectives for theirs): a type it cannot carry is a compile error naming it.
  { C::template carries<float> } -> std::convertible_to<bool>;
  // The collectives, over an element type given as a value (counts are elements; send == recv
  // means in place; peers are ranks of this communicator, -1 for none). Each may take one more,
  // last argument, the watchdog's (watchable and stream_watchable below), defaulted.
  cc.all_reduce(in, out, n, t, o, s);
  cc.reduce(in, out, n, t, o, peer, s);
  cc.broadcast(out, n, t, peer, s);
  cc.all_gather(in, out, n, t, s);       // n: elements sent by each rank
  cc.reduce_scatter(in, out, n, t, o, s);  // n: elements received by each rank
  cc.all_to_all(in, out, n, t, s);       // n: elements to each rank
  cc.barrier(s);
  cc.sendrecv(in, n, peer, out, n, peer, t, s);
};

/// A backend with a watchdog (the MPI backend): `static constexpr bool watchable = true;`,
/// and every collective takes one more, last argument, `const watched_call* watch`
/// (nullptr: as without it). Given, the call must complete by watch->until, or throw
/// watchdog_timeout (with the ranks that did not answer its roll call) and leave the
/// communicator unusable (never wait longer).
template <class C>
concept watchable = requires {
  requires C::watchable;
};

/// A backend whose collectives run on streams, watched through events (the NCCL backend;
/// runtime/stream_watchdog.hpp): `static constexpr bool stream_watchable = true;`, a
/// `watch_type` (its event_type `event` in and out, `wait`, `unwatched`, `keep`: nccl/watch.hpp)
/// whose address every collective takes as one more, last argument (nullptr: as
/// without it), `static int query_event(event_type)` (1 done, 0 not yet, -1 failed), `static
/// void destroy_event(event_type)`, `void abort(const std::string& why)`, and the roll call's
/// `roll_call_unavailable()`, `post_note(to, words)` and `take_note(from, words)` (two words).
template <class C>
concept stream_watchable = requires(const C& c, int to, int& from, const std::uint64_t (&in)[2],
                                    std::uint64_t (&out)[2], typename C::watch_type& w) {
  requires C::stream_watchable;
  { w.event } -> std::convertible_to<typename C::event_type>;
  { C::query_event(w.event) } -> std::same_as<int>;
  C::destroy_event(w.event);
  { c.roll_call_unavailable() } -> std::convertible_to<std::string>;
  { c.post_note(to, in) } -> std::same_as<bool>;
  { c.take_note(from, out) } -> std::same_as<bool>;
};

/// Optional members device_mesh uses when a backend has them (the MPI backend has both):
///
///   C split_group(std::span<const int> ranks, const options_type&) const;
///
/// a split whose groups the caller already knows, used instead of split(): `ranks` are the
/// ranks of this communicator in the caller's group, in the new communicator's order (empty:
/// no group, an invalid C). Collective over the group's members only; every member makes the
/// same sequence of such calls on one communicator.
///
///   C duplicate(const deadline&, detail::call_ref<void> meanwhile) const;
///
/// duplicate(d) that runs meanwhile() once while the duplicate is in flight (device_mesh
/// describes the mesh there), rethrowing its exception once the duplicate is done.
///
/// Two optional members, the v-collectives (both backends have them; dm::redistribute
/// runs on a backend that has them, and gives any other backend a static_assert; counts and
/// displacements in elements, empty displacements meaning packed in rank order,
/// runtime/block_starts.hpp). A backend on device memory also names its memory space for
/// redistribute's blocks, `using memory_space = ...;` (redistribute/memory.hpp). A backend
/// whose counts are narrower than size_t says so, `static constexpr std::size_t max_count`
/// (MPI: INT_MAX), and redistribute refuses larger blocks before communicating.
///
///   void all_to_allv(const void* send, std::span<const std::size_t> send_counts,
///       std::span<const std::size_t> send_at, void* recv, std::span<const std::size_t> recv_counts,
///       std::span<const std::size_t> recv_at, element_type, stream_type) const;
///   void reduce_scatterv(const void* send, void* recv, std::span<const std::size_t> recv_counts,
///       element_type, op, stream_type) const;
///
/// One optional free function, found by argument-dependent lookup (both backends have it):
///
///   std::vector<int> node_of_ranks(const C& c, const deadline& d);
///
/// collective over c: the node of every rank of c (ids 0..n-1, by lowest rank), the same on
/// every rank, bounded by d. init_device_mesh calls it on its control communicator when the
/// options ask for the nodes (topology, intra_node, node_major); without it those options
/// throw on every rank.

/// The collectives above are what device_mesh calls, each compiled once per backend (the typed
/// layer checks the buffers and turns T into element_type_of<T>, the backend maps the
/// element type to its datatype at run time). device_mesh adds the checks that need the mesh
/// (buffer sizes divisible by the dim size, roots in range) and forwards to these. The shipped
/// backends also keep typed members over pointers to T (all_reduce(const T*, T*, n, op)...)
/// for code that calls a communicator directly; those are conveniences, not the contract.

}  // namespace devmesh
