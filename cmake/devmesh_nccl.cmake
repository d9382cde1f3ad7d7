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
# devmesh::nccl links the compiled runtime (devmesh-nccl and devmesh-runtime, static libraries
# built once, and DEVMESH_SEPARATE_COMPILATION); devmesh::nccl_header_only is the same backend
# with every definition inline instead (docs/quickstart.md says when to use which).
#
# Included from the build tree (devmesh_backends.cmake: the targets devmesh_nccl_headers,
# devmesh_nccl_lib, devmesh_nccl and devmesh_nccl_header_only) and from the installed package
# (devmesh-config.cmake: the library exported in devmesh-nccl-targets.cmake, the imported
# targets devmesh::nccl and devmesh::nccl_header_only). An installed devmesh looks for CUDA and
# NCCL on the consumer's machine (its library was compiled against the headers of the machine
# that built it, and links the consumer's libnccl), and a consumer without them still finds
# devmesh (find_package(devmesh COMPONENTS nccl) makes the backend required).
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
    # runtime, and the macro.
    add_library(devmesh_nccl_headers INTERFACE)
    target_link_libraries(devmesh_nccl_headers INTERFACE devmesh::devmesh)
    target_include_directories(devmesh_nccl_headers SYSTEM INTERFACE ${DEVMESH_NCCL_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
    target_compile_definitions(devmesh_nccl_headers INTERFACE DEVMESH_WITH_NCCL)

    # The backend's compiled part (cmake/devmesh_compiled.cmake), without NCCL's and CUDA's
    # libraries: tests/nccl links it with a test double in their place.
    devmesh_compiled_library(devmesh_nccl_lib devmesh-nccl nccl/impl/src.hpp)
    target_link_libraries(devmesh_nccl_lib PUBLIC devmesh_runtime)
    target_include_directories(devmesh_nccl_lib SYSTEM PUBLIC
      $<BUILD_INTERFACE:${DEVMESH_NCCL_INCLUDE_DIR}> $<BUILD_INTERFACE:${CUDAToolkit_INCLUDE_DIRS}>)
    target_compile_definitions(devmesh_nccl_lib PUBLIC DEVMESH_WITH_NCCL)
    set_target_properties(devmesh_nccl_lib PROPERTIES EXPORT_NAME nccl_lib)

    add_library(devmesh_nccl INTERFACE)
    add_library(devmesh::nccl ALIAS devmesh_nccl)
    target_link_libraries(devmesh_nccl INTERFACE devmesh_nccl_lib CUDA::cudart ${DEVMESH_NCCL_LIBRARY})
    add_library(devmesh_nccl_header_only INTERFACE)
    add_library(devmesh::nccl_header_only ALIAS devmesh_nccl_header_only)
    target_link_libraries(devmesh_nccl_header_only INTERFACE devmesh_nccl_headers CUDA::cudart ${DEVMESH_NCCL_LIBRARY})
    message(STATUS "devmesh: NCCL backend: NCCL ${DEVMESH_NCCL_VERSION} (${DEVMESH_NCCL_LIBRARY})")
  elseif(NOT TARGET devmesh AND TARGET devmesh::devmesh AND NOT TARGET devmesh::nccl)  # installed
    if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/devmesh-nccl-targets.cmake")
      include("${CMAKE_CURRENT_LIST_DIR}/devmesh-nccl-targets.cmake")  # devmesh::nccl_lib
    endif()
    add_library(devmesh::nccl_header_only INTERFACE IMPORTED)
    target_include_directories(devmesh::nccl_header_only SYSTEM INTERFACE ${DEVMESH_NCCL_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
    target_link_libraries(devmesh::nccl_header_only INTERFACE devmesh::devmesh CUDA::cudart ${DEVMESH_NCCL_LIBRARY})
    target_compile_definitions(devmesh::nccl_header_only INTERFACE DEVMESH_WITH_NCCL)
    if(TARGET devmesh::nccl_lib)
      add_library(devmesh::nccl INTERFACE IMPORTED)
      target_include_directories(devmesh::nccl SYSTEM INTERFACE ${DEVMESH_NCCL_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
      target_link_libraries(devmesh::nccl INTERFACE devmesh::nccl_lib CUDA::cudart ${DEVMESH_NCCL_LIBRARY})
    else()
      set(DEVMESH_NCCL_NOT_FOUND_REASON
          "devmesh was installed without its NCCL library (no NCCL where it was built); devmesh::nccl_header_only is there")
    endif()
  endif()
  set(DEVMESH_HAVE_NCCL ON)
else()
  set(DEVMESH_HAVE_NCCL OFF)
  if(TARGET devmesh)
    message(STATUS "devmesh: NCCL backend off: ${DEVMESH_NCCL_NOT_FOUND_REASON}")
  endif()
endif()
