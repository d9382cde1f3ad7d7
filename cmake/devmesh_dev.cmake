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
  # clang++ as nvcc's host compiler (scripts/test picks it: the host pass of an example takes
  # about half of g++'s time): cudafe++ writes the sources' C++20 designated initializers
  # ({.n = 2}) in the old GNU form (n: 2), on which clang warns.
  if(DEVMESH_WARNINGS_AS_ERRORS AND CMAKE_CUDA_HOST_COMPILER MATCHES "clang")
    target_compile_options(devmesh_warnings INTERFACE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wno-gnu-designator>)
  endif()
else()
  set(DEVMESH_HAVE_CUDA OFF)
endif()

# The other host compiler (clang++ when building with g++, and the reverse), for compile
# tests that run under both: DEVMESH_CROSS_CXX, and DEVMESH_CROSS_ID (gcc or clang), the
# suffix of those tests' names.
find_program(DEVMESH_CLANGXX NAMES clang++ clang++-14)
find_program(DEVMESH_GXX NAMES g++ g++-12)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(DEVMESH_CROSS_CXX "${DEVMESH_GXX}")
  set(DEVMESH_CROSS_ID gcc)
else()
  set(DEVMESH_CROSS_CXX "${DEVMESH_CLANGXX}")
  set(DEVMESH_CROSS_ID clang)
endif()

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

# devmesh_test_program(<target> <sources...>): one test executable of several test files, built
# as unity TUs (CMake's UNITY_BUILD, all files in one TU). Each file of a program instantiated
# the same runtime (init, the communicator cache, the collectives' bodies, the standard library
# under them) and parsed the same headers; together they do it once: seven files of tests/mpi
# took about 58 s of g++ as programs of their own and 21 s as one TU. Each file wraps its body
# in a namespace of its own; a test picks its file's cases with doctest's --source-file filter
# (devmesh_test_file_filter). -DDEVMESH_UNITY_TESTS=OFF builds each file on its own (debugging).
option(DEVMESH_UNITY_TESTS "Build each multi-file test program as one unity TU" ON)
function(devmesh_test_program target)
  add_executable(${target} ${ARGN})
  if(DEVMESH_UNITY_TESTS)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
  endif()
endfunction()
# devmesh_test_file_filter(<out-var> <file>): the doctest argument that runs only the test cases
# of <file> (a path ending, e.g. mpi/rank_map.cpp) in a devmesh_test_program.
function(devmesh_test_file_filter out file)
  set(${out} "--source-file=*/${file}" PARENT_SCOPE)
endfunction()
