// tests/reliability/comm_counter.cpp: PMPI wrappers behind comm_counter.hpp.
#include "comm_counter.hpp"

#include <mpi.h>

#include <cstdio>
#include <mutex>
#include <set>

namespace {
std::mutex mu;  // the thread test creates nothing concurrently, but MPI_THREAD_MULTIPLE allows it
std::set<MPI_Comm> handles;
std::size_t n_created = 0, n_freed = 0, n_unknown = 0;
std::string violation;

int record_new(int rc, const MPI_Comm* out) {
  if (rc == MPI_SUCCESS && out && *out != MPI_COMM_NULL) {
    std::lock_guard lock(mu);
    handles.insert(*out);
    ++n_created;
  }
  return rc;
}
}  // namespace

namespace comm_counter {
std::size_t live() {
  std::lock_guard lock(mu);
  return handles.size();
}
std::size_t created() {
  std::lock_guard lock(mu);
  return n_created;
}
std::size_t freed() {
  std::lock_guard lock(mu);
  return n_freed;
}
std::size_t unknown_frees() {
  std::lock_guard lock(mu);
  return n_unknown;
}
std::string first_violation() {
  std::lock_guard lock(mu);
  return violation;
}
}  // namespace comm_counter

// The wrappers: the signatures of OpenMPI's and MPICH's mpi.h.
extern "C" {
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* out) {
  return record_new(PMPI_Comm_split(comm, color, key, out), out);
}
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm* out) {
  return record_new(PMPI_Comm_split_type(comm, type, key, info, out), out);
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* out) { return record_new(PMPI_Comm_dup(comm, out), out); }
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* out) {
  return record_new(PMPI_Comm_dup_with_info(comm, info, out), out);
}
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* out, MPI_Request* request) {
  return record_new(PMPI_Comm_idup(comm, out, request), out);
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* out) {
  return record_new(PMPI_Comm_create(comm, group, out), out);
}
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* out) {
  return record_new(PMPI_Comm_create_group(comm, group, tag, out), out);
}
int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm* out) {
  return record_new(PMPI_Cart_create(comm, ndims, dims, periods, reorder, out), out);
}
int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* out) {
  return record_new(PMPI_Cart_sub(comm, remain_dims, out), out);
}
int MPI_Intercomm_create(MPI_Comm local, int local_leader, MPI_Comm bridge, int remote_leader, int tag, MPI_Comm* out) {
  return record_new(PMPI_Intercomm_create(local, local_leader, bridge, remote_leader, tag, out), out);
}
int MPI_Intercomm_merge(MPI_Comm inter, int high, MPI_Comm* out) {
  return record_new(PMPI_Intercomm_merge(inter, high, out), out);
}

static void record_free(MPI_Comm c) {
  std::lock_guard lock(mu);
  if (handles.erase(c) == 1) {
    ++n_freed;
  } else {
    ++n_unknown;
    if (violation.empty()) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "MPI_Comm_free of handle %p, not created or already freed",
                    static_cast<void*>(c));
      violation = buf;
    }
  }
}
int MPI_Comm_free(MPI_Comm* comm) {
  record_free(comm ? *comm : MPI_COMM_NULL);  // before the call: a bad handle may make it fail
  return PMPI_Comm_free(comm);
}
int MPI_Comm_disconnect(MPI_Comm* comm) {
  record_free(comm ? *comm : MPI_COMM_NULL);
  return PMPI_Comm_disconnect(comm);
}
}  // extern "C"
