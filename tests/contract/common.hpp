// tests/contract/common.hpp: helpers shared by the runtime-contract tests of issue 9 (doctest
// programs on the MPI-aware main of tests/mpi/mpi_doctest.hpp: one scenario per test case,
// selected by --test-case=<scenario>).
#pragma once
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <regex>
#include <string>
#include <vector>

#include <devmesh/devmesh.hpp>

#include "../mpi/mpi_doctest.hpp"

namespace dm = devmesh;

namespace contract {

inline bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

/// `word` as a whole word (not inside a longer identifier): "op" matches "op: sum vs max"
/// and "op=max", not "operation" or "ops".
inline bool has_word(const std::string& s, const std::string& word) {
  return std::regex_search(s, std::regex("(^|[^A-Za-z0-9_])" + word + "($|[^A-Za-z0-9_])"));
}

inline std::string comm_name(MPI_Comm c) {
  char buf[MPI_MAX_OBJECT_NAME]{};
  int len = 0;
  if (MPI_Comm_get_name(c, buf, &len) != MPI_SUCCESS) return "<MPI_Comm_get_name failed>";
  return std::string(buf, static_cast<std::size_t>(len));
}

/// MPI_Comm_compare as a word, for messages.
inline int compare(MPI_Comm a, MPI_Comm b) {
  int r = -1;
  if (MPI_Comm_compare(a, b, &r) != MPI_SUCCESS) return -1;
  return r;
}
inline const char* compare_name(int r) {
  if (r == MPI_IDENT) return "MPI_IDENT";
  if (r == MPI_CONGRUENT) return "MPI_CONGRUENT";
  if (r == MPI_SIMILAR) return "MPI_SIMILAR";
  if (r == MPI_UNEQUAL) return "MPI_UNEQUAL";
  return "error";
}

/// The outcome of a call expected to throw.
struct thrown {
  bool any = false;         // something was thrown
  bool mesh_error = false;  // it was a devmesh::mesh_error
  std::string what;
  std::string type;  // "mesh_error", "comm_error", "std::exception"
};

template <class F>
thrown catch_all(F&& f) {
  thrown t;
  try {
    f();
  } catch (const dm::mesh_error& e) {
    t = {true, true, e.what(), "mesh_error"};
  } catch (const dm::comm_error& e) {
    t = {true, false, e.what(), "comm_error"};
  } catch (const std::exception& e) {
    t = {true, false, e.what(), "std::exception"};
  }
  return t;
}

/// A failed check at file:line (with the message) unless t is a mesh_error whose what()
/// contains every needle.
inline void expect_mesh_error(const thrown& t, std::initializer_list<std::string> needles, const char* file, int line,
                              const std::string& what) {
  if (!test::check_at(t.any, file, line, "expect_mesh_error", what + ": did not throw")) return;
  if (!test::check_at(t.mesh_error, file, line, "expect_mesh_error",
                      what + ": threw " + t.type + ", not mesh_error: " + t.what))
    return;
  for (const auto& n : needles)
    test::check_at(contains(t.what, n), file, line, "expect_mesh_error", what + ": no '" + n + "' in: " + t.what);
}
#define EXPECT_MESH_ERROR(t, what, ...) contract::expect_mesh_error((t), {__VA_ARGS__}, __FILE__, __LINE__, (what))

/// The rank-0 line that shows what a scenario's error looked like (ctest -V).
inline void show(const std::string& label, const std::string& message) {
  std::printf("[rank %d] %s: %s\n", test::world_rank(), label.c_str(), message.empty() ? "(no exception)" : message.c_str());
  std::fflush(stdout);
}

inline int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

/// Fails the test case unless the world has n ranks (each ctest name fixes its rank count).
inline void require_ranks(int n) {
  REQUIRE_MESSAGE(world_size() == n, "run on " << n << " ranks (got " << world_size() << ")");
}

}  // namespace contract
