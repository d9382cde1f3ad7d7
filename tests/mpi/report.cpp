// dm::report_once (runtime/report.hpp) on 1-8 ranks: a failure printed once, by the lowest
// failing rank, naming the ranks it concerns; every rank returns 1; without failures the
// body's own exit code and no output. Each rank's output goes to its own temporary file.
#include <cstdio>
#include <stdexcept>
#include <string>

#include <devmesh/devmesh.hpp>

#include "mpi_doctest.hpp"

namespace mpi_report_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;
using C = dm::mpi::communicator;

namespace {

/// report_once(world, body) with its output captured: {exit code, what this rank wrote}.
template <class Body>
std::pair<int, std::string> reported(const C& world, Body body) {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  const int code = dm::report_once(world, body, f);
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  std::fclose(f);
  return {code, text};
}

std::string all_ranks(int n) { return n == 1 ? "rank 0" : "ranks 0-" + std::to_string(n - 1); }

}  // namespace

TEST_CASE("the same error on every rank: one line, by rank 0, naming every rank") {
  auto world = dm::mpi::world();
  const auto [code, text] = reported(world, [] { throw dm::mesh_error("devmesh: boom"); });
  CHECK_EQ(code, 1);
  if (world.rank() == 0) CHECK_EQ(text, "error on " + all_ranks(world.size()) + ": devmesh: boom\n");
  else CHECK_EQ(text, "");
}

TEST_CASE("different errors on some ranks: one line per message, by the first failing rank") {
  auto world = dm::mpi::world();
  const int me = world.rank(), n = world.size();
  const auto [code, text] = reported(world, [me]() -> int {
    if (me == 1) throw std::runtime_error("first");
    if (me % 2 == 1) throw dm::comm_error("second");
    return 0;
  });
  CHECK_EQ(code, n >= 2 ? 1 : 0);  // the ranks that returned 0 return 1 too: a rank failed
  std::string expected;
  if (me == 1) {
    expected = "error on rank 1: first\n";
    if (n >= 4) expected += "error on " + std::string(n >= 6 ? "ranks 3,5" : "rank 3") + (n >= 8 ? ",7" : "") + ": second\n";
  }
  CHECK_EQ(text, expected);
}

TEST_CASE("no failure: the body's exit code, nothing printed") {
  auto world = dm::mpi::world();
  const auto [code, text] = reported(world, [&] { return world.rank() == 0 ? 3 : 0; });
  CHECK_EQ(code, world.rank() == 0 ? 3 : 0);
  CHECK_EQ(text, "");
  const auto [void_code, void_text] = reported(world, [] {});
  CHECK_EQ(void_code, 0);
  CHECK_EQ(void_text, "");
}

TEST_CASE("a message longer than the gathered slot says it was cut; a non-std exception is named") {
  auto world = dm::mpi::world();
  const std::string longer(2000, 'x');
  const auto [code, text] = reported(world, [&] { throw dm::mesh_error(longer); });
  CHECK_EQ(code, 1);
  if (world.rank() == 0) CHECK(text.find("[... cut to 511 bytes]") != std::string::npos);
  const auto [odd_code, odd_text] = reported(world, [] { throw 42; });
  CHECK_EQ(odd_code, 1);
  if (world.rank() == 0) CHECK(odd_text.find("an exception that is not a std::exception") != std::string::npos);
}
}  // namespace mpi_report_test
