// tests/mpi/mpi_doctest_main.cpp: the main of every doctest program run under mpirun (what
// it does: mpi_doctest.hpp). It is the one translation unit that implements doctest, so its
// reporter can derive from doctest's ConsoleReporter (visible only here, as doctest's author
// suggests for a custom console) and print through a stream that prefixes each line with
// the rank.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>
#include <thread>
#include <vector>

#include <devmesh/mpi/environment.hpp>

#include "mpi_doctest.hpp"

namespace test {
namespace {

struct harness_state {
  bool tests_own_mpi = false;
  int last_rank = -1;
  int provided = MPI_THREAD_SINGLE;
  std::vector<std::string> args;
  MPI_Comm comm = MPI_COMM_NULL;  // the harness's own: its agreements never match a test's messages
  const doctest::TestCaseData* current = nullptr;
  std::string skip_reason;  // of the running test case on this rank ("" if not skipped)
  std::string first_skip;   // the first skipped test case's reason, for the SKIPPED line
  int failed_cases = 0, skipped_cases = 0;
  doctest::TestRunStats local{};
};
harness_state& state() {
  static harness_state s;
  return s;
}

bool mpi_up() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

bool leader() { return world_rank() == 0; }

// ---- output: every line prefixed with the rank, written in one piece per event ------------
class rank_lines : public std::streambuf {
 public:
  void flush_pending() {
    if (pending_.empty()) return;
    std::fwrite(pending_.data(), 1, pending_.size(), stdout);
    std::fflush(stdout);
    pending_.clear();
  }

 protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) put(static_cast<char>(c));
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    for (std::streamsize i = 0; i < n; ++i) put(s[i]);
    return n;
  }
  int sync() override {
    flush_pending();
    return 0;
  }

 private:
  void put(char c) {
    if (line_start_) pending_ += "[rank " + std::to_string(world_rank()) + "] ";
    pending_ += c;
    line_start_ = c == '\n';
  }
  std::string pending_;
  bool line_start_ = true;
};
rank_lines& rank_buffer() {
  static rank_lines b;
  return b;
}
std::ostream& rank_stream() {
  static std::ostream s(&rank_buffer());
  return s;
}

/// doctest's console, through rank_stream(): failures on every rank, everything else on rank 0
/// only; the run's summary comes from main() (the agreed one), except when the tests own MPI.
struct rank_console : doctest::ConsoleReporter {
  explicit rank_console(const doctest::ContextOptions& o) : ConsoleReporter(o, rank_stream()) {}
  void report_query(const doctest::QueryData& q) override {
    if (leader()) ConsoleReporter::report_query(q);
    done();
  }
  void test_run_start() override {
    if (leader()) ConsoleReporter::test_run_start();
    done();
  }
  void test_run_end(const doctest::TestRunStats& s) override {
    if (state().tests_own_mpi && leader()) ConsoleReporter::test_run_end(s);
    done();
  }
  void test_case_end(const doctest::CurrentTestCaseStats& s) override {
    ConsoleReporter::test_case_end(s);
    const bool crash = (s.failure_flags & doctest::TestCaseFailureReason::Crash) != 0;
    // One line per failed test case and rank (bounded.sh looks for it, tests/reliability).
    if (!s.testCaseSuccess) rank_stream() << (crash ? "CRASHED" : "FAILED") << ": test case '" << tc->m_name << "'\n";
    done();
  }
  void test_case_exception(const doctest::TestCaseException& e) override {
    ConsoleReporter::test_case_exception(e);
    done();
  }
  void log_assert(const doctest::AssertData& a) override {
    if (a.m_failed || leader()) ConsoleReporter::log_assert(a);
    done();
  }
  void log_message(const doctest::MessageData& m) override {
    const bool failure = (m.m_severity & doctest::assertType::is_warn) == 0;
    if (failure || leader()) ConsoleReporter::log_message(m);
    done();
  }

 private:
  static void done() { rank_buffer().flush_pending(); }
};
DOCTEST_REGISTER_REPORTER("mpi", 0, rank_console);

// ---- the agreement after each test case ----------------------------------------------------
double agreement_seconds() {
  const char* s = std::getenv("DEVMESH_TEST_AGREEMENT_TIMEOUT");
  const double v = s ? std::atof(s) : 0.0;
  return v > 0 ? v : 30.0;
}

/// Waits for `req`; a rank whose test case failed (it may have left a collective the others
/// are blocked in) waits at most agreement_seconds(), then aborts the job.
void wait_for_everyone(MPI_Request& req, bool bounded, const char* test_case) {
  if (!bounded) {
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    return;
  }
  const double limit = agreement_seconds();
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit);
  for (int done = 0; MPI_Test(&req, &done, MPI_STATUS_IGNORE), !done;) {
    if (std::chrono::steady_clock::now() > end) {
      rank_stream() << "test case '" << test_case << "' failed on this rank, and the other ranks did not finish it "
                    << "within " << limit << " s (blocked in a collective this rank left?): MPI_Abort\n";
      rank_buffer().flush_pending();
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

/// Every rank's (failed, skipped) for this test case; counts it failed when any rank failed.
void agree(const doctest::TestCaseData& tc, bool failed) {
  harness_state& s = state();
  const bool skipped = !s.skip_reason.empty();
  if (skipped && s.first_skip.empty()) s.first_skip = s.skip_reason;
  if (s.tests_own_mpi) {  // no agreement possible: this rank's verdict
    s.failed_cases += failed;
    s.skipped_cases += skipped && !failed;
    return;
  }
  const int n = world_size();
  const int mine[2] = {failed ? 1 : 0, skipped ? 1 : 0};
  std::vector<int> all(2 * static_cast<std::size_t>(n));
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Iallgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, s.comm, &req);
  wait_for_everyone(req, failed, tc.m_name);
  std::string failing;
  bool any_skipped = false;
  for (int r = 0; r < n; ++r) {
    if (all[2 * static_cast<std::size_t>(r)]) failing += (failing.empty() ? "" : ", ") + std::to_string(r);
    any_skipped = any_skipped || all[2 * static_cast<std::size_t>(r) + 1];
  }
  if (!failing.empty()) {
    ++s.failed_cases;
    if (leader())
      std::printf("[doctest] test case '%s' failed on rank%s %s of %d\n", tc.m_name,
                  failing.find(',') == std::string::npos ? "" : "s", failing.c_str(), n);
    std::fflush(stdout);
  } else if (any_skipped) {
    ++s.skipped_cases;
  }
}

/// Always active, whichever reporter prints: tracks the running test case and agrees on it.
struct agreement : doctest::IReporter {
  explicit agreement(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& s) override { state().local = s; }
  void test_case_start(const doctest::TestCaseData& tc) override {
    state().current = &tc;
    state().skip_reason.clear();
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& s) override {
    // A crash (a signal doctest caught) ends the process next: no agreement inside a signal
    // handler; mpirun ends the job when the rank dies.
    if (s.failure_flags & doctest::TestCaseFailureReason::Crash) return;
    agree(*state().current, !s.testCaseSuccess);
  }
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
DOCTEST_REGISTER_LISTENER("mpi_agreement", 1, agreement);

// ---- the run's verdict ------------------------------------------------------------------------
/// The summary over all ranks (rank 0 prints it) and the exit status every rank returns.
int verdict() {
  harness_state& s = state();
  const doctest::TestRunStats& l = s.local;
  int asserts[2] = {l.numAsserts, l.numAssertsFailed};
  int n = 1;
  if (!s.tests_own_mpi) {
    MPI_Allreduce(MPI_IN_PLACE, asserts, 2, MPI_INT, MPI_SUM, s.comm);
    n = world_size();
  }
  const int cases = static_cast<int>(l.numTestCasesPassingFilters);
  const int status = s.failed_cases > 0 || cases == 0 ? 1 : s.skipped_cases > 0 ? 77 : 0;
  if (!leader()) return status;
  if (!s.tests_own_mpi) {  // else doctest's own summary of this rank (rank_console)
    std::printf("[doctest] test cases: %d | %d passed | %d failed | %d skipped (agreed over %d rank%s)\n", cases,
                cases - s.failed_cases - s.skipped_cases, s.failed_cases, s.skipped_cases, n, n == 1 ? "" : "s");
    std::printf("[doctest] assertions: %d | %d passed | %d failed | (summed over the ranks)\n", asserts[0],
                asserts[0] - asserts[1], asserts[1]);
  }
  if (cases == 0) std::printf("[doctest] no test case matches the filters\n");
  if (!s.tests_own_mpi) std::printf("[doctest] Status: %s\n", status == 1 ? "FAILURE!" : "SUCCESS!");
  if (status == 77) std::printf("SKIPPED: %s\n", s.first_skip.c_str());
  std::fflush(stdout);
  return status;
}

std::vector<std::string> positional(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') out.emplace_back(argv[i]);
  return out;
}

}  // namespace

int world_rank() {
  harness_state& s = state();
  if (mpi_up()) {
    MPI_Comm_rank(MPI_COMM_WORLD, &s.last_rank);
    return s.last_rank;
  }
  if (s.last_rank >= 0) return s.last_rank;
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (const char* r = std::getenv(v)) return std::atoi(r);
  return 0;
}

int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

int thread_level() { return state().provided; }

const std::vector<std::string>& args() { return state().args; }

std::string arg(std::size_t i, const std::string& fallback) { return i < args().size() ? args()[i] : fallback; }

void skip(const std::string& reason) { state().skip_reason = reason.empty() ? "skipped" : reason; }

tests_own_mpi::tests_own_mpi() { state().tests_own_mpi = true; }

}  // namespace test

int main(int argc, char** argv) {
  auto& s = test::state();
  std::optional<devmesh::mpi::environment> env;
  if (!s.tests_own_mpi) {
    env.emplace(argc, argv);  // may remove MPI's own arguments from argv
    s.provided = env->thread_level();
    // PMPI_: the reliability tests count communicators by wrapping MPI_Comm_dup; this one
    // is the harness's, not the test's.
    PMPI_Comm_dup(MPI_COMM_WORLD, &s.comm);
  }
  s.args = test::positional(argc, argv);
  doctest::Context ctx;
  ctx.setOption("reporters", "mpi");
  ctx.setOption("no-colors", true);  // mpirun hands the ranks a terminal even under ctest
  ctx.applyCommandLine(argc, argv);
  const int rc = ctx.run();
  const int status = ctx.shouldExit() ? rc : test::verdict();  // --help, --list-test-cases, ...
  if (s.comm != MPI_COMM_NULL) PMPI_Comm_free(&s.comm);
  return status;
}
