// bench/alloc_counter.hpp: counts global operator new calls, to show a code path is heap-free.
// Link alloc_counter.cpp into the benchmark: it replaces the global allocation functions.
#pragma once
#include <cstddef>

namespace bench {
extern std::size_t alloc_calls;  // single-threaded benchmarks: no atomics needed
extern std::size_t alloc_bytes;

/// Allocations made while a scope is alive.
struct alloc_scope {
  std::size_t calls0 = alloc_calls, bytes0 = alloc_bytes;
  std::size_t calls() const { return alloc_calls - calls0; }
  std::size_t bytes() const { return alloc_bytes - bytes0; }
};
}  // namespace bench
