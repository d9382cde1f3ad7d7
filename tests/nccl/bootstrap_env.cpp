// tests/nccl/bootstrap_env.cpp: dm::nccl::world_from_env() against hostile launcher
// environments, over the NCCL/CUDA test double, under mpirun (2 and 4 ranks; every rank runs
// every case with the same variables, as under torchrun).
//
// The two NCCL entry points world_from_env calls are wrapped at link time (-Wl,--wrap, see
// CMakeLists.txt): the wrappers record NCCL_COMM_ID as NCCL sees it when called, can be told
// to fail, and otherwise forward to the double. So the cases check (1) that bad variables are
// refused, with the exact message, before NCCL is called; (2) that NCCL_COMM_ID set by
// devmesh is gone after every return and every throw, and that a retry uses the corrected
// address; (3) that a NCCL_COMM_ID set by the user is used and left alone.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <climits>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"

namespace dm = devmesh;
using namespace nccl_test;

namespace doctest {
template <>
struct StringMaker<std::optional<std::string>> {
  static String convert(const std::optional<std::string>& v) { return v ? ("'" + *v + "'").c_str() : "(unset)"; }
};
}  // namespace doctest

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::optional<std::string>(v) : std::nullopt;
}

/// What the wrapped NCCL calls saw, and the failures they are to inject.
struct probe_state {
  int get_id_calls = 0;
  int init_calls = 0;
  std::optional<std::string> comm_id_at_get_id;  // NCCL_COMM_ID during the last ncclGetUniqueId
  std::optional<std::string> comm_id_at_init;    // ... during the last ncclCommInitRankConfig
  ncclResult_t fail_get_id = ncclSuccess;
  ncclResult_t fail_init = ncclSuccess;
};
probe_state probe;

}  // namespace

extern "C" {
ncclResult_t __real_ncclGetUniqueId(ncclUniqueId* id);
ncclResult_t __real_ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                           ncclConfig_t* config);

ncclResult_t __wrap_ncclGetUniqueId(ncclUniqueId* id) {
  ++probe.get_id_calls;
  probe.comm_id_at_get_id = env("NCCL_COMM_ID");
  if (probe.fail_get_id != ncclSuccess) return probe.fail_get_id;
  return __real_ncclGetUniqueId(id);
}

ncclResult_t __wrap_ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                           ncclConfig_t* config) {
  ++probe.init_calls;
  probe.comm_id_at_init = env("NCCL_COMM_ID");
  if (probe.fail_init != ncclSuccess) {  // on every rank: nobody waits for anybody
    *comm = nullptr;
    return probe.fail_init;
  }
  return __real_ncclCommInitRankConfig(comm, nranks, id, rank, config);
}
}  // extern "C"

namespace {

/// A torchrun-like environment for one case: RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1,
/// MASTER_PORT=29500, no NCCL_COMM_ID; the probe reset. Cases override with scoped_env.
struct launcher {
  const std::string rank = std::to_string(world_rank()), size = std::to_string(world_size());
  scoped_env r{"RANK", rank.c_str()}, n{"WORLD_SIZE", size.c_str()}, a{"MASTER_ADDR", "127.0.0.1"},
      p{"MASTER_PORT", "29500"}, id{"NCCL_COMM_ID", nullptr};
  launcher() { probe = {}; }
  ~launcher() {
    probe = {};
    CHECK(devmesh_fake_nccl_live_comms() == 0);
    CHECK(devmesh_fake_cuda_live_allocs() == 0);
  }
};

/// world_from_env refuses with exactly `message`: no NCCL call made, NCCL_COMM_ID as before.
void refuses(const std::string& message, const dm::nccl::env_options& e = {}) {
  INFO("expected: ", message);
  const auto id_before = env("NCCL_COMM_ID");
  const int get_id = probe.get_id_calls, init = probe.init_calls;
  CHECK_THROWS_WITH_AS(dm::nccl::world_from_env(fast(), e), message.c_str(), dm::comm_error);
  CHECK(probe.get_id_calls == get_id);
  CHECK(probe.init_calls == init);
  CHECK(env("NCCL_COMM_ID") == id_before);
}

/// world_from_env succeeds, NCCL saw NCCL_COMM_ID=`comm_id`, and the world is whole.
void succeeds_with(const std::string& comm_id, const dm::nccl::env_options& e = {}) {
  INFO("expected NCCL_COMM_ID: ", comm_id);
  auto w = dm::nccl::world_from_env(fast(), e);
  CHECK(probe.comm_id_at_get_id == comm_id);
  CHECK(probe.comm_id_at_init == comm_id);
  CHECK(w.rank() == world_rank());
  CHECK(w.size() == world_size());
  std::vector<int> all(static_cast<std::size_t>(w.size()));
  const int me = w.rank() + 7;
  w.all_gather_bytes(&me, all.data(), sizeof me);
  for (int q = 0; q < w.size(); ++q) CHECK(all[static_cast<std::size_t>(q)] == q + 7);
}

const std::string prefix = "devmesh: nccl::world_from_env: ";
const std::string not_a_number = "' is not a number (decimal digits only: no sign, blank or suffix)";

}  // namespace

// ---- RANK / WORLD_SIZE ------------------------------------------------------------------------
TEST_CASE("RANK and WORLD_SIZE: decimal digits only, in range, RANK below WORLD_SIZE") {
  launcher l;
  // MASTER_ADDR unset: a value wrongly accepted then fails here with another message instead
  // of starting NCCL with the same wrong rank on every rank.
  scoped_env a("MASTER_ADDR", nullptr);
  for (const char* bad : {"1x", "-1", "-0", "+1", " 1", "1 ", "", "0x1", "1.0", "１"}) {
    scoped_env r("RANK", bad);
    refuses(prefix + "RANK='" + bad + not_a_number);
  }
  for (const char* huge : {"2147483648", "99999999999", "184467440737095516160"}) {
    scoped_env r("RANK", huge);
    refuses(prefix + "RANK='" + huge + "' is not a rank (0..2147483647)");
  }
  for (const char* bad : {"4x", "-4", "+4", "\t4", ""}) {
    scoped_env n("WORLD_SIZE", bad);
    refuses(prefix + "WORLD_SIZE='" + bad + not_a_number);
  }
  {
    scoped_env r("RANK", "0"), n("WORLD_SIZE", "0");
    refuses(prefix + "WORLD_SIZE='0' is not a world size (1..2147483647)");
  }
  {
    scoped_env n("WORLD_SIZE", "4294967297");  // 2^32 + 1: wraps to 1 in a 32-bit conversion
    refuses(prefix + "WORLD_SIZE='4294967297' is not a world size (1..2147483647)");
  }
  {
    scoped_env r("RANK", "4"), n("WORLD_SIZE", "4");
    refuses(prefix + "RANK='4' is not below WORLD_SIZE='4'");
  }
  {
    scoped_env r("RANK", "2147483647"), n("WORLD_SIZE", "2147483647");
    refuses(prefix + "RANK='2147483647' is not below WORLD_SIZE='2147483647'");
  }
}

// ---- MASTER_PORT ------------------------------------------------------------------------------
TEST_CASE("MASTER_PORT: a TCP port, and MASTER_PORT + port_offset too, without overflow") {
  launcher l;
  for (const char* port : {"0", "65536", "2147483647", "2147483648", "99999999999999999999"}) {
    scoped_env p("MASTER_PORT", port);
    refuses(prefix + "MASTER_PORT='" + port + "' is not a TCP port (1..65535)");
  }
  for (const char* port : {"+29500", " 29500", "29500 ", "-1", "0x7530", "", "29500/tcp"}) {
    scoped_env p("MASTER_PORT", port);
    refuses(prefix + "MASTER_PORT='" + port + not_a_number);
  }
  {
    scoped_env p("MASTER_PORT", "65535");
    refuses(prefix + "MASTER_PORT='65535' + port_offset 1 = 65536 is not a TCP port (1..65535)");
  }
  dm::nccl::env_options e;
  e.port_offset = INT_MAX;  // MASTER_PORT + port_offset overflowed int here
  refuses(prefix + "MASTER_PORT='29500' + port_offset 2147483647 = 2147513147 is not a TCP port (1..65535)", e);
  e.port_offset = -29500;
  refuses(prefix + "MASTER_PORT='29500' + port_offset -29500 = 0 is not a TCP port (1..65535)", e);
  e.port_offset = INT_MIN;
  refuses(prefix + "MASTER_PORT='29500' + port_offset -2147483648 = -2147454148 is not a TCP port (1..65535)", e);
  // The edges still work.
  {
    scoped_env p("MASTER_PORT", "65534");
    succeeds_with("127.0.0.1:65535");
  }
  e.port_offset = 0;
  scoped_env p("MASTER_PORT", "1");
  succeeds_with("127.0.0.1:1", e);
  CHECK(env("NCCL_COMM_ID") == std::nullopt);
}

// ---- MASTER_ADDR ------------------------------------------------------------------------------
TEST_CASE("MASTER_ADDR: not empty, not blank, no blank or control character inside") {
  launcher l;
  for (const char* addr : {"", " ", "\t", "  \n "}) {
    scoped_env a("MASTER_ADDR", addr);
    refuses(prefix + "MASTER_ADDR='" + addr +
            "' is empty or blank (set it to the host name or address of rank 0's node, or set "
            "NCCL_COMM_ID=<host>:<port>)");
  }
  for (const char* addr : {" node0", "node0 ", "node 0", "node0\n", "node\x01"}) {
    scoped_env a("MASTER_ADDR", addr);
    refuses(prefix + "MASTER_ADDR='" + addr + "' contains a blank or control character (expected a host name or address)");
  }
  {
    scoped_env a("MASTER_ADDR", "::1");  // IPv6: bracketed
    succeeds_with("[::1]:29501");
  }
  CHECK(env("NCCL_COMM_ID") == std::nullopt);
}

// ---- NCCL_COMM_ID set by devmesh: restored on every path ---------------------------------------
TEST_CASE("NCCL_COMM_ID: unset again after a failed ncclGetUniqueId; a retry uses the corrected address") {
  launcher l;
  probe.fail_get_id = ncclSystemError;
  CHECK_THROWS_WITH_AS(dm::nccl::world_from_env(fast()),
                       doctest::Contains((prefix + "ncclGetUniqueId (NCCL_COMM_ID=127.0.0.1:29501) failed: ncclSystemError").c_str()),
                       dm::comm_error);
  CHECK(probe.comm_id_at_get_id == "127.0.0.1:29501");  // set while NCCL looked
  CHECK(env("NCCL_COMM_ID") == std::nullopt);            // and gone after
  probe.fail_get_id = ncclSuccess;
  scoped_env a("MASTER_ADDR", "127.0.0.2"), p("MASTER_PORT", "29700");
  succeeds_with("127.0.0.2:29701");
  CHECK(env("NCCL_COMM_ID") == std::nullopt);
}

TEST_CASE("NCCL_COMM_ID: unset again after a failed ncclCommInitRankConfig; a retry uses the corrected address") {
  launcher l;
  probe.fail_init = ncclInternalError;
  const std::string r = std::to_string(world_rank()), n = std::to_string(world_size());
  const std::string expected =
      prefix + "ncclCommInitRankConfig (rank " + r + " of " + n + ") failed on rank(s) " + r + " [ncclInternalError]";
  CHECK_THROWS_WITH_AS(dm::nccl::world_from_env(fast()), doctest::Contains(expected.c_str()), dm::comm_error);
  CHECK(probe.comm_id_at_init == "127.0.0.1:29501");
  CHECK(env("NCCL_COMM_ID") == std::nullopt);
  probe.fail_init = ncclSuccess;
  scoped_env a("MASTER_ADDR", "127.0.0.3"), p("MASTER_PORT", "29800");
  succeeds_with("127.0.0.3:29801");
  CHECK(env("NCCL_COMM_ID") == std::nullopt);
}

TEST_CASE("NCCL_COMM_ID: not left set by a failed device selection; a retry uses the corrected address") {
  launcher l;
  dm::nccl::env_options e;
  e.device = dm::nccl::device_choice{1000};
  CHECK_THROWS_WITH_AS(dm::nccl::world_from_env(fast(), e), doctest::Contains("cannot select a GPU: local rank 1000"),
                       dm::comm_error);
  CHECK(probe.get_id_calls == 0);
  CHECK(env("NCCL_COMM_ID") == std::nullopt);
  scoped_env p("MASTER_PORT", "29900");
  succeeds_with("127.0.0.1:29901");
  CHECK(env("NCCL_COMM_ID") == std::nullopt);
}

TEST_CASE("NCCL_COMM_ID: unset again after success; a second world uses the new MASTER_ADDR/MASTER_PORT") {
  launcher l;
  succeeds_with("127.0.0.1:29501");
  CHECK(env("NCCL_COMM_ID") == std::nullopt);
  scoped_env a("MASTER_ADDR", "127.0.0.4"), p("MASTER_PORT", "30000");
  succeeds_with("127.0.0.4:30001");
  CHECK(env("NCCL_COMM_ID") == std::nullopt);
}

// ---- NCCL_COMM_ID set by the user: used as is, never touched -----------------------------------
TEST_CASE("NCCL_COMM_ID set by the user: MASTER_* ignored, value kept after success and failure") {
  launcher l;
  scoped_env id("NCCL_COMM_ID", "10.1.2.3:4567"), a("MASTER_ADDR", ""), p("MASTER_PORT", "not a port");
  succeeds_with("10.1.2.3:4567");
  CHECK(env("NCCL_COMM_ID") == "10.1.2.3:4567");
  probe.fail_init = ncclInternalError;
  CHECK_THROWS_AS(dm::nccl::world_from_env(fast()), dm::comm_error);
  CHECK(probe.comm_id_at_init == "10.1.2.3:4567");
  CHECK(env("NCCL_COMM_ID") == "10.1.2.3:4567");
}

TEST_CASE("NCCL_COMM_ID set by the user but empty or blank: refused, left as it was") {
  launcher l;
  for (const char* bad : {"", " ", "\t"}) {
    scoped_env id("NCCL_COMM_ID", bad);
    refuses(prefix + "NCCL_COMM_ID='" + bad +
            "' is empty or blank (set NCCL_COMM_ID=<host>:<port>, or unset it to use MASTER_ADDR and MASTER_PORT)");
    CHECK(env("NCCL_COMM_ID") == bad);
  }
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  doctest::Context ctx(argc, argv);
  if (world_rank() != 0) ctx.setOption("out", "/dev/null");
  int failed = ctx.run() != 0 ? 1 : 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed) std::fprintf(stderr, "rank %d: failures\n", world_rank());
  MPI_Finalize();
  return any;
}
