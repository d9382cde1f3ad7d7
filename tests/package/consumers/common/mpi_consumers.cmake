# The MPI consumers, when the project has devmesh's MPI backend: consumer_mpi links the
# compiled devmesh::mpi, consumer_mpi_header_only (where `header_only` is given) the
# header-only devmesh::mpi_header_only; each a test, run as a one-process (singleton) MPI job.
function(add_devmesh_mpi_consumers)
  if(NOT TARGET devmesh::mpi)
    return()
  endif()
  message(STATUS "devmesh::mpi is provided: building the MPI consumer")
  add_executable(consumer_mpi ${CMAKE_CURRENT_LIST_DIR}/../common/mpi_main.cpp)
  target_link_libraries(consumer_mpi PRIVATE devmesh::mpi)
  target_compile_definitions(consumer_mpi PRIVATE DEVMESH_CONSUMER_COMPILED)
  add_test(NAME consumer_mpi COMMAND consumer_mpi)
  if(ARGV0 STREQUAL "header_only" AND TARGET devmesh::mpi_header_only)
    add_executable(consumer_mpi_header_only ${CMAKE_CURRENT_LIST_DIR}/../common/mpi_main.cpp)
    target_link_libraries(consumer_mpi_header_only PRIVATE devmesh::mpi_header_only)
    add_test(NAME consumer_mpi_header_only COMMAND consumer_mpi_header_only)
  endif()
endfunction()
