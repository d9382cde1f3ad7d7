// tests/gpu/values.hpp: element types, the values ranks send, and how results are compared.
// Every value is a small integer (1..13, or 1..2 for products), so sums and products are
// exact in every type; averages (floating types only: devmesh refuses op::avg on integers)
// are compared with a tolerance, NCCL pre-multiplying by 1/n.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include <devmesh/runtime/backend.hpp>

#if !defined(GPU_CHECK_DOUBLE)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace gpu_check {

template <class T>
inline constexpr bool is_half = false;
#if !defined(GPU_CHECK_DOUBLE)
template <>
inline constexpr bool is_half<__half> = true;
template <>
inline constexpr bool is_half<__nv_bfloat16> = true;
#endif

template <class T>
T from_double(double v) {
#if !defined(GPU_CHECK_DOUBLE)
  if constexpr (std::is_same_v<T, __half>)
    return __float2half(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16(static_cast<float>(v));
  else
#endif
    return static_cast<T>(v);
}

template <class T>
double to_double(T v) {
#if !defined(GPU_CHECK_DOUBLE)
  if constexpr (std::is_same_v<T, __half>)
    return static_cast<double>(__half2float(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return static_cast<double>(__bfloat162float(v));
  else
#endif
    return static_cast<double>(v);
}

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, std::int8_t>) return "int8";
  else if constexpr (std::is_same_v<T, std::uint8_t>) return "uint8";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  else if constexpr (std::is_same_v<T, std::uint32_t>) return "uint32";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, std::uint64_t>) return "uint64";
  else if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
#if !defined(GPU_CHECK_DOUBLE)
  else if constexpr (std::is_same_v<T, __half>) return "half";
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return "bfloat16";
#endif
  else return "?";
}

/// What world rank `rank` puts at index i of buffer `salt`: 1..13.
inline int value_of(int rank, std::size_t i, int salt) {
  return static_cast<int>((static_cast<std::size_t>(rank) * 7 + (i % 1000) * 3 + static_cast<std::size_t>(salt) * 5) % 13) + 1;
}
/// Factors for products: 1 or 2 (2^8 = 256 at most on 8 ranks).
inline int factor_of(int rank, std::size_t i) { return 1 + static_cast<int>((static_cast<std::size_t>(rank) + i) % 2); }
/// What an untouched receive buffer holds (above any sum of 8 values of 1..13).
inline constexpr int sentinel = 117;

/// The expected reduction of `vals` under `o`, in T's arithmetic (exact for the values used).
template <class T>
double reduce_expected(const std::vector<double>& vals, devmesh::op o) {
  double r = vals.front();
  for (std::size_t i = 1; i < vals.size(); ++i) {
    const double v = vals[i];
    switch (o) {
      case devmesh::op::sum: case devmesh::op::avg: r += v; break;
      case devmesh::op::prod: r *= v; break;
      case devmesh::op::min: r = std::min(r, v); break;
      case devmesh::op::max: r = std::max(r, v); break;
    }
  }
  if (o == devmesh::op::avg) {
    if constexpr (std::is_integral_v<T>)
      r = static_cast<double>(static_cast<long long>(r) / static_cast<long long>(vals.size()));
    else
      r /= static_cast<double>(vals.size());
  }
  return r;
}

/// got == want, within the type's rounding when `approximate` (a floating average).
template <class T>
bool matches(T got, double want, bool approximate) {
  const double g = to_double(got);
  if (!approximate || std::is_integral_v<T>) return g == want;
  double rel = std::is_same_v<T, double> ? 1e-12 : std::is_same_v<T, float> ? 1e-5 : 3e-2;
#if !defined(GPU_CHECK_DOUBLE)
  if constexpr (std::is_same_v<T, __half>) rel = 1e-2;
#endif
  return std::fabs(g - want) <= rel * std::max(1.0, std::fabs(want));
}

}  // namespace gpu_check
