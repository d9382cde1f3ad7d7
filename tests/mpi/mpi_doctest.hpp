// tests/mpi/mpi_doctest.hpp: doctest for the programs that run under mpirun (tests/mpi,
// tests/contract, tests/reliability). Every rank runs the same test cases with doctest's own
// assertions; the shared main (mpi_doctest_main.cpp, the devmesh_mpi_doctest library):
//   - initializes MPI with dm::mpi::environment (MPI_THREAD_MULTIPLE requested, MPI errors
//     returned as exceptions), unless the program declares TEST_CASES_OWN_MPI();
//   - after each test case, agrees on its verdict over MPI_COMM_WORLD: it fails when it
//     failed on any rank, and rank 0 names the ranks it failed on;
//   - prints each failure on the rank where it happened, every line prefixed "[rank r]";
//     ranks other than 0 print nothing else; rank 0 prints the summary of all ranks;
//   - exits 1 on every rank when any test case failed anywhere (also when no test case
//     matched the filters), 77 when test cases were skipped (test::skip) and none failed.
// A rank that throws out of a test case fails it, and waits for the others at the agreement
// at most DEVMESH_TEST_AGREEMENT_TIMEOUT seconds (default 30): if they do not come (blocked
// in a collective the rank left), it aborts the job (MPI_Abort) instead of letting it hang.
//
// Scenario programs select one test case per ctest entry: `prog --test-case=<name> [args]`;
// arguments that are not doctest options are the program's own (test::args()).
#pragma once
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstddef>
#include <exception>
#include <string>
#include <vector>

namespace test {

/// This process's rank in MPI_COMM_WORLD: MPI's while MPI is up; before MPI_Init and after
/// MPI_Finalize the last one seen, or the launcher's (OMPI_COMM_WORLD_RANK, PMI_RANK, ...).
int world_rank();
/// The number of ranks in MPI_COMM_WORLD (MPI must be up).
int world_size();
/// The thread support level MPI provided to the main's environment.
int thread_level();
/// The program's command-line arguments that are not doctest options, in order.
const std::vector<std::string>& args();
/// args()[i], or `fallback` when there are fewer.
std::string arg(std::size_t i, const std::string& fallback);
/// Skips the running test case on this rank (call it alike on every rank, then return):
/// rank 0 prints "SKIPPED: <reason>", and the program exits 77 (ctest's SKIP_RETURN_CODE)
/// unless a test case failed.
void skip(const std::string& reason);

/// Declared by TEST_CASES_OWN_MPI(): the program's test cases call MPI_Init and MPI_Finalize
/// themselves (one test case per process), so the main does neither and cannot agree over
/// MPI: each rank's exit status carries its own results (mpirun fails the job if any fails).
struct tests_own_mpi {
  tests_own_mpi();
};

/// A CHECK reported at the caller's file and line (for helpers that check on behalf of
/// their caller): counted as an assertion; on failure, `message` is printed as its values.
inline bool check_at(bool ok, const char* file, int line, const char* what, const std::string& message) {
  doctest::detail::ResultBuilder rb(doctest::assertType::DT_CHECK, file, line, what);
  rb.m_failed = !ok;
  if (!ok) rb.m_decomp = message.c_str();
  if (rb.log()) DOCTEST_BREAK_INTO_DEBUGGER();
  rb.react();
  return ok;
}

/// doctest::Contains from a std::string (CHECK_THROWS_WITH_AS(expr, test::containing(s), E)).
inline doctest::Contains containing(const std::string& needle) { return doctest::Contains(needle.c_str()); }

/// Runs f once: the what() of the E it throws, checked to contain `needle` (a failure at
/// file:line when f throws nothing, another type, or a message without it).
template <class E, class F>
std::string throws_what(F&& f, const std::string& needle, const char* file, int line, const char* expr) {
  std::string what, problem;
  try {
    f();
    problem = "did not throw";
  } catch (const E& e) {
    what = e.what();
    if (what.find(needle) == std::string::npos) problem = "threw without '" + needle + "': " + what;
  } catch (const std::exception& e) {
    problem = std::string("threw another type: ") + e.what();
  }
  check_at(problem.empty(), file, line, expr, std::string(expr) + " " + problem);
  return what;
}

}  // namespace test

#define TEST_CASES_OWN_MPI() static const ::test::tests_own_mpi test_cases_own_mpi_ {}

/// CHECK_THROWS_WITH_AS(expr, doctest::Contains(needle), E) that runs expr once and gives
/// the message for further checks: `const std::string m = CHECK_THROWS_WHAT(E, expr, needle);`
#define CHECK_THROWS_WHAT(E, expr, needle) \
  ::test::throws_what<E>([&] { (void)(expr); }, (needle), __FILE__, __LINE__, "CHECK_THROWS_WHAT(" #E ", " #expr ")")
