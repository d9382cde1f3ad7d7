// devmesh/mpi/options.hpp: creation options of one MPI communicator (device_mesh_options::
// per_dim["tp"], ...) and how a new communicator gets them.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "native.hpp"

#include "comm_hook.hpp"
#include "../core/config.hpp"

namespace devmesh::mpi {

/// Creation options of one communicator (device_mesh_options::per_dim["tp"], ...).
struct comm_options {
  /// MPI_Comm_set_name; device_mesh sets "mesh:<dim>" when left empty.
  std::string name;
  /// MPI_Info hints (key, value), applied with MPI_Comm_set_info after the split, e.g.
  /// {"mpi_assert_no_any_tag", "true"}. Unknown keys are ignored by MPI, as the standard says.
  std::vector<std::pair<std::string, std::string>> hints;
  /// Called with every new communicator, after hints and name (e.g. to attach attributes):
  /// any callable of void(MPI_Comm), copied (comm_hook.hpp; it was a std::function).
  comm_hook on_create;

  /// What enters the mesh-wide consistency fingerprint (the name is per dim, not here).
  DEVMESH_DECL std::string describe() const;
};

namespace detail {
/// Gives the new communicator c its hints, name and on_create hook.
DEVMESH_DECL void apply(MPI_Comm c, const comm_options& o);
}  // namespace detail
}  // namespace devmesh::mpi

#if DEVMESH_INLINE_DEFINITIONS
#include "impl/options.ipp"
#endif
