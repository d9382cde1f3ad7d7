// devmesh/runtime/collective_calls.hpp: the typed collectives' bodies: the checks that need
// the dim (sizes, roots), the check mode's agreement, and the call, recorded and watched
// (tracked_call.hpp). They see a mesh only through a dim_site and an element type only as a
// value (element_type.hpp), so they are compiled once per backend: a program with many mesh
// types, dims or element types does not compile them again for each (the members of
// collectives_of, collectives.hpp, only build the site and the element type).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "../core/diagnostics.hpp"
#include "backend.hpp"
#include "collective_check.hpp"
#include "element_type.hpp"
#include "comm_cache.hpp"
#include "mesh_state.hpp"
#include "text_ref.hpp"
#include "tracked_call.hpp"

namespace devmesh::detail {

/// What a collective needs of its mesh, for one dim: built by the mesh per call (a few loads).
template <communicator Comm>
struct dim_site {
  const comm_entry<Comm>& entry;  // the dim's communicator and channel
  mesh_state<Comm>& state;        // the root's state: flight record, watchdog, deadlines
  std::size_t size;               // the dim's size
  bool check;                     // the collective check mode (DEVMESH_CHECK_COLLECTIVES)
  bool watch;                     // the watchdog
  const void* mesh;               // for where(), on failure only
  int dim;
  std::string (*where_of)(const void* mesh, int dim);
  /// "dim 'dp' of mesh(...)", for messages.
  std::string where() const { return where_of(mesh, dim); }
  /// where(), as the tracked call takes it (one function per backend, not per call).
  text_ref where_ref() const {
    return {this, [](const void* site) { return static_cast<const dim_site*>(site)->where(); }};
  }
  const Comm& comm() const { return *entry.comm; }
};

template <communicator Comm>
[[noreturn, gnu::cold, gnu::noinline]] void size_error(const char* what, const dim_site<Comm>& on,
                                                       const std::string& detail) {
  throw mesh_error("devmesh: " + std::string(what) + " on " + on.where() + ": " + detail);
}
template <communicator Comm>
void check_root(const char* what, const dim_site<Comm>& on, int root) {
  if (root < 0 || static_cast<std::size_t>(root) >= on.size)
    size_error(what, on, "root " + std::to_string(root) + " is not in [0, " + std::to_string(on.size) + ")");
}
template <communicator Comm>
void check_equal(const char* what, const dim_site<Comm>& on, std::size_t ns, std::size_t nr) {
  if (ns != nr) size_error(what, on, "send has " + std::to_string(ns) + " elements, recv " + std::to_string(nr));
}
template <communicator Comm>
void check_divisible(const char* what, const dim_site<Comm>& on, std::size_t ns) {
  if (ns % on.size != 0)
    size_error(what, on, "send has " + std::to_string(ns) + " elements, not divisible by the dim size " +
                             std::to_string(on.size));
}

/// The collective check mode: the group agrees on the call before making it (off: a branch).
template <communicator Comm>
void agree_on(const dim_site<Comm>& on, call what, element_type t, std::size_t ns, std::size_t nr, long long root,
              int reduction) {
  if (on.check) [[unlikely]]
    check_call(on.comm(), signature(what, t, ns, nr, root, reduction), t.name, on.where(), on.state.start_step());
}
/// Makes the call (`issue(watch...)`) as every collective is made: recorded in the root's
/// flight record (`type`: the element type's name, empty for none) and, under the watchdog,
/// bounded.
template <communicator Comm, class Issue>
void run(const dim_site<Comm>& on, std::string_view what, std::string_view type, std::size_t count,
         const Issue& issue) {
  tracked_call(on.state, on.watch, on.entry, what, type, count, on.where_ref(), issue);
}

/// {source, dest} at `displacement` from coordinate `me` on a dim of `n` (-1 past either end
/// unless periodic), as MPI_Cart_shift.
inline std::pair<int, int> shift_peers(int n, int me, int displacement, bool periodic) {
  auto peer = [&](long long p) {
    if (periodic) return static_cast<int>(((p % n) + n) % n);
    return p < 0 || p >= n ? -1 : static_cast<int>(p);
  };
  return {peer(static_cast<long long>(me) - displacement), peer(static_cast<long long>(me) + displacement)};
}

template <communicator Comm, class Stream>
void barrier_on(const dim_site<Comm>& on, Stream s) {
  agree_on(on, call::barrier, element_type_of<char>, 0, 0, 0, 0);
  run(on, "barrier", {}, 0, [&](auto... w) { on.comm().barrier(s, w...); });
}
template <communicator Comm, class Stream>
void all_reduce_on(const dim_site<Comm>& on, const void* send, void* recv, std::size_t ns, std::size_t nr,
                   element_type t, op o, Stream s) {
  agree_on(on, call::all_reduce, t, ns, nr, 0, static_cast<int>(o) + 1);
  check_equal("all_reduce", on, ns, nr);
  run(on, "all_reduce", t.name, ns, [&](auto... w) { on.comm().all_reduce(send, recv, ns, t, o, s, w...); });
}
template <communicator Comm, class Stream>
void reduce_on(const dim_site<Comm>& on, const void* send, void* recv, std::size_t ns, std::size_t nr, element_type t,
               op o, int root, Stream s) {
  agree_on(on, call::reduce, t, ns, nr, root, static_cast<int>(o) + 1);
  check_root("reduce", on, root);
  check_equal("reduce", on, ns, nr);
  run(on, "reduce", t.name, ns, [&](auto... w) { on.comm().reduce(send, recv, ns, t, o, root, s, w...); });
}
template <communicator Comm, class Stream>
void broadcast_on(const dim_site<Comm>& on, void* buf, std::size_t n, element_type t, int root, Stream s) {
  agree_on(on, call::broadcast, t, n, n, root, 0);
  check_root("broadcast", on, root);
  run(on, "broadcast", t.name, n, [&](auto... w) { on.comm().broadcast(buf, n, t, root, s, w...); });
}
template <communicator Comm, class Stream>
void all_gather_on(const dim_site<Comm>& on, const void* send, void* recv, std::size_t ns, std::size_t nr,
                   element_type t, Stream s) {
  agree_on(on, call::all_gather, t, ns, nr, 0, 0);
  if (nr != ns * on.size)
    size_error("all_gather", on, "recv has " + std::to_string(nr) + " elements; it needs send's " +
                                     std::to_string(ns) + " times the dim size " + std::to_string(on.size));
  run(on, "all_gather", t.name, ns, [&](auto... w) { on.comm().all_gather(send, recv, ns, t, s, w...); });
}
template <communicator Comm, class Stream>
void reduce_scatter_on(const dim_site<Comm>& on, const void* send, void* recv, std::size_t ns, std::size_t nr,
                       element_type t, op o, Stream s) {
  agree_on(on, call::reduce_scatter, t, ns, nr, 0, static_cast<int>(o) + 1);
  check_divisible("reduce_scatter", on, ns);
  if (ns != nr * on.size)
    size_error("reduce_scatter", on, "send has " + std::to_string(ns) + " elements; it needs recv's " +
                                         std::to_string(nr) + " times the dim size " + std::to_string(on.size));
  run(on, "reduce_scatter", t.name, ns, [&](auto... w) { on.comm().reduce_scatter(send, recv, nr, t, o, s, w...); });
}
template <communicator Comm, class Stream>
void all_to_all_on(const dim_site<Comm>& on, const void* send, void* recv, std::size_t ns, std::size_t nr,
                   element_type t, Stream s) {
  agree_on(on, call::all_to_all, t, ns, nr, 0, 0);
  check_divisible("all_to_all", on, ns);
  check_equal("all_to_all", on, ns, nr);
  const std::size_t per_rank = ns / on.size;
  run(on, "all_to_all", t.name, ns, [&](auto... w) { on.comm().all_to_all(send, recv, per_rank, t, s, w...); });
}
/// shift: `peers` = {source, dest} (shift_peers of this rank's coordinate).
template <communicator Comm, class Stream>
void shift_on(const dim_site<Comm>& on, std::pair<int, int> peers, const void* send, void* recv, std::size_t ns,
              std::size_t nr, element_type t, int displacement, bool periodic, Stream s) {
  agree_on(on, call::shift, t, ns, nr, displacement, periodic ? 1 : 0);
  check_equal("shift", on, ns, nr);
  run(on, "shift", t.name, ns,
      [&](auto... w) { on.comm().sendrecv(send, ns, peers.second, recv, nr, peers.first, t, s, w...); });
}
/// send_next: to `dest` (-1: no one); no agreement (a point-to-point pair).
template <communicator Comm, class Stream>
void send_next_on(const dim_site<Comm>& on, int dest, const void* from, std::size_t n, element_type t, Stream s) {
  run(on, "send_next", t.name, n,
      [&](auto... w) { on.comm().sendrecv(from, n, dest, static_cast<void*>(nullptr), 0, -1, t, s, w...); });
}
/// recv_prev: from `source` (-1: no one).
template <communicator Comm, class Stream>
void recv_prev_on(const dim_site<Comm>& on, int source, void* to, std::size_t n, element_type t, Stream s) {
  run(on, "recv_prev", t.name, n,
      [&](auto... w) { on.comm().sendrecv(static_cast<const void*>(nullptr), 0, -1, to, n, source, t, s, w...); });
}

}  // namespace devmesh::detail
