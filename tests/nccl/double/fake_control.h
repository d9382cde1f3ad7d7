// tests/nccl/double/fake_control.h: what the NCCL/CUDA test double exposes to tests.
//
// The double (fake_nccl.cpp) implements, at the C API boundary, exactly the NCCL and CUDA
// runtime functions devmesh's NCCL backend calls, over host memory and MPI. These extra
// functions let tests see what the backend asked for. Test-only; never installed.
#pragma once
#include <cuda_runtime_api.h>
#include <nccl.h>

extern "C" {

/// Communicators created and not yet destroyed or aborted (in this process).
int devmesh_fake_nccl_live_comms(void);
/// How many communicators were ended by ncclCommAbort / by ncclCommDestroy, and how many
/// ncclCommDestroy calls came without a successful ncclCommFinalize first.
int devmesh_fake_nccl_aborted(void);
int devmesh_fake_nccl_destroyed(void);
int devmesh_fake_nccl_destroyed_unfinalized(void);
/// Device allocations (cudaMalloc) not yet freed.
int devmesh_fake_cuda_live_allocs(void);
/// The device made current by cudaSetDevice (-1: none yet).
int devmesh_fake_cuda_current_device(void);
/// Events created (cudaEventCreate) and not yet destroyed (a leak fails the process at exit).
int devmesh_fake_cuda_live_events(void);
/// Works (NCCL calls, cudaMemcpyAsync) on stream s not finished yet, after a progress pass
/// (the double is asynchronous: fake_streams.h).
int devmesh_fake_cuda_pending(cudaStream_t s);
/// Works ncclCommAbort / ncclCommDestroy abandoned unfinished (their MPI requests parked).
int devmesh_fake_nccl_works_abandoned(void);

/// The last ncclCommSplit's arguments as received (color after dm::no_color mapping).
void devmesh_fake_nccl_last_split(int* color, int* key);
/// How many ncclCommSplit / ncclGroupEnd calls this process made.
int devmesh_fake_nccl_split_calls(void);
int devmesh_fake_nccl_group_ends(void);
/// The number of ids of the last ncclCommInitRankScalable (0: ncclCommInitRankConfig).
int devmesh_fake_nccl_last_init_nids(void);

/// The last collective or point-to-point call: its name ("ncclAllReduce", "ncclSend", ...),
/// datatype, count, op (-1 if none), root/peer (-1 if none), and whether it was issued
/// inside a group.
struct devmesh_fake_call {
  const char* name;
  ncclDataType_t datatype;
  unsigned long long count;
  int op;
  int peer;
  int in_group;
};
devmesh_fake_call devmesh_fake_nccl_last_call(void);

/// A communicator's MPI mirror and config as the double saw them.
struct devmesh_fake_comm_info {
  int world_ranks[64];  // MPI_COMM_WORLD ranks of the members, in communicator rank order (first 64)
  int size;
  int blocking;
  int cga_cluster_size;
  int min_ctas;
  int max_ctas;
  int split_share;
  char net_name[64];
  char comm_name[64];
};
int devmesh_fake_nccl_comm_info(ncclComm_t comm, devmesh_fake_comm_info* info);

}  // extern "C"
