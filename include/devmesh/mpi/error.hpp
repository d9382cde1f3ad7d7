// devmesh/mpi/error.hpp: MPI return codes as exceptions carrying the MPI error string, and
// counts that MPI's int cannot hold as errors rather than truncations.
#pragma once
#include <cstddef>
#include <string>

#include "native.hpp"

#include "../core/config.hpp"
#include "../core/diagnostics.hpp"

namespace devmesh::mpi {

/// An MPI call failed (MPI_ERRORS_RETURN is set on every communicator devmesh makes):
/// what() names the call and carries MPI_Error_string; code() is the MPI error code.
class error : public comm_error {
 public:
  /// what: the message (the call and MPI_Error_string); code: the MPI error code.
  error(const std::string& what, int code) : comm_error(what), code_(code) {}
  /// The MPI error code the call returned.
  int code() const noexcept { return code_; }

 private:
  int code_;
};

namespace detail {
/// MPI_Error_string of code.
DEVMESH_DECL std::string error_string(int code);
/// Throws mpi::error if rc is not MPI_SUCCESS.
DEVMESH_DECL void check(int rc, const char* call);
/// n as MPI's int count; comm_error naming `what` when n does not fit (MPI counts are int).
DEVMESH_DECL int int_count(const char* what, std::size_t n);
}  // namespace detail

}  // namespace devmesh::mpi

#if DEVMESH_INLINE_DEFINITIONS
#include "impl/error.ipp"
#endif
