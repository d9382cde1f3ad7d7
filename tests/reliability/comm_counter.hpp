// tests/reliability/comm_counter.hpp: live MPI communicators, counted by PMPI wrappers.
//
// comm_counter.cpp defines MPI_Comm_split, MPI_Comm_dup, MPI_Comm_create, ... and
// MPI_Comm_free in the test executable: they shadow libmpi's symbols for every call made
// from the executable (devmesh is header-only, so that is every devmesh call), record the
// handle and forward to the PMPI_ entry points. OpenMPI's internal communicators are not
// seen (the library calls its own functions directly), which is what we want: the count is
// what devmesh created and has not freed.
#pragma once
#include <cstddef>
#include <string>

namespace comm_counter {
/// Communicators created through the wrappers and not yet freed (MPI_COMM_NULL results,
/// e.g. MPI_UNDEFINED colors, are not communicators and are not counted).
std::size_t live();
/// Totals since start.
std::size_t created();
std::size_t freed();
/// Frees of a handle the wrappers never handed out, or freed twice: must stay 0.
std::size_t unknown_frees();
/// A description of the first unknown free ("" if none).
std::string first_violation();
}  // namespace comm_counter
