// devmesh/nccl/bootstrap.hpp: creating the NCCL world communicator.
//
// Two ways in: from an MPI world (mpi_bootstrap.hpp: the unique id travels over MPI), or
// from the launcher's environment without MPI (world_from_env: torchrun --no-python,
// srun), where NCCL's own NCCL_COMM_ID mechanism replaces the id exchange: every rank
// derives the same id from the address, and rank 0 hosts NCCL's bootstrap root there.
// Compiled once (nccl/impl/bootstrap.ipp).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <nccl.h>

#include "../core/config.hpp"
#include "communicator.hpp"
#include "device.hpp"
#include "error.hpp"
#include "host_channel.hpp"
#include "options.hpp"

namespace devmesh::nccl {
namespace detail {

/// n ncclUniqueIds in one buffer. (Not std::vector<ncclUniqueId>: the id is an unnamed
/// struct, and nvcc 13 crashes destroying a vector of an unnamed type.)
class unique_ids {
 public:
  explicit unique_ids(std::size_t n) : bytes_(n * sizeof(ncclUniqueId)) {}
  std::size_t size() const { return bytes_.size() / sizeof(ncclUniqueId); }
  ncclUniqueId* data() { return reinterpret_cast<ncclUniqueId*>(bytes_.data()); }
  ncclUniqueId& operator[](std::size_t i) { return data()[i]; }

 private:
  std::vector<unsigned char> bytes_;
};

/// ncclCommInitRankConfig (one id) or ncclCommInitRankScalable (several), then a bounded
/// wait when non-blocking, then outcome agreement over `ch` (if any). On failure anywhere
/// the local communicator is aborted and comm_error is thrown.
DEVMESH_DECL communicator init_rank(int nranks, int rank, unique_ids& ids, const options& o,
                                    std::shared_ptr<const host_channel> ch, const std::string& where);

}  // namespace detail

/// Launch settings of world_from_env().
struct env_options {
  device_choice device{};
  /// When NCCL_COMM_ID is unset, world_from_env() sets it to MASTER_ADDR:(MASTER_PORT +
  /// port_offset) for the duration of the call (NCCL reads it only while creating the
  /// communicator). torchrun's agent already listens on MASTER_PORT with its own store, hence
  /// the default offset 1. The sum must be a TCP port (1..65535).
  int port_offset = 1;
};

/// The NCCL world of a job launched without MPI: RANK and WORLD_SIZE give this process's
/// place; NCCL_COMM_ID (or MASTER_ADDR/MASTER_PORT) where NCCL's bootstrap root listens.
/// Every variable is validated before any CUDA or NCCL call; a bad one throws comm_error
/// naming it and quoting its value. A NCCL_COMM_ID derived from MASTER_ADDR/MASTER_PORT is
/// unset again before returning or throwing, so the process environment is left as found
/// (not thread-safe against other threads reading or writing the environment meanwhile).
/// Without a host channel, a rank that fails cannot tell the others: they end by the
/// options' timeout (non-blocking) instead.
DEVMESH_DECL communicator world_from_env(const options& o = {}, const env_options& e = {});

}  // namespace devmesh::nccl

#if DEVMESH_HEADER_ONLY
#include "impl/bootstrap.ipp"
#endif
