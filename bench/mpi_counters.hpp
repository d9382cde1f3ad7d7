// bench/mpi_counters.hpp: counts this process's communicator-creating MPI calls through the
// MPI profiling interface (PMPI): the program defines MPI_Comm_split & co, which count and
// forward to PMPI_*. Every call counts, including the ones devmesh makes inside
// init_device_mesh, so the numbers are what each method really costs in MPI calls.
// Include in exactly one TU of an MPI benchmark.
#pragma once
#include <devmesh/mpi/native.hpp>

namespace bench {
struct mpi_call_counts {
  long comm_create = 0;  // split, create, create_group, dup, cart_create, cart_sub
  long collective = 0;   // other collectives: allgather, allreduce, bcast, barrier (blocking or not)
  long received_bytes = 0;  // what those collectives deliver to this rank (all-gather: every rank's part)
};
inline mpi_call_counts mpi_calls;
/// Bytes of `count` elements of `t` from every rank of `c` (MPI_COMM_SELF: one rank's).
inline long gathered_bytes(int count, MPI_Datatype t, MPI_Comm c) {
  int size = 1, n = 1;
  PMPI_Type_size(t, &size);
  if (c != MPI_COMM_SELF) PMPI_Comm_size(c, &n);
  return static_cast<long>(count) * size * n;
}
}  // namespace bench

extern "C" {
int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm* out) {
  ++bench::mpi_calls.comm_create;
  return PMPI_Comm_split(c, color, key, out);
}
int MPI_Comm_create(MPI_Comm c, MPI_Group g, MPI_Comm* out) {
  ++bench::mpi_calls.comm_create;
  return PMPI_Comm_create(c, g, out);
}
int MPI_Comm_create_group(MPI_Comm c, MPI_Group g, int tag, MPI_Comm* out) {
  ++bench::mpi_calls.comm_create;
  return PMPI_Comm_create_group(c, g, tag, out);
}
int MPI_Comm_dup(MPI_Comm c, MPI_Comm* out) {
  ++bench::mpi_calls.comm_create;
  return PMPI_Comm_dup(c, out);
}
int MPI_Comm_idup(MPI_Comm c, MPI_Comm* out, MPI_Request* r) {
  ++bench::mpi_calls.comm_create;
  return PMPI_Comm_idup(c, out, r);
}
int MPI_Cart_create(MPI_Comm c, int nd, const int dims[], const int periods[], int reorder, MPI_Comm* out) {
  ++bench::mpi_calls.comm_create;
  return PMPI_Cart_create(c, nd, dims, periods, reorder, out);
}
int MPI_Cart_sub(MPI_Comm c, const int remain[], MPI_Comm* out) {
  ++bench::mpi_calls.comm_create;
  return PMPI_Cart_sub(c, remain, out);
}
int MPI_Allgather(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c) {
  ++bench::mpi_calls.collective;
  bench::mpi_calls.received_bytes += bench::gathered_bytes(rc, rt, c);
  return PMPI_Allgather(s, sc, st, r, rc, rt, c);
}
int MPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
  ++bench::mpi_calls.collective;
  bench::mpi_calls.received_bytes += bench::gathered_bytes(n, t, MPI_COMM_SELF);
  return PMPI_Allreduce(s, r, n, t, o, c);
}
int MPI_Iallgather(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c,
                   MPI_Request* q) {
  ++bench::mpi_calls.collective;
  bench::mpi_calls.received_bytes += bench::gathered_bytes(rc, rt, c);
  return PMPI_Iallgather(s, sc, st, r, rc, rt, c, q);
}
int MPI_Iallreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c, MPI_Request* q) {
  ++bench::mpi_calls.collective;
  bench::mpi_calls.received_bytes += bench::gathered_bytes(n, t, MPI_COMM_SELF);
  return PMPI_Iallreduce(s, r, n, t, o, c, q);
}
int MPI_Bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  ++bench::mpi_calls.collective;
  return PMPI_Bcast(b, n, t, root, c);
}
}
