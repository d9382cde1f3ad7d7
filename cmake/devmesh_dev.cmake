# Settings for devmesh's own tests, examples and benchmarks (never for consumers).

# Warnings are errors on g++/clang and nvcc (host and device passes).
add_library(devmesh_warnings INTERFACE)
if(DEVMESH_WARNINGS_AS_ERRORS)
  target_compile_options(devmesh_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror>)
endif()

# -DDEVMESH_SANITIZE=ON: AddressSanitizer + UndefinedBehaviorSanitizer (every finding fatal)
# and libstdc++'s assertions on devmesh's own host targets, which all link devmesh_warnings
# (scripts/sanitize builds build/asan with it; tests/sanitizers holds the suppressions).
option(DEVMESH_SANITIZE "Build devmesh's own host targets with ASan + UBSan + _GLIBCXX_ASSERTIONS" OFF)
if(DEVMESH_SANITIZE)
  set(devmesh_sanitize_flags -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_compile_options(devmesh_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${devmesh_sanitize_flags}>)
  target_compile_definitions(devmesh_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:_GLIBCXX_ASSERTIONS>)
  target_link_options(devmesh_warnings INTERFACE $<$<LINK_LANGUAGE:CXX>:-fsanitize=address,undefined>)
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

# devmesh_mpi_launcher(<out-var> <nprocs>): the mpirun command line for nprocs ranks, with
# --oversubscribe (2 cores here run 8 ranks) and --allow-run-as-root when root.
function(devmesh_mpi_launcher out np)
  if(NOT MPIEXEC_EXECUTABLE)
    find_package(MPI COMPONENTS CXX)
  endif()
  set(extra --oversubscribe)
  if(DEFINED ENV{USER} AND "$ENV{USER}" STREQUAL "root" OR EXISTS "/.dockerenv" OR "$ENV{HOME}" STREQUAL "/root")
    list(APPEND extra --allow-run-as-root)
  endif()
  set(${out} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${extra} PARENT_SCOPE)
endfunction()

# devmesh_add_mpi_test(<name> <nprocs> <command> [args...]): a ctest test run under mpirun
# (devmesh_mpi_launcher).
function(devmesh_add_mpi_test name np)
  devmesh_mpi_launcher(launcher ${np})
  add_test(NAME ${name} COMMAND ${launcher} ${ARGN})
  set_tests_properties(${name} PROPERTIES TIMEOUT 120 PROCESSORS 2 LABELS mpi)
endfunction()
