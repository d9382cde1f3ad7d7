# Configures, builds and runs one consumer project with the CMake and compilers of the
# enclosing build: cmake -DSOURCE=<consumer> -DBUILD=<dir> [-DARGS=a;b] [-DRUN=exe]
#   [-DEXPECT=regex] [-DTESTS=n] [-DCONFIGURE_EXPECT=regex] [-DCTEST=ON] [-DABSENT=file]
#   -P run_consumer.cmake
# TESTS: the exact number of tests the consumer's ctest must list (devmesh's own tests
# must not leak into a consumer). CONFIGURE_EXPECT: a regex the configure output must match.
# CTEST: also run the consumer's own ctest. ABSENT: a file (under BUILD) the build must not make:
# a devmesh library that nothing in the consumer links.
cmake_minimum_required(VERSION 3.25)
foreach(v SOURCE BUILD)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_consumer.cmake: ${v} is required")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "devmesh package test: '${cmd}' failed (${rc}):\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${BUILD}")
# Debug at -O0, no debug info: these flows check packaging, not code generation, and each
# compiles devmesh's runtime libraries once (issue 39): at -O3 that was most of their time.
set(config --no-warn-unused-cli -S "${SOURCE}" -B "${BUILD}" -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Debug
    -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DCMAKE_CUDA_FLAGS_DEBUG=-O0 ${ARGS})
run("${CMAKE_COMMAND}" ${config})
message(STATUS "configure:\n${out}")
if(DEFINED CONFIGURE_EXPECT AND NOT out MATCHES "${CONFIGURE_EXPECT}")
  message(FATAL_ERROR "devmesh package test: the consumer's configure output does not match '${CONFIGURE_EXPECT}'")
endif()
run("${CMAKE_COMMAND}" --build "${BUILD}" -j 2)
if(DEFINED ABSENT AND EXISTS "${BUILD}/${ABSENT}")
  message(FATAL_ERROR "devmesh package test: the build made ${ABSENT}, which nothing in the consumer links")
endif()
if(DEFINED TESTS)
  run("${CMAKE_CTEST_COMMAND}" --test-dir "${BUILD}" -N)
  if(NOT out MATCHES "Total Tests: ${TESTS}\n")
    message(FATAL_ERROR "devmesh package test: the consumer should list ${TESTS} test(s):\n${out}")
  endif()
endif()
if(DEFINED RUN)
  run("${BUILD}/${RUN}")
  message(STATUS "${RUN}: ${out}")
  if(DEFINED EXPECT AND NOT out MATCHES "${EXPECT}")
    message(FATAL_ERROR "devmesh package test: ${RUN}'s output does not match '${EXPECT}'")
  endif()
endif()
if(CTEST)
  run("${CMAKE_CTEST_COMMAND}" --test-dir "${BUILD}" --output-on-failure)
  message(STATUS "the consumer's ctest:\n${out}")
endif()
