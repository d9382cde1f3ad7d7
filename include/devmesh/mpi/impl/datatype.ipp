// devmesh/mpi/impl/datatype.ipp: datatype.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <string>

#include "../datatype.hpp"
#include "../error.hpp"

namespace devmesh::mpi::detail {

DEVMESH_DECL MPI_Datatype datatype_of(element_type t) {
  switch (t.code) {
    case element_code::int8: return MPI_INT8_T;
    case element_code::uint8: return MPI_UINT8_T;
    case element_code::int16: return MPI_INT16_T;
    case element_code::uint16: return MPI_UINT16_T;
    case element_code::int32: return MPI_INT32_T;
    case element_code::uint32: return MPI_UINT32_T;
    case element_code::int64: return MPI_INT64_T;
    case element_code::uint64: return MPI_UINT64_T;
    case element_code::float32: return MPI_FLOAT;
    case element_code::float64: return MPI_DOUBLE;
    case element_code::long_double: return MPI_LONG_DOUBLE;
    case element_code::complex64: return MPI_CXX_FLOAT_COMPLEX;
    case element_code::complex128: return MPI_CXX_DOUBLE_COMPLEX;
    case element_code::boolean: return MPI_CXX_BOOL;
    case element_code::byte: return MPI_BYTE;
    case element_code::float16:
    case element_code::bfloat16: break;
  }
  throw comm_error("devmesh: mpi: no MPI datatype for elements of type " + std::string(t.name) + " (" +
                   std::string(code_name(t.code)) + ")");
}

}  // namespace devmesh::mpi::detail
