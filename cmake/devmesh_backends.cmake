# devmesh::mpi and devmesh::nccl: INTERFACE targets that switch a backend on.
# Linking one defines its DEVMESH_WITH_* macro, so <devmesh/devmesh.hpp> pulls it in.
# The core never needs MPI or CUDA. Each backend's rules live in their own file.
set(DEVMESH_INSTALLED_BACKENDS "")
include(${CMAKE_CURRENT_LIST_DIR}/devmesh_mpi.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/devmesh_nccl.cmake OPTIONAL)
