# devmesh::mpi: the MPI backend (dm::mpi), created when an MPI C++ implementation is found.
# Linking it brings MPI::MPI_CXX and defines DEVMESH_WITH_MPI, so <devmesh/devmesh.hpp>
# includes <devmesh/mpi.hpp> and <devmesh/device_mesh.hpp>.
# Included from the build tree (devmesh_backends.cmake) and from the installed package
# (devmesh-config.cmake), where the target itself comes from devmesh-targets.cmake.
if(NOT TARGET MPI::MPI_CXX)
  find_package(MPI QUIET COMPONENTS CXX)
endif()
if(TARGET MPI::MPI_CXX AND TARGET devmesh AND NOT TARGET devmesh_mpi)
  add_library(devmesh_mpi INTERFACE)
  add_library(devmesh::mpi ALIAS devmesh_mpi)
  set_target_properties(devmesh_mpi PROPERTIES EXPORT_NAME mpi)
  target_link_libraries(devmesh_mpi INTERFACE devmesh::devmesh MPI::MPI_CXX)
  target_compile_definitions(devmesh_mpi INTERFACE DEVMESH_WITH_MPI)
  list(APPEND DEVMESH_INSTALLED_BACKENDS devmesh_mpi)
  list(APPEND DEVMESH_BACKEND_CMAKE_FILES ${CMAKE_CURRENT_LIST_DIR}/devmesh_mpi.cmake)
endif()
