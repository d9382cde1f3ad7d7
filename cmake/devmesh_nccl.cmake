# devmesh::nccl: the NCCL backend (dm::nccl), created when the CUDA toolkit (for the CUDA
# runtime) and libnccl are found. Linking it brings the headers of NCCL and of the CUDA
# runtime, CUDA::cudart and libnccl, and defines DEVMESH_WITH_NCCL, so <devmesh/devmesh.hpp>
# includes <devmesh/nccl.hpp>. dm::nccl::world(mpi_world) also needs devmesh::mpi.
#
# libnccl ships no CMake package, so it is looked for here: first under NCCL_ROOT (a CMake or
# environment variable: NCCL's own tarball, a pip wheel's nvidia/nccl), then next to the CUDA
# runtime (find_package(CUDAToolkit); e.g. /usr/local/cuda/lib{,64}), then in the system paths
# (Debian's libnccl-dev). To force a library, set the cache variables DEVMESH_NCCL_LIBRARY
# (the library file) and DEVMESH_NCCL_INCLUDE_DIR (the directory of nccl.h).
#
# Included from the build tree (devmesh_backends.cmake: the targets devmesh_nccl_headers and
# devmesh_nccl, alias devmesh::nccl) and from the installed package (devmesh-config.cmake:
# the imported target devmesh::nccl). An installed devmesh looks for CUDA and NCCL on the
# consumer's machine: nothing of the machine that installed devmesh is baked in, and a
# consumer without them still finds devmesh (find_package(devmesh COMPONENTS nccl) makes
# the backend required).
if(NOT TARGET CUDA::cudart)
  find_package(CUDAToolkit QUIET)
endif()
unset(DEVMESH_NCCL_NOT_FOUND_REASON)
if(TARGET CUDA::cudart)
  set(_devmesh_nccl_roots ${NCCL_ROOT} $ENV{NCCL_ROOT})
  find_library(DEVMESH_NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR
    HINTS ${_devmesh_nccl_roots}
          ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib64 ${CUDAToolkit_LIBRARY_ROOT}/lib
    PATH_SUFFIXES lib lib64
    DOC "libnccl for devmesh::nccl")
  find_path(DEVMESH_NCCL_INCLUDE_DIR nccl.h
    HINTS ${_devmesh_nccl_roots} ${CUDAToolkit_INCLUDE_DIRS}
    PATH_SUFFIXES include
    DOC "the directory of nccl.h for devmesh::nccl")
  unset(_devmesh_nccl_roots)
  if(NOT DEVMESH_NCCL_LIBRARY OR NOT DEVMESH_NCCL_INCLUDE_DIR)
    set(DEVMESH_NCCL_NOT_FOUND_REASON
        "libnccl or nccl.h not found under NCCL_ROOT, next to the CUDA runtime (${CUDAToolkit_LIBRARY_DIR}) or in the system paths (set NCCL_ROOT, or DEVMESH_NCCL_LIBRARY and DEVMESH_NCCL_INCLUDE_DIR)")
  endif()
else()
  set(DEVMESH_NCCL_NOT_FOUND_REASON
      "the CUDA toolkit was not found (find_package(CUDAToolkit): put nvcc on PATH or set CUDAToolkit_ROOT)")
endif()

# NCCL's version, from nccl.h (NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH).
if(DEVMESH_NCCL_INCLUDE_DIR AND EXISTS "${DEVMESH_NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${DEVMESH_NCCL_INCLUDE_DIR}/nccl.h" _devmesh_nccl_defines REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
  set(DEVMESH_NCCL_VERSION "")
  foreach(part MAJOR MINOR PATCH)
    string(REGEX MATCH "NCCL_${part} +([0-9]+)" _devmesh_match "${_devmesh_nccl_defines}")
    list(APPEND DEVMESH_NCCL_VERSION "${CMAKE_MATCH_1}")
  endforeach()
  list(JOIN DEVMESH_NCCL_VERSION "." DEVMESH_NCCL_VERSION)
  unset(_devmesh_nccl_defines)
  unset(_devmesh_match)
endif()

if(NOT DEFINED DEVMESH_NCCL_NOT_FOUND_REASON)
  if(TARGET devmesh AND NOT TARGET devmesh_nccl)  # the build tree
    # Everything the backend needs except the libraries: the headers of NCCL and of the CUDA
    # runtime, and the macro. tests/nccl links this plus a test double instead of the libraries.
    add_library(devmesh_nccl_headers INTERFACE)
    target_link_libraries(devmesh_nccl_headers INTERFACE devmesh::devmesh)
    target_include_directories(devmesh_nccl_headers SYSTEM INTERFACE ${DEVMESH_NCCL_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
    target_compile_definitions(devmesh_nccl_headers INTERFACE DEVMESH_WITH_NCCL)

    add_library(devmesh_nccl INTERFACE)
    add_library(devmesh::nccl ALIAS devmesh_nccl)
    target_link_libraries(devmesh_nccl INTERFACE devmesh_nccl_headers CUDA::cudart ${DEVMESH_NCCL_LIBRARY})
    message(STATUS "devmesh: NCCL backend: NCCL ${DEVMESH_NCCL_VERSION} (${DEVMESH_NCCL_LIBRARY})")
  elseif(NOT TARGET devmesh AND TARGET devmesh::devmesh AND NOT TARGET devmesh::nccl)  # installed
    add_library(devmesh::nccl INTERFACE IMPORTED)
    target_include_directories(devmesh::nccl SYSTEM INTERFACE ${DEVMESH_NCCL_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
    target_link_libraries(devmesh::nccl INTERFACE devmesh::devmesh CUDA::cudart ${DEVMESH_NCCL_LIBRARY})
    target_compile_definitions(devmesh::nccl INTERFACE DEVMESH_WITH_NCCL)
  endif()
  set(DEVMESH_HAVE_NCCL ON)
else()
  set(DEVMESH_HAVE_NCCL OFF)
  if(TARGET devmesh)
    message(STATUS "devmesh: NCCL backend off: ${DEVMESH_NCCL_NOT_FOUND_REASON}")
  endif()
endif()
