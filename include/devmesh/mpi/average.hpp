// devmesh/mpi/average.hpp: op::avg on MPI, which has no MPI_AVG: the sum, divided by the
// number of ranks. Integers are exact: their sum is taken in 128 bits, so that it cannot
// overflow, where NCCL's ncclAvg sums in the element type.
#pragma once
#include <cstddef>

#include "native.hpp"

#include "../core/config.hpp"
#include "../runtime/deadline.hpp"
#include "../runtime/element_type.hpp"
#include "handle.hpp"

namespace devmesh::mpi::detail {

/// The three reductions that can average.
enum class reduction { all, to_root, scatter };

/// op::avg on integers (t.is_integer()), exactly: the sum of n_in elements is taken in 128
/// bits, then n_out of them are divided by the size (rounding toward zero) and narrowed: the
/// average of values of T always fits T. Only rank `root` gets a result of reduction::to_root.
DEVMESH_DECL void integer_avg(const comm_handle& h, reduction kind, const void* send, void* recv, std::size_t n_in,
                              std::size_t n_out, element_type t, int root, const watched_call* watch);

/// op::avg after an MPI_SUM: n elements of type t at buf divided by the size (integer
/// division for integers, as NCCL's ncclAvg); comm_error for bool and std::byte.
DEVMESH_DECL void divide(void* buf, std::size_t n, element_type t, int size);

}  // namespace devmesh::mpi::detail

#if DEVMESH_INLINE_DEFINITIONS
#include "impl/average.ipp"
#endif
