# devmesh::nccl: the NCCL backend (dm::nccl), created when the CUDA toolkit and libnccl are
# found (NCCL is looked for next to the CUDA runtime, then in the usual places; set
# NCCL_ROOT or CMAKE_PREFIX_PATH for another install). Linking it brings CUDA::cudart and
# libnccl and defines DEVMESH_WITH_NCCL, so <devmesh/devmesh.hpp> includes <devmesh/nccl.hpp>.
# dm::nccl::world(mpi_world) also needs devmesh::mpi.
#
# Build tree only for now: libnccl has no CMake package to find_dependency() on from an
# installed devmesh-config.cmake, so the target is not exported (see docs/nccl.md).
if(NOT TARGET CUDA::cudart)
  find_package(CUDAToolkit QUIET)
endif()
if(TARGET CUDA::cudart AND NOT DEVMESH_NCCL_LIBRARY)
  find_library(DEVMESH_NCCL_LIBRARY NAMES nccl
    HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib64 $ENV{NCCL_ROOT}/lib ${NCCL_ROOT}/lib)
  find_path(DEVMESH_NCCL_INCLUDE_DIR nccl.h
    HINTS ${CUDAToolkit_INCLUDE_DIRS} $ENV{NCCL_ROOT}/include ${NCCL_ROOT}/include)
endif()
if(TARGET CUDA::cudart AND DEVMESH_NCCL_LIBRARY AND DEVMESH_NCCL_INCLUDE_DIR AND TARGET devmesh
   AND NOT TARGET devmesh_nccl)
  # Everything the backend needs except the libraries: the headers of NCCL and of the CUDA
  # runtime, and the macro. tests/nccl links this plus a test double instead of the libraries.
  add_library(devmesh_nccl_headers INTERFACE)
  target_link_libraries(devmesh_nccl_headers INTERFACE devmesh::devmesh)
  target_include_directories(devmesh_nccl_headers SYSTEM INTERFACE ${DEVMESH_NCCL_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(devmesh_nccl_headers INTERFACE DEVMESH_WITH_NCCL)

  add_library(devmesh_nccl INTERFACE)
  add_library(devmesh::nccl ALIAS devmesh_nccl)
  set_target_properties(devmesh_nccl PROPERTIES EXPORT_NAME nccl)
  target_link_libraries(devmesh_nccl INTERFACE devmesh_nccl_headers CUDA::cudart ${DEVMESH_NCCL_LIBRARY})
  set(DEVMESH_HAVE_NCCL ON)
  message(STATUS "devmesh: NCCL backend: ${DEVMESH_NCCL_LIBRARY}")
elseif(NOT TARGET devmesh_nccl)
  set(DEVMESH_HAVE_NCCL OFF)
  message(STATUS "devmesh: NCCL backend off (CUDA toolkit or libnccl not found)")
endif()
