// devmesh/mpi/impl/average.ipp: average.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <cstdint>
#include <type_traits>
#include <vector>

#include "../average.hpp"
#include "control.ipp"
#include "../error.hpp"

namespace devmesh::mpi::detail {

__extension__ typedef __int128 wide_int;  // GCC/Clang/nvcc host extension (no -Wpedantic warning)

/// MPI_SUM over wide_int, which MPI has no datatype for.
DEVMESH_DECL void wide_int_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const wide_int*>(in);
  auto* b = static_cast<wide_int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] += a[i];
}
struct wide_sum_handles {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};
/// Created on first use (after MPI_Init); MPI_Finalize frees them.
DEVMESH_DECL const wide_sum_handles& wide_sum() {
  static const wide_sum_handles h = [] {
    wide_sum_handles w;
    check(MPI_Type_contiguous(static_cast<int>(sizeof(wide_int)), MPI_BYTE, &w.type), "MPI_Type_contiguous");
    check(MPI_Type_commit(&w.type), "MPI_Type_commit");
    check(MPI_Op_create(&wide_int_sum, 1, &w.op), "MPI_Op_create");
    return w;
  }();
  return h;
}

/// f(T{}, k) for the C++ type T of an arithmetic element code (not bool, not std::byte, not
/// the 16-bit floats MPI has no datatype for), where an element is k values of T (2 for the
/// complex codes: a real and an imaginary part, which an average divides alike); false if t is
/// none of them.
template <class F>
bool with_arithmetic_type(element_type t, F&& f) {
  switch (t.code) {
    case element_code::int8: return f(std::int8_t{}, 1), true;
    case element_code::uint8: return f(std::uint8_t{}, 1), true;
    case element_code::int16: return f(std::int16_t{}, 1), true;
    case element_code::uint16: return f(std::uint16_t{}, 1), true;
    case element_code::int32: return f(std::int32_t{}, 1), true;
    case element_code::uint32: return f(std::uint32_t{}, 1), true;
    case element_code::int64: return f(std::int64_t{}, 1), true;
    case element_code::uint64: return f(std::uint64_t{}, 1), true;
    case element_code::float32: return f(float{}, 1), true;
    case element_code::float64: return f(double{}, 1), true;
    case element_code::long_double: return f(static_cast<long double>(0), 1), true;
    case element_code::complex64: return f(float{}, 2), true;
    case element_code::complex128: return f(double{}, 2), true;
    default: return false;
  }
}

DEVMESH_DECL void integer_avg(const comm_handle& h, reduction kind, const void* send, void* recv, std::size_t n_in,
                              std::size_t n_out, element_type t, int root, const watched_call* watch) {
  std::vector<wide_int> wide(n_in);
  with_arithmetic_type(t, [&](auto zero, std::size_t) {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T>)
      for (std::size_t i = 0; i < n_in; ++i) wide[i] = static_cast<const T*>(send)[i];
  });
  const auto& w = wide_sum();
  const char* call = kind == reduction::all       ? "MPI_Allreduce (op::avg)"
                     : kind == reduction::to_root ? "MPI_Reduce (op::avg)"
                                                  : "MPI_Reduce_scatter_block (op::avg)";
  const int c = int_count(call, n_out);
  const MPI_Comm comm = h.native();
  const bool at_root = h.rank() == root;
  wide_int* b = wide.data();
  const void* in = kind == reduction::to_root && !at_root ? static_cast<const void*>(b) : MPI_IN_PLACE;
  issue(h, call, call, watch, [&] {
    if (kind == reduction::all) return MPI_Allreduce(MPI_IN_PLACE, b, c, w.type, w.op, comm);
    if (kind == reduction::to_root) return MPI_Reduce(in, b, c, w.type, w.op, root, comm);
    return MPI_Reduce_scatter_block(MPI_IN_PLACE, b, c, w.type, w.op, comm);
  }, [&](MPI_Request* r) {
    if (kind == reduction::all) return MPI_Iallreduce(MPI_IN_PLACE, b, c, w.type, w.op, comm, r);
    if (kind == reduction::to_root) return MPI_Ireduce(in, b, c, w.type, w.op, root, comm, r);
    return MPI_Ireduce_scatter_block(MPI_IN_PLACE, b, c, w.type, w.op, comm, r);
  }, wide);
  if (kind == reduction::to_root && !at_root) return;
  with_arithmetic_type(t, [&](auto zero, std::size_t) {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T>)
      for (std::size_t i = 0; i < n_out; ++i) static_cast<T*>(recv)[i] = static_cast<T>(wide[i] / h.size());
  });
}

DEVMESH_DECL void divide(void* buf, std::size_t n, element_type t, int size) {
  const bool arithmetic = with_arithmetic_type(t, [&](auto zero, std::size_t parts) {
    using T = decltype(zero);
    T* p = static_cast<T*>(buf);
    for (std::size_t i = 0; i < n * parts; ++i) p[i] = static_cast<T>(p[i] / static_cast<T>(size));
  });
  if (!arithmetic) throw comm_error("devmesh: mpi: op::avg needs an arithmetic element type");
}

}  // namespace devmesh::mpi::detail
