// devmesh/mpi/impl/options.ipp: options.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <string>

#include "../error.hpp"
#include "../options.hpp"

namespace devmesh::mpi {

DEVMESH_DECL std::string comm_options::describe() const {
  std::string s;
  for (const auto& [k, v] : hints) s += (s.empty() ? "" : ",") + k + "=" + v;
  if (on_create) s += (s.empty() ? "" : ",") + std::string("on_create");
  return s;
}

namespace detail {

DEVMESH_DECL void apply(MPI_Comm c, const comm_options& o) {
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
