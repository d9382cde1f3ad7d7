# Checks, in a project that pulled devmesh in with add_subdirectory or FetchContent, that
# devmesh behaved as a subproject: its options default to OFF, so none of its tests,
# examples or benchmarks exist and it adds no install rules. `dir` is devmesh's source dir.
function(check_devmesh_is_subproject dir)
  foreach(opt DEVMESH_BUILD_TESTS DEVMESH_BUILD_EXAMPLES DEVMESH_BUILD_BENCH DEVMESH_INSTALL
              DEVMESH_WARNINGS_AS_ERRORS)
    if(${opt})
      message(FATAL_ERROR "devmesh: ${opt} is ON in a project that is not top-level")
    endif()
  endforeach()
  if(TARGET devmesh_warnings)
    message(FATAL_ERROR "devmesh: devmesh_dev settings leaked into a consumer")
  endif()
  get_directory_property(subdirs DIRECTORY "${dir}" SUBDIRECTORIES)
  if(subdirs)
    message(FATAL_ERROR "devmesh: a subproject devmesh added directories: ${subdirs}")
  endif()
  # Only libraries: the INTERFACE ones (the headers, the backends) and the compiled runtime's
  # static ones: no test, example or bench target.
  get_directory_property(targets DIRECTORY "${dir}" BUILDSYSTEM_TARGETS)
  if(NOT "devmesh" IN_LIST targets)
    message(FATAL_ERROR "devmesh: target devmesh not found among ${targets}")
  endif()
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(NOT type STREQUAL "INTERFACE_LIBRARY" AND
       NOT (type STREQUAL "STATIC_LIBRARY" AND t MATCHES "^devmesh_(runtime|mpi|nccl_lib)$"))
      message(FATAL_ERROR "devmesh: a subproject devmesh defined the ${type} target ${t}")
    endif()
  endforeach()
  message(STATUS "devmesh is a well-behaved subproject: targets ${targets}")
endfunction()
