// devmesh/core/checked.hpp: checked 64-bit arithmetic for sizes, the one helper every product
// and sum of extents, block sizes, offsets and byte counts goes through (the sharding layer,
// the plan's costs, redistribute's executor).
//
// A result that does not fit in std::int64_t is never wrapped: at run time it throws
// devmesh::mesh_error naming what was computed and both operands; in a constant expression it
// is a compile error (the failure path is not constexpr); in device code it traps.
// Built on __builtin_mul_overflow / __builtin_add_overflow (g++ and clang, constant-evaluable);
// under nvcc, whose front end is not asked to fold them, on the same checks written out.
#pragma once
#include <cstdint>
#include <limits>
#include <string_view>

#include "config.hpp"
#include "diagnostics.hpp"

namespace devmesh::detail {

/// True if a * b does not fit in std::int64_t; else r = a * b.
DEVMESH_HOST_DEVICE constexpr bool mul_overflows(std::int64_t a, std::int64_t b, std::int64_t& r) {
#if defined(__CUDACC__)
  constexpr std::int64_t hi = std::numeric_limits<std::int64_t>::max(), lo = std::numeric_limits<std::int64_t>::min();
  if (a > 0 ? (b > 0 ? a > hi / b : b < lo / a) : (b > 0 ? a < lo / b : (a != 0 && b < hi / a))) return true;
  r = a * b;
  return false;
#else
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return true;
  r = out;
  return false;
#endif
}
/// True if a + b does not fit in std::int64_t; else r = a + b.
DEVMESH_HOST_DEVICE constexpr bool add_overflows(std::int64_t a, std::int64_t b, std::int64_t& r) {
#if defined(__CUDACC__)
  constexpr std::int64_t hi = std::numeric_limits<std::int64_t>::max(), lo = std::numeric_limits<std::int64_t>::min();
  if (b > 0 ? a > hi - b : a < lo - b) return true;
  r = a + b;
  return false;
#else
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return true;
  r = out;
  return false;
#endif
}

/// The error of an overflowing size: "devmesh: size overflow in <what>: a * b does not fit in
/// std::int64_t". Not constexpr: reached in a constant expression, a compile error naming it.
[[noreturn]] inline void throw_size_overflow(std::string_view what, std::int64_t a, std::string_view op,
                                             std::int64_t b) {
  throw_mesh_error(message() << "devmesh: size overflow in " << what << ": " << static_cast<long long>(a) << op
                             << static_cast<long long>(b) << " does not fit in std::int64_t (a tensor's element "
                             << "and byte counts must)");
}
[[noreturn]] DEVMESH_HOST_DEVICE inline void size_overflow(const char* what, std::int64_t a, const char* op,
                                                           std::int64_t b) {
#if DEVMESH_DEVICE_PASS
  (void)what, (void)a, (void)op, (void)b;
  __trap();
  __builtin_unreachable();
#else
  throw_size_overflow(what, a, op, b);
#endif
}

/// a * b, or mesh_error naming `what` (a compile error in a constant expression).
DEVMESH_HOST_DEVICE constexpr std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (mul_overflows(a, b, r)) size_overflow(what, a, " * ", b);
  return r;
}
/// a + b, or mesh_error naming `what` (a compile error in a constant expression).
DEVMESH_HOST_DEVICE constexpr std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (add_overflows(a, b, r)) size_overflow(what, a, " + ", b);
  return r;
}

}  // namespace devmesh::detail
