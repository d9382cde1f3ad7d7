// devmesh/nccl/types.hpp: element type -> ncclDataType_t and dm::op -> ncclRedOp_t.
//
// Which types NCCL carries is decided at compile time: an element type NCCL cannot carry is a
// static_assert naming the type (error::unsupported_element_type<T, nccl::communicator>),
// never a run-time surprise. The datatype is then read from the element type's value
// (element_type.hpp), by the one function every collective shares. Integers map by width and
// signedness, so long and long long both work where they are 64 bits; bool maps to ncclUint8,
// reduced with max (or) and min (and).
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <nccl.h>

#include "../runtime/backend.hpp"
#include "../runtime/element_type.hpp"
#include "../core/diagnostics.hpp"

namespace devmesh {

/// CUDA's 16-bit floats as element types (runtime/element_type.hpp).
template <>
struct element_traits<__half> {
  static constexpr bool known = true;
  static constexpr element_code code = element_code::float16;
};
template <>
struct element_traits<__nv_bfloat16> {
  static constexpr bool known = true;
  static constexpr element_code code = element_code::bfloat16;
};

namespace nccl {
class communicator;

/// The ncclDataType_t of elements of type t; ncclNumTypes when NCCL has none (the 16-bit
/// integers, long double, the complex codes). bool and std::byte travel as ncclUint8.
constexpr ncclDataType_t datatype_of(element_type t) {
  switch (t.code) {
    case element_code::int8: return ncclInt8;
    case element_code::uint8: return ncclUint8;
    case element_code::int32: return ncclInt32;
    case element_code::uint32: return ncclUint32;
    case element_code::int64: return ncclInt64;
    case element_code::uint64: return ncclUint64;
    case element_code::float16: return ncclFloat16;
    case element_code::bfloat16: return ncclBfloat16;
    case element_code::float32: return ncclFloat32;
    case element_code::float64: return ncclFloat64;
    case element_code::boolean: return sizeof(bool) == 1 ? ncclUint8 : ncclNumTypes;  // NCCL has no bool: redop_of
    case element_code::byte: return ncclUint8;
    default: return ncclNumTypes;
  }
}

/// True if NCCL has a datatype for T (cv-qualifiers ignored).
template <class T>
inline constexpr bool has_datatype = [] {
  if constexpr (known_element<T>) return datatype_of(element_type_of<T>) != ncclNumTypes;
  else return false;
}();

/// T as an element type; a static_assert naming T when NCCL has no datatype for it.
template <class T>
constexpr element_type element_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (has_datatype<U>) {
    return element_type_of<U>;
  } else {
    devmesh::detail::require<false, error::unsupported_element_type<U, communicator>>();
    return {};
  }
}

/// The ncclDataType_t of T; a static_assert naming T when NCCL has none.
template <class T>
inline constexpr ncclDataType_t datatype = datatype_of(element_of<T>());

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

/// The ncclRedOp_t of a reduction on elements of type t. bool travels as ncclUint8, whose
/// values are 0 and 1: sum and max are ncclMax (logical or), prod and min ncclMin (logical
/// and), as in PyTorch; op::avg on bool is refused before NCCL is called (require_avg_type).
constexpr ncclRedOp_t redop_of(element_type t, op o) {
  if (t.code == element_code::boolean && o != op::avg) return o == op::sum || o == op::max ? ncclMax : ncclMin;
  return redop(o);
}

/// The same for elements of type T.
template <class T>
constexpr ncclRedOp_t redop_of(op o) {
  return redop_of(element_of<T>(), o);
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
