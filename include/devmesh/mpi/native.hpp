// devmesh/mpi/native.hpp: <mpi.h> without the C++ bindings that MPI-3 removed (OpenMPI and
// MPICH still ship them; they do not build warning-free and devmesh does not use them).
#pragma once
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
