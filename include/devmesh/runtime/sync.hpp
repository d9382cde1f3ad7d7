// devmesh/runtime/sync.hpp: the runtime's synchronisation, at the cost of what it uses: a
// mutex with its lock_guard, and atomic integers (counts, a phase) with load, store,
// fetch_add and fetch_sub. <atomic> and <mutex> together cost +0.20 G of g++ instructions
// in every TU that includes devmesh.hpp (docs/benchmarks.md, issue 21 item 5), for C++20's
// wait/notify, timed waits and the lock types devmesh does not use. With libstdc++, std::mutex
// and std::lock_guard come from <bits/std_mutex.h>; with the GNU atomic builtins (g++,
// clang, nvcc's host compilers) atomic_word is an integer read and written by them, which
// ThreadSanitizer sees as atomics. Elsewhere both are the standard headers' types.
#pragma once
#include <cstddef>  // defines __GLIBCXX__ on libstdc++
#if defined(__GLIBCXX__)
#include <bits/std_mutex.h>
#else
#include <mutex>
#endif
#if !defined(__GNUC__)
#include <atomic>
#endif

namespace devmesh::detail {

/// The memory orders atomic_word takes (std::memory_order's, by the same names).
enum class word_order : int {
#if defined(__GNUC__)
  relaxed = __ATOMIC_RELAXED,
  acquire = __ATOMIC_ACQUIRE,
  release = __ATOMIC_RELEASE,
  acq_rel = __ATOMIC_ACQ_REL,
#else
  relaxed = static_cast<int>(std::memory_order_relaxed),
  acquire = static_cast<int>(std::memory_order_acquire),
  release = static_cast<int>(std::memory_order_release),
  acq_rel = static_cast<int>(std::memory_order_acq_rel),
#endif
};

/// An integer T that threads read and write atomically (std::atomic<T>'s part the runtime
/// uses). Constant-initialized from a constant, as std::atomic.
template <class T>
class atomic_word {
#if defined(__GNUC__)
  T value_;
  static constexpr int native(word_order o) noexcept { return static_cast<int>(o); }
#define DEVMESH_WORD_CALL_(gnu, std_name, ...) __atomic_##gnu(&value_, __VA_ARGS__)
#else
  std::atomic<T> value_;
  static constexpr std::memory_order native(word_order o) noexcept { return std::memory_order(static_cast<int>(o)); }
#define DEVMESH_WORD_CALL_(gnu, std_name, ...) value_.std_name(__VA_ARGS__)
#endif

 public:
  constexpr atomic_word(T v = T{}) noexcept : value_(v) {}  // NOLINT: implicit, as std::atomic's
  atomic_word(const atomic_word&) = delete;
  atomic_word& operator=(const atomic_word&) = delete;
  /// The value.
  T load(word_order o) const noexcept { return DEVMESH_WORD_CALL_(load_n, load, native(o)); }
  /// Sets the value to v.
  void store(T v, word_order o) noexcept { DEVMESH_WORD_CALL_(store_n, store, v, native(o)); }
  /// Adds v; returns the value before.
  T fetch_add(T v, word_order o) noexcept { return DEVMESH_WORD_CALL_(fetch_add, fetch_add, v, native(o)); }
  /// Subtracts v; returns the value before.
  T fetch_sub(T v, word_order o) noexcept { return DEVMESH_WORD_CALL_(fetch_sub, fetch_sub, v, native(o)); }
#undef DEVMESH_WORD_CALL_
};

}  // namespace devmesh::detail
