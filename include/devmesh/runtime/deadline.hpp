// devmesh/runtime/deadline.hpp: the bound on every collective step devmesh takes on its own
// behalf (init agreement, consistency check, communicator creation, flatten, unflatten,
// from_comms validation, the collective check mode).
//
// A rank that skips such a step, waits elsewhere or died must not leave the others waiting
// forever: each step polls non-blocking collectives until its deadline, then throws
// timeout_error. The bound comes from device_mesh_options::timeout, else the environment
// (DEVMESH_TIMEOUT=<seconds>), else 600 s: generous, because a slow, oversubscribed or
// loaded machine is not a hang.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/config.hpp"
#include "../core/diagnostics.hpp"
#include "text_ref.hpp"

namespace devmesh {

/// A control step did not complete before its deadline: some rank did not arrive. Every
/// rank that was waiting throws it; the communicator it waited on is unusable afterwards
/// (its pending operation can never be matched again).
class timeout_error : public mesh_error {
 public:
  using mesh_error::mesh_error;
};

/// When a control step must be done by, and the bound it came from (for messages).
struct deadline {
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::time_point::max();
  std::chrono::milliseconds bound{0};

  /// The deadline b from now.
  static deadline after(std::chrono::milliseconds b) {
    return {std::chrono::steady_clock::now() + b, b};
  }
  /// No deadline: wait for ever.
  static deadline never() { return {}; }
  /// True once the deadline is past.
  bool passed() const { return std::chrono::steady_clock::now() >= at; }
  /// "3 s" / "2.5 s" / "no deadline"
  DEVMESH_DECL std::string describe() const;
};

/// The watchdog's bound on one collective (runtime/backend.hpp's `watchable`): when it must
/// be done by, and its number on its communicator (from 1), which the ranks exchange when it
/// times out to tell who arrived.
struct watched_call {
  deadline until;
  std::uint64_t seq = 0;
};

/// A watched collective that did not complete by its deadline. `absent`: the ranks of its
/// communicator that did not answer the backend's roll call, i.e. were not in the call. Or
/// one that completed on this rank after others had given up on it (`gave_up`: those ranks,
/// whose watchdogs fired first): its result is not delivered, as theirs was not.
class watchdog_timeout : public timeout_error {
 public:
  /// The message and the ranks that did not answer (or, gave_up_ranks, that gave up).
  watchdog_timeout(const std::string& what, std::vector<int> absent_ranks, std::vector<int> gave_up_ranks = {})
      : timeout_error(what), absent(std::move(absent_ranks)), gave_up(std::move(gave_up_ranks)) {}
  std::vector<int> absent;
  std::vector<int> gave_up;
};

inline constexpr std::chrono::milliseconds default_timeout = std::chrono::seconds(600);
/// The largest bound devmesh takes (options or environment): 10^9 s, about 31 years. Larger,
/// a deadline (now + bound, in steady_clock's nanoseconds) could overflow the clock.
inline constexpr std::chrono::milliseconds max_bound = std::chrono::seconds(1000000000);

/// Seconds from the environment variable `var` (> 0, decimals allowed; with `zero_is_off`,
/// also 0, read as 0 ms), else `fallback`. A malformed value is an error, not silently the
/// default.
DEVMESH_DECL std::chrono::milliseconds seconds_from_env(const char* var, std::chrono::milliseconds fallback,
                                                        bool zero_is_off = false);

namespace detail {
/// The milliseconds of `v` by the one rule for seconds (what DEVMESH_TIMEOUT and
/// DEVMESH_WATCHDOG take): digits, optionally a point and at most three more digits, nothing
/// else; > 0 (or 0 with zero_is_off), <= 10^9 s. -1 if `v` breaks it.
DEVMESH_DECL long long parse_seconds(std::string_view v, bool zero_is_off);
/// "devmesh: <what>='<value>' is not a number of seconds: ..." (the rule).
DEVMESH_DECL std::string seconds_rule_error(std::string_view what, std::string_view value, bool zero_is_off);
}  // namespace detail

/// The bound set by DEVMESH_TIMEOUT (seconds, > 0, decimals allowed), else `fallback`.
DEVMESH_DECL std::chrono::milliseconds timeout_from_env(std::chrono::milliseconds fallback = default_timeout);

/// True when DEVMESH_CHECK_COLLECTIVES is set to anything but "", "0", "false" or "off".
DEVMESH_DECL bool check_collectives_from_env();

/// A switch from the environment: `fallback` when `var` is unset or empty, else its value,
/// which must be 0 or 1 (anything else: mesh_error naming it, never a guess).
DEVMESH_DECL bool switch_from_env(const char* var, bool fallback);

namespace detail {

/// Polls `done()` until it is true or `d` passes (then returns false). Non-blocking MPI
/// collectives progress only while their ranks poll, round after round, so the first 2 ms
/// poll continuously (yielding the core: 8 ranks on 2 cores must all progress); only a
/// step that is really waiting for a late rank sleeps, in naps of 50 to 500 us.
DEVMESH_DECL bool poll_until(const deadline& d, call_ref<bool> done);

}  // namespace detail
}  // namespace devmesh

#if DEVMESH_INLINE_DEFINITIONS
#include "impl/deadline.ipp"
#endif
