// devmesh/nccl/bootstrap.hpp: creating the NCCL world communicator.
//
// Two ways in: from an MPI world (mpi_bootstrap.hpp: the unique id travels over MPI), or
// from the launcher's environment without MPI (world_from_env: torchrun --no-python,
// srun), where NCCL's own NCCL_COMM_ID mechanism replaces the id exchange: every rank
// derives the same id from the address, and rank 0 hosts NCCL's bootstrap root there.
#pragma once
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <nccl.h>

#include "communicator.hpp"
#include "device.hpp"
#include "error.hpp"
#include "host_channel.hpp"
#include "options.hpp"
#include "wait.hpp"

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

inline const char* outcome_code_name(int c) {
  return c < 0 ? "device selection" : result_name(static_cast<ncclResult_t>(c));
}

/// ncclCommInitRankConfig (one id) or ncclCommInitRankScalable (several), then a bounded
/// wait when non-blocking, then outcome agreement over `ch` (if any). On failure anywhere
/// the local communicator is aborted and comm_error is thrown.
inline communicator init_rank(int nranks, int rank, unique_ids& ids, const options& o,
                              std::shared_ptr<const host_channel> ch, const std::string& where) {
  ncclConfig_t cfg = to_config(o);
  ncclComm_t comm = nullptr;
  const char* call = ids.size() == 1 ? "ncclCommInitRankConfig" : "ncclCommInitRankScalable";
  ncclResult_t r = ids.size() == 1
                       ? ncclCommInitRankConfig(&comm, nranks, ids[0], rank, &cfg)
                       : ncclCommInitRankScalable(&comm, nranks, rank, static_cast<int>(ids.size()), ids.data(), &cfg);
  wait_result w{r, comm, false};
  if (comm && (r == ncclInProgress || (r == ncclSuccess && !o.blocking))) w = wait_all({comm}, o.timeout);
  std::string local = w.timed_out ? "timed out after " + std::to_string(o.timeout.count()) + " ms"
                      : w.result != ncclSuccess ? describe(w.result, comm)
                                                : std::string();
  rank_outcome mine{static_cast<int>(w.timed_out ? outcome::timed_out
                                     : w.result != ncclSuccess ? outcome::failed
                                                               : outcome::ok),
                    static_cast<int>(w.result)};
  std::string summary;
  try {
    summary = agree(ch.get(), rank, mine, outcome_code_name);
  } catch (...) {
    if (comm) ncclCommAbort(comm);
    throw;
  }
  if (!summary.empty()) {
    if (comm) ncclCommAbort(comm);
    throw comm_error("devmesh: " + where + ": " + call + " (rank " + std::to_string(rank) + " of " +
                     std::to_string(nranks) + (o.name.empty() ? "" : ", commName '" + o.name + "'") + ") " +
                     summary + (local.empty() ? std::string() : "; here: " + local) + "; communicator aborted");
  }
  return make_communicator(comm, o, std::move(ch));
}

inline int env_int(const char* var, std::string& missing) {
  const char* v = std::getenv(var);
  if (!v) {
    missing += (missing.empty() ? "" : ", ") + std::string(var);
    return -1;
  }
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || n < 0 || n > 0x7fffffff)
    throw comm_error(std::string("devmesh: nccl::world_from_env: ") + var + "='" + v + "' is not an integer >= 0");
  return static_cast<int>(n);
}

}  // namespace detail

/// Launch settings of world_from_env().
struct env_options {
  device_choice device{};
  /// NCCL_COMM_ID, when unset, becomes MASTER_ADDR:(MASTER_PORT + port_offset). torchrun's
  /// agent already listens on MASTER_PORT with its own store, hence the default offset 1.
  int port_offset = 1;
};

/// The NCCL world of a job launched without MPI: RANK and WORLD_SIZE give this process's
/// place; NCCL_COMM_ID (or MASTER_ADDR/MASTER_PORT) where NCCL's bootstrap root listens.
/// Without a host channel, a rank that fails cannot tell the others: they end by the
/// options' timeout (non-blocking) instead.
inline communicator world_from_env(const options& o = {}, const env_options& e = {}) {
  std::string missing;
  const int rank = detail::env_int("RANK", missing);
  const int size = detail::env_int("WORLD_SIZE", missing);
  if (!missing.empty())
    throw comm_error("devmesh: nccl::world_from_env: missing launcher variable(s) " + missing +
                     " (set by torchrun; with srun export RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS)");
  if (size < 1 || rank >= size)
    throw comm_error("devmesh: nccl::world_from_env: RANK=" + std::to_string(rank) + " is not below WORLD_SIZE=" +
                     std::to_string(size));
  if (!std::getenv("NCCL_COMM_ID")) {
    std::string miss;
    const char* addr = std::getenv("MASTER_ADDR");
    if (!addr) miss = "MASTER_ADDR";
    const int port = detail::env_int("MASTER_PORT", miss);
    if (!miss.empty())
      throw comm_error("devmesh: nccl::world_from_env: NCCL_COMM_ID is not set and neither is " + miss +
                       " (set MASTER_ADDR and MASTER_PORT, or NCCL_COMM_ID=<host>:<port>)");
    if (port + e.port_offset < 1 || port + e.port_offset > 65535)
      throw comm_error("devmesh: nccl::world_from_env: MASTER_PORT=" + std::to_string(port) + " + port_offset " +
                       std::to_string(e.port_offset) + " is not a TCP port");
    std::string a = addr;
    if (a.find(':') != std::string::npos && a.front() != '[') a = "[" + a + "]";  // IPv6
    std::string id = a + ":" + std::to_string(port + e.port_offset);
    setenv("NCCL_COMM_ID", id.c_str(), 0);
  }
  select_device(e.device);
  detail::unique_ids ids(1);
  // With NCCL_COMM_ID set, every rank gets the same id (the address); no exchange needed.
  if (ncclResult_t r = ncclGetUniqueId(&ids[0]); r != ncclSuccess)
    detail::throw_nccl("nccl::world_from_env: ncclGetUniqueId (NCCL_COMM_ID=" + std::string(std::getenv("NCCL_COMM_ID")) + ")",
                       r, nullptr);
  return detail::init_rank(size, rank, ids, o, nullptr, "nccl::world_from_env");
}

}  // namespace devmesh::nccl
