# The compiled runtime, then the backends: devmesh::mpi and devmesh::nccl (compiled, the
# default) and devmesh::mpi_header_only and devmesh::nccl_header_only. Linking one defines its
# DEVMESH_WITH_* macro, so <devmesh/devmesh.hpp> pulls it in. The core never needs MPI or
# CUDA. Each backend's rules live in their own file, which the installed package
# (devmesh-config.cmake) includes too: there each backend is created when the consumer's
# machine has its libraries.
include(${CMAKE_CURRENT_LIST_DIR}/devmesh_compiled.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/devmesh_mpi.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/devmesh_nccl.cmake)
