// devmesh/runtime/impl/recorder.hpp: the flight recorder of a root mesh (flight_recorder.hpp's
// records are what it keeps): a ring of a fixed number of entries, allocated once at init;
// recording a call allocates nothing and costs two clock reads and an atomic increment
// (bench/dispatch.cpp). Only the compiled runtime records: no typed code sees the ring.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "../../core/config.hpp"
#include "../flight_recorder.hpp"

namespace devmesh::detail {

/// Nanoseconds on the steady clock (CLOCK_MONOTONIC: one clock for every process of a node).
inline std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The recorder's clock: the CPU's time-stamp counter where there is one (x86-64: a few ns,
/// where steady_clock::now() costs 20-40), else steady_ns(); ticks become steady-clock ns when
/// the record is read (flight_recorder::entries).
inline std::int64_t ticks() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  return static_cast<std::int64_t>(__builtin_ia32_rdtsc());
#else
  return steady_ns();
#endif
}

/// Ticks to steady-clock ns: two (ticks, ns) readings, one at init and one when converting.
struct tick_clock {
  std::int64_t ticks0 = ticks(), ns0 = steady_ns();
  /// t (ticks) in steady-clock ns, by the rate measured between init and now.
  std::int64_t to_ns(std::int64_t t, std::int64_t ticks_now, std::int64_t ns_now) const {
    const double rate =
        ticks_now > ticks0 ? static_cast<double>(ns_now - ns0) / static_cast<double>(ticks_now - ticks0) : 1.0;
    return ns0 + static_cast<std::int64_t>(static_cast<double>(t - ticks0) * rate);
  }
};
/// The ring. start() claims the next slot (an atomic increment: collectives on two dims may
/// run on two threads); finish() writes the end unless the slot was reused meanwhile.
class flight_recorder {
 public:
  /// A recorded call in flight: finish() it once.
  struct token {
    flight_entry* e = nullptr;
    std::uint64_t id = 0;
    void finish(call_state s) const noexcept {
      if (!e || e->id != id) return;  // recorder off, or the ring went round meanwhile
      e->end_ns = ticks();  // ticks until entries() converts them
      e->state = s;
    }
  };

  explicit flight_recorder(std::size_t capacity = 0) { resize(capacity); }
  /// Allocates the ring (init, before any call): `capacity` entries, rounded up to a power
  /// of two (a slot is then a mask, not a division).
  DEVMESH_DECL void resize(std::size_t capacity);
  std::size_t capacity() const { return capacity_; }

  /// Records the start of `what` on channel c (its next number); a null token when off.
  token start(const channel& c, std::string_view what, std::string_view type, std::uint64_t count) noexcept {
    const std::uint64_t seq = ++c.calls;
    if (!capacity_) return {};
    const std::uint64_t id = next_.fetch_add(1, std::memory_order_relaxed) + 1;
    flight_entry& e = ring_[(id - 1) & (capacity_ - 1)];
    e.id = id, e.seq = seq, e.on = &c, e.what = what, e.type = type, e.count = count;  // in place: no temporary
    e.start_ns = ticks(), e.end_ns = 0, e.state = call_state::issued;
    return {&e, id};
  }

  /// The entries, oldest first, times in steady-clock ns.
  DEVMESH_DECL std::vector<flight_entry> entries() const;
  /// Calls recorded so far (the ring keeps the last capacity() of them).
  std::uint64_t recorded() const { return next_.load(std::memory_order_relaxed); }

 private:
  std::unique_ptr<flight_entry[]> ring_;  // times in ticks
  std::size_t capacity_ = 0;
  tick_clock clock_;
  std::atomic<std::uint64_t> next_{0};
};

}  // namespace devmesh::detail
