# devmesh::mpi: the MPI backend (dm::mpi), created when an MPI C++ implementation is found.
# Linking it brings MPI::MPI_CXX and the compiled runtime (the static libraries devmesh-mpi
# and devmesh-runtime, built once), and defines DEVMESH_WITH_MPI, so <devmesh/devmesh.hpp>
# includes <devmesh/mpi.hpp> and <devmesh/runtime/device_mesh.hpp>, and
# DEVMESH_SEPARATE_COMPILATION, so the headers only declare what the libraries define.
# devmesh::mpi_header_only is the same backend without the libraries: every definition
# inline, compiled in each translation unit (docs/quickstart.md says when to use which).
#
# Included from the build tree (devmesh_backends.cmake: the targets devmesh_mpi and
# devmesh_mpi_header_only) and from the installed package (devmesh-config.cmake: the library
# exported in devmesh-mpi-targets.cmake, and the imported devmesh::mpi_header_only). The
# installed package looks for MPI on the consumer's machine: a consumer without MPI still
# finds devmesh (without devmesh::mpi; find_package(devmesh COMPONENTS mpi) makes it required).
unset(DEVMESH_MPI_NOT_FOUND_REASON)
if(NOT TARGET MPI::MPI_CXX)
  find_package(MPI QUIET COMPONENTS CXX)
endif()
if(TARGET MPI::MPI_CXX)
  if(TARGET devmesh AND NOT TARGET devmesh_mpi)  # the build tree
    devmesh_compiled_library(devmesh_mpi devmesh-mpi mpi/impl/src.hpp)
    target_link_libraries(devmesh_mpi PUBLIC devmesh_runtime MPI::MPI_CXX)
    target_compile_definitions(devmesh_mpi PUBLIC DEVMESH_WITH_MPI)
    set_target_properties(devmesh_mpi PROPERTIES EXPORT_NAME mpi)
    add_library(devmesh::mpi ALIAS devmesh_mpi)
    add_library(devmesh_mpi_header_only INTERFACE)
    add_library(devmesh::mpi_header_only ALIAS devmesh_mpi_header_only)
    target_link_libraries(devmesh_mpi_header_only INTERFACE devmesh::devmesh MPI::MPI_CXX)
    target_compile_definitions(devmesh_mpi_header_only INTERFACE DEVMESH_WITH_MPI)
  elseif(NOT TARGET devmesh AND TARGET devmesh::devmesh AND NOT TARGET devmesh::mpi)  # installed
    if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/devmesh-mpi-targets.cmake")
      include("${CMAKE_CURRENT_LIST_DIR}/devmesh-mpi-targets.cmake")
    endif()
    add_library(devmesh::mpi_header_only INTERFACE IMPORTED)
    target_link_libraries(devmesh::mpi_header_only INTERFACE devmesh::devmesh MPI::MPI_CXX)
    target_compile_definitions(devmesh::mpi_header_only INTERFACE DEVMESH_WITH_MPI)
    if(NOT TARGET devmesh::mpi)
      set(DEVMESH_MPI_NOT_FOUND_REASON
          "devmesh was installed without its MPI library (no MPI where it was built); devmesh::mpi_header_only is there")
    endif()
  endif()
else()
  set(DEVMESH_MPI_NOT_FOUND_REASON "no MPI C++ implementation found (FindMPI: install libopenmpi-dev, or set MPI_HOME)")
endif()
