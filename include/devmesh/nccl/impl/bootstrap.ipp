// devmesh/nccl/impl/bootstrap.ipp: bootstrap.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp), and world_from_env's reading of the launcher's
// environment, which only it uses.
#pragma once
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include <nccl.h>

#include "../../core/diagnostics.hpp"
#include "../bootstrap.hpp"
#include "../wait.hpp"

namespace devmesh::nccl {
namespace detail {

DEVMESH_DECL communicator init_rank(int nranks, int rank, unique_ids& ids, const options& o,
                                    std::shared_ptr<const host_channel> ch, const std::string& where) {
  ncclConfig_t cfg = to_config(o);
  ncclComm_t comm = nullptr;
  const char* call = ids.size() == 1 ? "ncclCommInitRankConfig" : "ncclCommInitRankScalable";
  const ncclResult_t r =
      ids.size() == 1 ? ncclCommInitRankConfig(&comm, nranks, ids[0], rank, &cfg)
                      : ncclCommInitRankScalable(&comm, nranks, rank, static_cast<int>(ids.size()), ids.data(), &cfg);
  wait_result w{r, comm, false};
  if (comm && may_be_in_progress(r, o.blocking)) w = wait_all({comm}, o.timeout);
  const std::string step = where + ": " + call + " (rank " + std::to_string(rank) + " of " + std::to_string(nranks) +
                           (o.name.empty() ? "" : ", commName '" + o.name + "'") + ")";
  agree_or_throw(ch.get(), rank, outcome_of(w), step, w.what(o.timeout, comm), "; communicator aborted",
                 [&]() noexcept {
                   if (comm) ncclCommAbort(comm);
                 });
  return make_communicator(comm, o, std::move(ch));
}

/// How world_from_env's messages begin.
inline constexpr const char* from_env = "devmesh: nccl::world_from_env: ";

/// The environment variable `var`, copied (a later setenv may invalidate getenv's pointer);
/// unset: appends `var` to `missing` ("A, B") and returns "".
DEVMESH_DECL std::string env_string(const char* var, std::string& missing) {
  if (const char* v = std::getenv(var)) return v;
  missing += (missing.empty() ? "" : ", ") + std::string(var);
  return {};
}

/// `text`, the value of `var`, as an int in [lo, hi]. It must be decimal digits and nothing
/// else: no sign (not even "+1" or "-0"), no blank, no base prefix, no suffix ("1x").
/// Otherwise throws comm_error quoting the value as given; `what` names the range ("a rank").
DEVMESH_DECL int env_int(const char* var, const std::string& text, int lo, int hi, const char* what) {
  const std::string where = from_env + std::string(var) + "='" + text + "'";
  const char* const first = text.data();
  const char* const last = first + text.size();
  int n = 0;
  const auto [end, ec] = std::from_chars(first, last, n);  // digits only after the check below
  if (text.empty() || *first < '0' || *first > '9' || end != last)
    throw comm_error(where + " is not a number (decimal digits only: no sign, blank or suffix)");
  if (ec == std::errc::result_out_of_range || n < lo || n > hi)
    throw comm_error(where + " is not " + what + " (" + std::to_string(lo) + ".." + std::to_string(hi) + ")");
  return n;
}

/// True when `s` is empty or only blanks (space, tab, newline, ...).
DEVMESH_DECL bool blank(const std::string& s) {
  for (unsigned char c : s)
    if (!std::isspace(c)) return false;
  return true;
}

/// Sets an environment variable that was unset and unsets it again when the scope ends, on
/// return and on every exception alike: world_from_env() leaves the environment as it found it.
class temporary_env {
 public:
  temporary_env(const char* name, const std::string& value) : name_(name) {
    if (::setenv(name, value.c_str(), 1) != 0)
      throw comm_error(from_env + std::string("cannot set ") + name + "=" + value + ": " +
                       std::strerror(errno));
  }
  temporary_env(const temporary_env&) = delete;
  temporary_env& operator=(const temporary_env&) = delete;
  ~temporary_env() { ::unsetenv(name_); }

 private:
  const char* name_;
};

/// This process's place in the job: RANK and WORLD_SIZE, validated (the rank below the size).
struct launch_place {
  int rank = 0;
  int size = 0;
};
DEVMESH_DECL launch_place place_from_env() {
  std::string missing;
  const std::string rank_text = env_string("RANK", missing);
  const std::string size_text = env_string("WORLD_SIZE", missing);
  if (!missing.empty())
    throw comm_error(from_env + std::string("missing launcher variable(s) ") + missing +
                     " (set by torchrun; with srun export RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS)");
  const launch_place p{env_int("RANK", rank_text, 0, INT_MAX, "a rank"),
                       env_int("WORLD_SIZE", size_text, 1, INT_MAX, "a world size")};
  if (p.rank >= p.size)
    throw comm_error(from_env + std::string("RANK='") + rank_text + "' is not below WORLD_SIZE='" + size_text + "'");
  return p;
}

/// Where NCCL's bootstrap root listens: the user's NCCL_COMM_ID as is, else
/// MASTER_ADDR:(MASTER_PORT + port_offset), which is `derived` (set for the call only).
struct bootstrap_address {
  std::string address;
  bool derived = false;
};
DEVMESH_DECL bootstrap_address address_from_env(int port_offset) {
  if (const char* user = std::getenv("NCCL_COMM_ID")) {
    if (blank(user))
      throw comm_error(from_env + std::string("NCCL_COMM_ID='") + user +
                       "' is empty or blank (set NCCL_COMM_ID=<host>:<port>, or unset it to use MASTER_ADDR and "
                       "MASTER_PORT)");
    return {user, false};
  }
  std::string missing;
  std::string a = env_string("MASTER_ADDR", missing);
  const std::string port_text = env_string("MASTER_PORT", missing);
  if (!missing.empty())
    throw comm_error(from_env + std::string("NCCL_COMM_ID is not set and neither is ") + missing +
                     " (set MASTER_ADDR and MASTER_PORT, or NCCL_COMM_ID=<host>:<port>)");
  if (blank(a))
    throw comm_error(from_env + std::string("MASTER_ADDR='") + a +
                     "' is empty or blank (set it to the host name or address of rank 0's node, or set "
                     "NCCL_COMM_ID=<host>:<port>)");
  for (unsigned char c : a)
    if (std::isspace(c) || std::iscntrl(c))
      throw comm_error(from_env + std::string("MASTER_ADDR='") + a +
                       "' contains a blank or control character (expected a host name or address)");
  const int port = env_int("MASTER_PORT", port_text, 1, 65535, "a TCP port");
  const long long sum = static_cast<long long>(port) + port_offset;  // cannot overflow
  if (sum < 1 || sum > 65535)
    throw comm_error(from_env + std::string("MASTER_PORT='") + port_text + "' + port_offset " +
                     std::to_string(port_offset) + " = " + std::to_string(sum) + " is not a TCP port (1..65535)");
  if (a.find(':') != std::string::npos && a.front() != '[') a = "[" + a + "]";  // IPv6
  return {a + ":" + std::to_string(sum), true};
}

}  // namespace detail

DEVMESH_DECL communicator world_from_env(const options& o, const env_options& e) {
  const detail::launch_place place = detail::place_from_env();
  const detail::bootstrap_address root = detail::address_from_env(e.port_offset);
  select_device(e.device);
  // NCCL reads NCCL_COMM_ID in ncclGetUniqueId and, on rank 0, in ncclCommInitRank* (which
  // starts its bootstrap root there before returning, non-blocking or not). Left set, it
  // would pin every later NCCL init of the process to this address; so it is unset when
  // this function returns or throws.
  std::optional<detail::temporary_env> set_id;
  if (root.derived) set_id.emplace("NCCL_COMM_ID", root.address);
  detail::unique_ids ids(1);
  // With NCCL_COMM_ID set, every rank gets the same id (the address); no exchange needed.
  if (ncclResult_t r = ncclGetUniqueId(&ids[0]); r != ncclSuccess)
    detail::throw_nccl("nccl::world_from_env: ncclGetUniqueId (NCCL_COMM_ID=" + root.address + ")", r, nullptr);
  return detail::init_rank(place.size, place.rank, ids, o, nullptr, "nccl::world_from_env");
}

}  // namespace devmesh::nccl
