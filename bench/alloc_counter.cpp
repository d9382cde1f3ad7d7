// bench/alloc_counter.cpp: the counting replacements of the global allocation functions.
// A TU of their own, so that g++ never sees them inlined next to std::allocator (it
// would then flag malloc/free as mismatched with new/delete).
#include "alloc_counter.hpp"

#include <cstdlib>
#include <new>

std::size_t bench::alloc_calls = 0;
std::size_t bench::alloc_bytes = 0;

void* operator new(std::size_t n) {
  ++bench::alloc_calls;
  bench::alloc_bytes += n;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
