// tests/mpi/call_counter.cpp: PMPI wrappers behind call_counter.hpp.
#include "call_counter.hpp"

#include <map>
#include <mutex>

namespace {
std::mutex mu;  // collectives of several threads (the thread tests) may run at once
std::map<MPI_Comm, std::size_t> blocking, nonblocking;

std::size_t count(const std::map<MPI_Comm, std::size_t>& calls, MPI_Comm c) {
  std::lock_guard lock(mu);
  const auto it = calls.find(c);
  return it == calls.end() ? 0 : it->second;
}
void add(std::map<MPI_Comm, std::size_t>& calls, MPI_Comm c) {
  std::lock_guard lock(mu);
  ++calls[c];
}
}  // namespace

namespace call_counter {
std::size_t allreduce(MPI_Comm c) { return count(blocking, c); }
std::size_t iallreduce(MPI_Comm c) { return count(nonblocking, c); }
}  // namespace call_counter

extern "C" {
int MPI_Allreduce(const void* send, void* recv, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  add(blocking, c);
  return PMPI_Allreduce(send, recv, n, t, op, c);
}
int MPI_Iallreduce(const void* send, void* recv, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request* r) {
  add(nonblocking, c);
  return PMPI_Iallreduce(send, recv, n, t, op, c, r);
}
}
