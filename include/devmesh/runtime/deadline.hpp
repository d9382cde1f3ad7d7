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
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>
// std::this_thread::sleep_for, and std::chrono's durations and steady_clock, which the
// options and deadlines use. On libstdc++ from the header that defines sleep_for, which
// brings the clocks and durations (<bits/chrono.h>) and nothing else: C++20 <chrono> adds its
// calendar, time zones and stream output (<sstream>: +0.4 G instructions of g++ in every TU
// that includes the runtime, docs/benchmarks.md), and <thread> adds std::thread, <stop_token>
// and <semaphore> (+0.2 G), which only the NCCL backend's watchdog needs.
#if defined(__GLIBCXX__) && __has_include(<bits/this_thread_sleep.h>)
#include <bits/this_thread_sleep.h>
#else
#include <chrono>
#include <thread>
#endif

#include "../core/diagnostics.hpp"

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
  std::string describe() const {
    if (at == std::chrono::steady_clock::time_point::max()) return "no deadline";
    const double s = static_cast<double>(bound.count()) / 1000.0;
    std::string t = std::to_string(s);
    t.erase(t.find_last_not_of('0') + 1);
    if (!t.empty() && t.back() == '.') t.pop_back();
    return t + " s";
  }
};

/// The watchdog's bound on one collective (runtime/backend.hpp's `watchable`): when it must
/// be done by, and its number on its communicator (from 1), which the ranks exchange when it
/// times out to tell who arrived.
struct watched_call {
  deadline until;
  std::uint64_t seq = 0;
};

/// A watched collective that did not complete by its deadline. `absent`: the ranks of its
/// communicator that did not answer the backend's roll call, i.e. were not in the call.
class watchdog_timeout : public timeout_error {
 public:
  /// The message and the ranks that did not answer.
  watchdog_timeout(const std::string& what, std::vector<int> absent_ranks)
      : timeout_error(what), absent(std::move(absent_ranks)) {}
  std::vector<int> absent;
};

inline constexpr std::chrono::milliseconds default_timeout = std::chrono::seconds(600);

/// Seconds from the environment variable `var` (> 0, decimals allowed; with `zero_is_off`,
/// also 0, read as 0 ms), else `fallback`. A malformed value is an error, not silently the
/// default.
inline std::chrono::milliseconds seconds_from_env(const char* var, std::chrono::milliseconds fallback,
                                                  bool zero_is_off = false) {
  const char* v = std::getenv(var);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (end == v || *end != '\0' || !((s > 0 || (zero_is_off && s == 0)) && s <= 1e9))  // refuses NaN, infinities
    throw mesh_error(std::string("devmesh: ") + var + "='" + v + "' is not a number of seconds > 0" +
                     (zero_is_off ? " (or 0: off)" : "") + " (e.g. " + var + "=600)");
  // Rounded up to whole milliseconds (no <cmath>: 0.4 G instructions of g++ per TU for one ceil).
  const double ms = s * 1000.0;
  const auto whole = static_cast<long long>(ms);
  return std::chrono::milliseconds(whole + (static_cast<double>(whole) < ms ? 1 : 0));
}

/// The bound set by DEVMESH_TIMEOUT (seconds, > 0, decimals allowed), else `fallback`.
inline std::chrono::milliseconds timeout_from_env(std::chrono::milliseconds fallback = default_timeout) {
  return seconds_from_env("DEVMESH_TIMEOUT", fallback);
}

/// True when DEVMESH_CHECK_COLLECTIVES is set to anything but "", "0", "false" or "off".
inline bool check_collectives_from_env() {
  const char* v = std::getenv("DEVMESH_CHECK_COLLECTIVES");
  if (!v) return false;
  const std::string s = v;
  return !(s.empty() || s == "0" || s == "false" || s == "off" || s == "OFF" || s == "False");
}

namespace detail {

/// Polls `done()` until it is true or `d` passes (then returns false). Non-blocking MPI
/// collectives progress only while their ranks poll, round after round, so the first 2 ms
/// poll continuously (yielding the core: 8 ranks on 2 cores must all progress); only a
/// step that is really waiting for a late rank sleeps, in naps of 50 to 500 us.
template <class Done>
bool poll_until(const deadline& d, Done done) {
  const auto spin_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
  while (std::chrono::steady_clock::now() < spin_until)
    if (done()) return true;
  auto nap = std::chrono::microseconds(50);
  for (;;) {
    if (done()) return true;
    if (d.passed()) return done();
    std::this_thread::sleep_for(nap);
    nap = nap * 2 < std::chrono::microseconds(500) ? nap * 2 : std::chrono::microseconds(500);
  }
}

}  // namespace detail
}  // namespace devmesh
