# devmesh::mpi and devmesh::nccl: INTERFACE targets that switch a backend on.
# Linking one defines its DEVMESH_WITH_* macro, so <devmesh/devmesh.hpp> pulls it in.
# The core never needs MPI or CUDA. Each backend's rules live in their own file, which the
# installed package (devmesh-config.cmake) includes too: there each backend is created when
# the consumer's machine has its libraries.
include(${CMAKE_CURRENT_LIST_DIR}/devmesh_mpi.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/devmesh_nccl.cmake)
