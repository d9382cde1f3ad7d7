// devmesh/runtime/impl/collective_calls.hpp: mesh_runtime's collectives: the checks that need the
// dim (sizes, roots), the check mode's agreement, and the call, recorded and watched
// (tracked_call.hpp). They see a mesh only through a dim_site and an element type only as a
// value (element_type.hpp), so they are compiled once per backend: a program with many mesh
// types, dims or element types does not compile them again for each (the members of
// collectives_of, collectives.hpp, only build the site and the element type).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "../../core/diagnostics.hpp"
#include "../backend.hpp"
#include "../element_type.hpp"
#include "../mesh_runtime.hpp"
#include "../text_ref.hpp"
#include "collective_check.hpp"
#include "consensus.hpp"
#include "descriptor.hpp"
#include "init.hpp"
#include "mesh_state.hpp"
#include "tracked_call.hpp"

namespace devmesh::detail {

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
    check_call(on.comm(), signature(what, t, ns, nr, root, reduction, ++on.entry.agreed_calls), t.name, on.where(),
               on.state.start_step());
}
/// Makes the call (`issue(watch...)`) as every collective is made: recorded in the root's
/// flight record (`type`: the element type's name, empty for none) and, under the watchdog,
/// bounded.
template <communicator Comm, class Issue>
void run(const dim_site<Comm>& on, std::string_view what, std::string_view type, std::size_t count,
         const Issue& issue) {
  const text_ref where(&on, [](const void* site) { return static_cast<const dim_site<Comm>*>(site)->where(); });
  tracked_call(full_state(on.state), on.watch, on.entry, what, type, count, where, issue);
}

template <communicator Comm>
void mesh_runtime<Comm>::agree_on_call(state& st, const entry& group, const std::string& text,
                                       const std::string& local_error) {
  const deadline dl = st.start_step();
  // the call's number on the group: a rank one call behind or ahead differs (call #n)
  std::string_view what = text;
  if (what.starts_with("devmesh: ")) what.remove_prefix(9);
  descriptor mine = descriptor::of_text("call #" + std::to_string(++group.agreed_calls) + ": " + std::string(what));
  mine.subject = "the call";
  const step_outcome checked[] = {{text, local_error}};
  agree_all(*group.comm, text, checked, &mine, {}, dl);  // one all-reduce of agreement_words
}

template <communicator Comm>
void mesh_runtime<Comm>::collective(state& st, bool watch, const entry& e, std::string_view what,
                                    std::string_view type, std::size_t count, text_ref where, issue_ref issue) {
  tracked_call(full_state(st), watch, e, what, type, count, where, [&](auto... w) {
    if constexpr (sizeof...(w) == 0) issue(*e.comm, watch_ptr<Comm>{});
    else issue(*e.comm, w...);
  });
}

template <communicator Comm>
void mesh_runtime<Comm>::barrier(const site& on, stream s) {
  agree_on(on, call::barrier, element_type_of<char>, 0, 0, 0, 0);
  run(on, "barrier", {}, 0, [&](auto... w) { on.comm().barrier(s, w...); });
}
template <communicator Comm>
void mesh_runtime<Comm>::all_reduce(const site& on, const void* send, void* recv, std::size_t ns, std::size_t nr,
                                    element_type t, op o, stream s) {
  agree_on(on, call::all_reduce, t, ns, nr, 0, static_cast<int>(o) + 1);
  check_equal("all_reduce", on, ns, nr);
  run(on, "all_reduce", t.name, ns, [&](auto... w) { on.comm().all_reduce(send, recv, ns, t, o, s, w...); });
}
template <communicator Comm>
void mesh_runtime<Comm>::reduce(const site& on, const void* send, void* recv, std::size_t ns, std::size_t nr,
                                element_type t, op o, int root, stream s) {
  agree_on(on, call::reduce, t, ns, nr, root, static_cast<int>(o) + 1);
  check_root("reduce", on, root);
  check_equal("reduce", on, ns, nr);
  run(on, "reduce", t.name, ns, [&](auto... w) { on.comm().reduce(send, recv, ns, t, o, root, s, w...); });
}
template <communicator Comm>
void mesh_runtime<Comm>::broadcast(const site& on, void* buf, std::size_t n, element_type t, int root, stream s) {
  agree_on(on, call::broadcast, t, n, n, root, 0);
  check_root("broadcast", on, root);
  run(on, "broadcast", t.name, n, [&](auto... w) { on.comm().broadcast(buf, n, t, root, s, w...); });
}
template <communicator Comm>
void mesh_runtime<Comm>::all_gather(const site& on, const void* send, void* recv, std::size_t ns, std::size_t nr,
                                    element_type t, stream s) {
  agree_on(on, call::all_gather, t, ns, nr, 0, 0);
  if (nr != ns * on.size)
    size_error("all_gather", on, "recv has " + std::to_string(nr) + " elements; it needs send's " +
                                     std::to_string(ns) + " times the dim size " + std::to_string(on.size));
  run(on, "all_gather", t.name, ns, [&](auto... w) { on.comm().all_gather(send, recv, ns, t, s, w...); });
}
template <communicator Comm>
void mesh_runtime<Comm>::reduce_scatter(const site& on, const void* send, void* recv, std::size_t ns,
                                        std::size_t nr, element_type t, op o, stream s) {
  agree_on(on, call::reduce_scatter, t, ns, nr, 0, static_cast<int>(o) + 1);
  check_divisible("reduce_scatter", on, ns);
  if (ns != nr * on.size)
    size_error("reduce_scatter", on, "send has " + std::to_string(ns) + " elements; it needs recv's " +
                                         std::to_string(nr) + " times the dim size " + std::to_string(on.size));
  run(on, "reduce_scatter", t.name, ns, [&](auto... w) { on.comm().reduce_scatter(send, recv, nr, t, o, s, w...); });
}
template <communicator Comm>
void mesh_runtime<Comm>::all_to_all(const site& on, const void* send, void* recv, std::size_t ns, std::size_t nr,
                                    element_type t, stream s) {
  agree_on(on, call::all_to_all, t, ns, nr, 0, 0);
  check_divisible("all_to_all", on, ns);
  check_equal("all_to_all", on, ns, nr);
  const std::size_t per_rank = ns / on.size;
  run(on, "all_to_all", t.name, ns, [&](auto... w) { on.comm().all_to_all(send, recv, per_rank, t, s, w...); });
}
template <communicator Comm>
void mesh_runtime<Comm>::shift(const site& on, int source, int dest, const void* send, void* recv, std::size_t ns,
                               std::size_t nr, element_type t, int displacement, bool periodic, stream s) {
  agree_on(on, call::shift, t, ns, nr, displacement, periodic ? 1 : 0);
  check_equal("shift", on, ns, nr);
  run(on, "shift", t.name, ns,
      [&](auto... w) { on.comm().sendrecv(send, ns, dest, recv, nr, source, t, s, w...); });
}
template <communicator Comm>
void mesh_runtime<Comm>::send_next(const site& on, int dest, const void* send, std::size_t n, element_type t,
                                   stream s) {
  run(on, "send_next", t.name, n,
      [&](auto... w) { on.comm().sendrecv(send, n, dest, static_cast<void*>(nullptr), 0, -1, t, s, w...); });
}
template <communicator Comm>
void mesh_runtime<Comm>::recv_prev(const site& on, int source, void* recv, std::size_t n, element_type t, stream s) {
  run(on, "recv_prev", t.name, n,
      [&](auto... w) { on.comm().sendrecv(static_cast<const void*>(nullptr), 0, -1, recv, n, source, t, s, w...); });
}

}  // namespace devmesh::detail
