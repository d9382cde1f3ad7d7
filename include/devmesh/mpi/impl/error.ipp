// devmesh/mpi/impl/error.ipp: error.hpp's definitions (compiled once, or inline in header-only
// mode: core/config.hpp).
#pragma once
#include <climits>
#include <string>

#include "../error.hpp"

namespace devmesh::mpi::detail {

DEVMESH_DECL std::string error_string(int code) {
  char buf[MPI_MAX_ERROR_STRING]{};
  int len = 0;
  if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) return "unknown MPI error";
  return std::string(buf, static_cast<std::size_t>(len));
}

DEVMESH_DECL void check(int rc, const char* call) {
  if (rc != MPI_SUCCESS)
    throw error("devmesh: mpi: " + std::string(call) + " failed: " + error_string(rc) + " (MPI error code " +
                    std::to_string(rc) + ")",
                rc);
}

DEVMESH_DECL int int_count(const char* what, std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw comm_error("devmesh: mpi: " + std::string(what) + ": " + std::to_string(n) +
                     " elements exceed MPI's int count (split the buffer)");
  return static_cast<int>(n);
}

}  // namespace devmesh::mpi::detail
