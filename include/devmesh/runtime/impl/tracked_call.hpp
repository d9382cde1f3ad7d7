// devmesh/runtime/impl/tracked_call.hpp: how every collective devmesh issues is made: recorded in
// the root's flight record (flight_recorder.hpp) and, with the watchdog on, bounded. The typed
// collectives (collectives.hpp) and redistribute's steps both go through tracked_call.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/diagnostics.hpp"
#include "../backend.hpp"
#include "collective_check.hpp"
#include "comm_cache.hpp"
#include "consensus.hpp"
#include "../deadline.hpp"
#include "../flight_recorder.hpp"
#include "recorder.hpp"
#include "mesh_state.hpp"
#include "../text_ref.hpp"

namespace devmesh::detail {

/// The watchdog fired on e's call: the root's communicators are aborted, the flight record is
/// written (DEVMESH_FLIGHT_RECORD), and this rank throws comm_error (every rank of the group
/// that waited does the same). Out of line, once per backend: not in every call site.
template <communicator Comm>
[[noreturn, gnu::cold, gnu::noinline]] void watchdog_fired(mesh_state<Comm>& st, const channel& e,
                                                           std::string_view what, const std::string& where,
                                                           const watched_call& watch, const watchdog_timeout& x,
                                                           const flight_recorder::token& recorded) {
  recorded.finish(x.gave_up.empty() ? call_state::timed_out : call_state::failed);
  const std::string call = std::string(what) + " on " + where + ", call #" + std::to_string(watch.seq) + " on this dim, ";
  const std::string why = x.gave_up.empty()
                              ? call + "did not complete within " + watch.until.describe() +
                                    " (the watchdog: options.watchdog, DEVMESH_WATCHDOG)"
                              : call + "completed on this rank after " + gave_up_phrase(e, x.gave_up) +
                                    " gave up on it (their watchdog: options.watchdog, DEVMESH_WATCHDOG)";
  st.abort("the watchdog aborted the mesh: " + why);
  throw comm_error("devmesh: " + why + "; " +
                   (x.gave_up.empty() ? absent_phrase(e, x.absent)
                                      : std::string("its result is not delivered, as theirs was not")) +
                   "; this mesh's communicators are aborted (every later call throws)" + st.dump_record());
}

/// The watchdog's path on a host backend (MPI): issue(&bound), which must complete within
/// the bound (watchdog_fired past it).
template <communicator Comm, class Issue>
  requires watchable<Comm>
void watched_call_on(mesh_state<Comm>& st, const comm_entry<Comm>& e, std::string_view what,
                     const flight_recorder::token& recorded, text_ref where, const Issue& issue) {
  const watched_call watch{deadline::after(st.watchdog), e.calls};
  try {
    issue(&watch);
  } catch (const watchdog_timeout& x) {
    watchdog_fired(st, e, what, where(), watch, x, recorded);
  } catch (...) {
    recorded.finish(call_state::failed);
    throw;
  }
  recorded.finish(call_state::completed);
}

/// The watchdog's path on a stream backend (NCCL: stream_watchdog.hpp): under the issue lock,
/// `issue(&w)` enqueues the call and records an event after it, which the watchdog's thread
/// then polls; a call that must wait for its work (barrier) waits here, watched.
template <communicator Comm, class Issue>
void stream_watched_call(mesh_state<Comm>& st, const comm_entry<Comm>& e, std::string_view what,
                         std::string_view type, std::size_t count, text_ref where, const Issue& issue) {
  auto& wd = st.streams;
  auto issuing = wd.enter(st, what, where);
  const auto recorded = st.recorder.start(e, what, type, count);
  typename Comm::watch_type w{};
  w.event = wd.take_event();
  try {
    issue(&w);
  } catch (...) {
    recorded.finish(call_state::failed);
    if (w.event) Comm::destroy_event(w.event);
    throw;
  }
  const std::uint64_t id = wd.add(e, what, recorded, w, st.watchdog, where);
  issuing.unlock();
  if (w.wait && id) wd.wait(id, what, where);
}

/// Makes a collective on e's communicator: `issue()`, or under the watchdog (`watch`)
/// `issue(&bound)` (a stream backend: `issue(&w)`, stream_watched_call), recorded as call number e.calls on e's dim (`type`: its element type,
/// empty for none). `where()` names the dim for messages (only called on failure).
template <communicator Comm, class Issue>
void tracked_call(mesh_state<Comm>& st, bool watch, const comm_entry<Comm>& e, std::string_view what,
                  std::string_view type, std::size_t count, text_ref where, const Issue& issue) {
  if constexpr (stream_watchable<Comm>)
    if (watch) [[unlikely]]
      return stream_watched_call(st, e, what, type, count, where, issue);
  const auto recorded = st.recorder.start(e, what, type, count);
  // Each backend instantiates its own watched path only (init refuses a watchdog on a backend
  // that has none).
  if constexpr (watchable<Comm> && !stream_watchable<Comm>)
    if (watch) [[unlikely]]
      return watched_call_on(st, e, what, recorded, where, issue);
  try {
    issue();
  } catch (...) {
    recorded.finish(call_state::failed);
    throw;
  }
  recorded.finish(std::is_same_v<typename Comm::stream_type, no_stream> ? call_state::completed
                                                                         : call_state::enqueued);
}

}  // namespace devmesh::detail
