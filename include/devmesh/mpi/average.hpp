// devmesh/mpi/average.hpp: op::avg on MPI, which has no MPI_AVG: the sum, divided by the
// number of ranks. Integers are exact: their sum is taken in 128 bits, so that it cannot
// overflow, where NCCL's ncclAvg sums in the element type.
#pragma once
#include <cstddef>
#include <type_traits>
#include <vector>

#include "native.hpp"

#include "../core/diagnostics.hpp"
#include "control.hpp"
#include "datatype.hpp"
#include "error.hpp"
#include "handle.hpp"

namespace devmesh::mpi::detail {

__extension__ typedef __int128 wide_int;  // GCC/Clang/nvcc host extension (no -Wpedantic warning)

/// MPI_SUM over wide_int, which MPI has no datatype for.
inline void wide_int_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const wide_int*>(in);
  auto* b = static_cast<wide_int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] += a[i];
}
struct wide_sum_handles {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};
/// Created on first use (after MPI_Init); MPI_Finalize frees them.
template <class = void>
const wide_sum_handles& wide_sum() {
  static const wide_sum_handles h = [] {
    wide_sum_handles w;
    check(MPI_Type_contiguous(static_cast<int>(sizeof(wide_int)), MPI_BYTE, &w.type), "MPI_Type_contiguous");
    check(MPI_Type_commit(&w.type), "MPI_Type_commit");
    check(MPI_Op_create(&wide_int_sum, 1, &w.op), "MPI_Op_create");
    return w;
  }();
  return h;
}

/// True for the element types whose op::avg goes through integer_avg.
template <class T>
inline constexpr bool is_integer =
    std::is_integral_v<std::remove_cv_t<T>> && !std::is_same_v<std::remove_cv_t<T>, bool>;

/// The three reductions that can average.
enum class reduction { all, to_root, scatter };

/// op::avg on integers, exactly: the sum of n_in elements is taken in 128 bits, then n_out
/// of them are divided by the size (rounding toward zero) and narrowed: the average of
/// values of T always fits T. Only rank `root` gets a result of reduction::to_root.
template <class T>
void integer_avg(const comm_handle& h, reduction kind, const T* send, T* recv, std::size_t n_in, std::size_t n_out,
                 int root, const watched_call* watch = nullptr) {
  std::vector<wide_int> wide(send, send + n_in);
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
  for (std::size_t i = 0; i < n_out; ++i) recv[i] = static_cast<T>(wide[i] / h.size());
}

/// op::avg after an MPI_SUM: buf divided by the size (integer division for integers, as
/// NCCL's ncclAvg).
template <class T>
void divide(T* buf, std::size_t n, int size) {
  using U = std::remove_cv_t<T>;
  if constexpr ((std::is_arithmetic_v<U> && !std::is_same_v<U, bool>) || complex_of<U, float> ||
                complex_of<U, double>) {  // std::complex<float>, std::complex<double>
    for (std::size_t i = 0; i < n; ++i) buf[i] = static_cast<U>(buf[i] / static_cast<U>(size));
  } else {
    (void)buf, (void)n, (void)size;
    throw comm_error("devmesh: mpi: op::avg needs an arithmetic element type");
  }
}

}  // namespace devmesh::mpi::detail
