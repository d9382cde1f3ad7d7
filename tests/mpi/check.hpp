// tests/mpi/check.hpp: a minimal check harness for tests run under mpirun. Each rank counts
// its failures; finish() sums them over the world so that every rank returns the verdict.
#pragma once
#include <cstdio>
#include <exception>
#include <string>

#include <devmesh/devmesh.hpp>

namespace test {
inline int failures = 0;
inline int checks = 0;

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline void fail(const char* file, int line, const std::string& what) {
  ++failures;
  std::fprintf(stderr, "[rank %d] %s:%d: FAILED: %s\n", world_rank(), file, line, what.c_str());
}

/// Sums failures over the world; returns the exit code (0 only if no rank failed).
inline int finish(const char* name) {
  int total = 0, all_checks = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&checks, &all_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (world_rank() == 0)
    std::printf("%s on %d ranks: %d checks, %d failures\n", name, size, all_checks, total);
  return total == 0 ? 0 : 1;
}
}  // namespace test

#define CHECK(cond)                                                   \
  do {                                                                \
    ++test::checks;                                                   \
    if (!(cond)) test::fail(__FILE__, __LINE__, #cond);               \
  } while (0)

#define CHECK_EQ(a, b)                                                                                  \
  do {                                                                                                  \
    ++test::checks;                                                                                     \
    const auto va_ = (a);                                                                               \
    const auto vb_ = (b);                                                                               \
    if (!(va_ == vb_))                                                                                  \
      test::fail(__FILE__, __LINE__, std::string(#a " == " #b ": ") + std::to_string(va_) + " vs " + std::to_string(vb_)); \
  } while (0)

// Checks that expr throws E whose what() contains `needle`; returns the message.
#define CHECK_THROWS_WITH(E, expr, needle)                                                        \
  [&]() -> std::string {                                                                          \
    ++test::checks;                                                                               \
    try {                                                                                         \
      (void)(expr);                                                                               \
    } catch (const E& e_) {                                                                       \
      const std::string m_ = e_.what();                                                           \
      if (m_.find(needle) == std::string::npos)                                                   \
        test::fail(__FILE__, __LINE__, std::string(#expr " threw without '") + (needle) + "': " + m_); \
      return m_;                                                                                  \
    } catch (const std::exception& e_) {                                                          \
      test::fail(__FILE__, __LINE__, std::string(#expr " threw another type: ") + e_.what());     \
      return {};                                                                                  \
    }                                                                                             \
    test::fail(__FILE__, __LINE__, #expr " did not throw");                                       \
    return {};                                                                                    \
  }()
