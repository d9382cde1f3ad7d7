# devmesh::mpi and devmesh::nccl: INTERFACE targets that switch a backend on.
# Linking one defines its DEVMESH_WITH_* macro, so <devmesh/devmesh.hpp> pulls it in.
# (Filled in by the runtime work; the core never needs MPI or CUDA.)
set(DEVMESH_INSTALLED_BACKENDS "")
