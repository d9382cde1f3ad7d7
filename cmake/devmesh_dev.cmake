# Settings for devmesh's own tests, examples and benchmarks (never for consumers).

# Warnings are errors on g++/clang and nvcc (host and device passes).
add_library(devmesh_warnings INTERFACE)
if(DEVMESH_WARNINGS_AS_ERRORS)
  target_compile_options(devmesh_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror>)
endif()

# CUDA: optional; nvcc builds the .cu examples and the nvcc variants of compile tests.
include(CheckLanguage)
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80)
  endif()
  enable_language(CUDA)
  set(DEVMESH_HAVE_CUDA ON)
else()
  set(DEVMESH_HAVE_CUDA OFF)
endif()

# The other host compiler (clang++ when building with g++, and the reverse), for compile
# tests that run under both.
find_program(DEVMESH_CLANGXX NAMES clang++ clang++-14)
find_program(DEVMESH_GXX NAMES g++ g++-12)
