// devmesh/mpi/options.hpp: creation options of one MPI communicator (device_mesh_options::
// per_dim["tp"], ...) and how a new communicator gets them.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "native.hpp"

#include "comm_hook.hpp"
#include "error.hpp"

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
  std::string describe() const {
    std::string s;
    for (const auto& [k, v] : hints) s += (s.empty() ? "" : ",") + k + "=" + v;
    if (on_create) s += (s.empty() ? "" : ",") + std::string("on_create");
    return s;
  }
};

namespace detail {

/// Applies o to the new communicator c: the hints (MPI_Comm_set_info), the name, then
/// o.on_create(c).
template <class = void>
void apply(MPI_Comm c, const comm_options& o) {
  if (!o.hints.empty()) {
    MPI_Info info = MPI_INFO_NULL;
    check(MPI_Info_create(&info), "MPI_Info_create");
    int rc = MPI_SUCCESS;
    for (const auto& [k, v] : o.hints)
      if (rc == MPI_SUCCESS) rc = MPI_Info_set(info, k.c_str(), v.c_str());
    if (rc == MPI_SUCCESS) rc = MPI_Comm_set_info(c, info);
    MPI_Info_free(&info);
    check(rc, "MPI_Comm_set_info");
  }
  if (!o.name.empty()) check(MPI_Comm_set_name(c, o.name.c_str()), "MPI_Comm_set_name");
  if (o.on_create) o.on_create(c);
}

}  // namespace detail
}  // namespace devmesh::mpi
