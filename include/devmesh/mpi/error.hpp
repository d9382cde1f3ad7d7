// devmesh/mpi/error.hpp: MPI return codes as exceptions carrying the MPI error string, and
// counts that MPI's int cannot hold as errors rather than truncations.
#pragma once
#include <climits>
#include <cstddef>
#include <string>

#include "native.hpp"

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
inline std::string error_string(int code) {
  char buf[MPI_MAX_ERROR_STRING]{};
  int len = 0;
  if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) return "unknown MPI error";
  return std::string(buf, static_cast<std::size_t>(len));
}

/// Throws mpi::error if rc is not MPI_SUCCESS.
inline void check(int rc, const char* call) {
  if (rc != MPI_SUCCESS)
    throw error("devmesh: mpi: " + std::string(call) + " failed: " + error_string(rc) + " (MPI error code " +
                    std::to_string(rc) + ")",
                rc);
}

/// n as MPI's int count; comm_error naming `what` when n does not fit (MPI counts are int).
inline int int_count(const char* what, std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw comm_error("devmesh: mpi: " + std::string(what) + ": " + std::to_string(n) +
                     " elements exceed MPI's int count (split the buffer)");
  return static_cast<int>(n);
}
}  // namespace detail

}  // namespace devmesh::mpi
