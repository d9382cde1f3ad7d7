// tests/mpi/call_counter.hpp: MPI_Allreduce and MPI_Iallreduce calls per communicator,
// counted by PMPI wrappers (call_counter.cpp), to tell which path a collective took: the
// blocking call, or the watchdog's non-blocking one (runtime/tracked_call.hpp).
//
// call_counter.cpp defines MPI_Allreduce and MPI_Iallreduce in the test executable: they
// shadow libmpi's symbols for every call made from the executable (devmesh is header-only,
// so that is every devmesh call), count the call on its communicator and forward to the
// PMPI_ entry points.
#pragma once
#include <mpi.h>

#include <cstddef>

namespace call_counter {
/// MPI_Allreduce calls on c so far.
std::size_t allreduce(MPI_Comm c);
/// MPI_Iallreduce calls on c so far.
std::size_t iallreduce(MPI_Comm c);
}  // namespace call_counter
