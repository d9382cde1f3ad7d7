// devmesh/nccl/types.hpp: element type -> ncclDataType_t and dm::op -> ncclRedOp_t.
//
// The mapping is a compile-time trait: an element type NCCL cannot carry is a static_assert
// naming the type (error::unsupported_element_type<T, nccl::communicator>), never a
// run-time surprise. Integers map by
// width and signedness, so long and long long both work where they are 64 bits; bool maps to
// ncclUint8, reduced with max (or) and min (and).
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <nccl.h>

#include "../runtime/backend.hpp"
#include "../core/diagnostics.hpp"

namespace devmesh {
namespace nccl {
class communicator;

namespace detail {

template <class T>
consteval ncclDataType_t datatype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>) return ncclFloat32;
  else if constexpr (std::is_same_v<U, double>) return ncclFloat64;
  else if constexpr (std::is_same_v<U, __half>) return ncclFloat16;
  else if constexpr (std::is_same_v<U, __nv_bfloat16>) return ncclBfloat16;
  else if constexpr (std::is_same_v<U, std::byte>) return ncclUint8;
  else if constexpr (std::is_same_v<U, bool> && sizeof(bool) == 1) return ncclUint8;  // NCCL has no bool: redop_of
  else if constexpr (std::is_integral_v<U> && !std::is_same_v<U, bool> && sizeof(U) == 1)
    return std::is_signed_v<U> ? ncclInt8 : ncclUint8;
  else if constexpr (std::is_integral_v<U> && !std::is_same_v<U, bool> && sizeof(U) == 4)
    return std::is_signed_v<U> ? ncclInt32 : ncclUint32;
  else if constexpr (std::is_integral_v<U> && !std::is_same_v<U, bool> && sizeof(U) == 8)
    return std::is_signed_v<U> ? ncclInt64 : ncclUint64;
  else
    return devmesh::detail::require<false, error::unsupported_element_type<U, communicator>>(), ncclNumTypes;
}

}  // namespace detail

/// The ncclDataType_t of T; a static_assert naming T when NCCL has none.
template <class T>
inline constexpr ncclDataType_t datatype = detail::datatype_of<T>();

/// The ncclRedOp_t of a devmesh reduction (avg is NCCL's native ncclAvg).
constexpr ncclRedOp_t redop(op o) {
  switch (o) {
    case op::sum: return ncclSum;
    case op::prod: return ncclProd;
    case op::min: return ncclMin;
    case op::max: return ncclMax;
    case op::avg: return ncclAvg;
  }
  return ncclSum;
}

/// The ncclRedOp_t of a reduction on T. bool travels as ncclUint8, whose values are 0 and 1:
/// sum and max are ncclMax (logical or), prod and min ncclMin (logical and), as in PyTorch;
/// op::avg on bool is refused before NCCL is called (require_avg_type).
template <class T>
constexpr ncclRedOp_t redop_of(op o) {
  if constexpr (std::is_same_v<std::remove_cv_t<T>, bool>)
    if (o != op::avg) return o == op::sum || o == op::max ? ncclMax : ncclMin;
  return redop(o);
}

/// Name of an ncclDataType_t, for messages and tests.
constexpr const char* datatype_name(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: return "ncclInt8";
    case ncclUint8: return "ncclUint8";
    case ncclInt32: return "ncclInt32";
    case ncclUint32: return "ncclUint32";
    case ncclInt64: return "ncclInt64";
    case ncclUint64: return "ncclUint64";
    case ncclFloat16: return "ncclFloat16";
    case ncclFloat32: return "ncclFloat32";
    case ncclFloat64: return "ncclFloat64";
    case ncclBfloat16: return "ncclBfloat16";
    default: return "ncclDataType_t(?)";
  }
}

}  // namespace nccl
}  // namespace devmesh
