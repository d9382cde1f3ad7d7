# devmesh::mpi: the MPI backend (dm::mpi), created when an MPI C++ implementation is found.
# Linking it brings MPI::MPI_CXX and defines DEVMESH_WITH_MPI, so <devmesh/devmesh.hpp>
# includes <devmesh/mpi.hpp> and <devmesh/runtime/device_mesh.hpp>.
#
# Included from the build tree (devmesh_backends.cmake: the target devmesh_mpi, alias
# devmesh::mpi) and from the installed package (devmesh-config.cmake: the imported target
# devmesh::mpi). An installed devmesh looks for MPI on the consumer's machine, where the
# program is built: the backend is header-only, nothing of the machine that installed
# devmesh is baked in, and a consumer without MPI still finds devmesh (without devmesh::mpi;
# find_package(devmesh COMPONENTS mpi) makes it required).
unset(DEVMESH_MPI_NOT_FOUND_REASON)
if(NOT TARGET MPI::MPI_CXX)
  find_package(MPI QUIET COMPONENTS CXX)
endif()
if(TARGET MPI::MPI_CXX)
  if(TARGET devmesh AND NOT TARGET devmesh_mpi)  # the build tree
    add_library(devmesh_mpi INTERFACE)
    add_library(devmesh::mpi ALIAS devmesh_mpi)
    target_link_libraries(devmesh_mpi INTERFACE devmesh::devmesh MPI::MPI_CXX)
    target_compile_definitions(devmesh_mpi INTERFACE DEVMESH_WITH_MPI)
  elseif(NOT TARGET devmesh AND TARGET devmesh::devmesh AND NOT TARGET devmesh::mpi)  # installed
    add_library(devmesh::mpi INTERFACE IMPORTED)
    target_link_libraries(devmesh::mpi INTERFACE devmesh::devmesh MPI::MPI_CXX)
    target_compile_definitions(devmesh::mpi INTERFACE DEVMESH_WITH_MPI)
  endif()
else()
  set(DEVMESH_MPI_NOT_FOUND_REASON "no MPI C++ implementation found (FindMPI: install libopenmpi-dev, or set MPI_HOME)")
endif()
