// tests/reliability/threads.cpp: concurrent collectives on different dims' communicators,
// one thread per dim, under MPI_THREAD_MULTIPLE (4 ranks, mesh (dp=2, tp=2) plus the
// transposed alias tp_dp): each thread runs its own all_reduce / all_gather / broadcast
// sequence on its dim and checks every result, while the main thread reads the shared
// layout and copies handles. Skipped (exit 77, ctest: skipped, with a visible message) when
// the MPI library does not provide MPI_THREAD_MULTIPLE.
#include <atomic>
#include <cstdlib>
#include <cstdio>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <devmesh/devmesh.hpp>

#include "../mpi/mpi_doctest.hpp"
#include "comm_counter.hpp"

namespace reliability_threads_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;
using namespace dm::literals;
using dp_tp = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 2>>;

int rounds = 1000;  // argv[1] overrides (fewer under the sanitizers)

/// `rounds` collectives on dim N, each checked; returns the number of wrong results.
template <dm::fixed_string N, class M>
int hammer(const M& m) {
  const auto g = dm::group<N>(m.layout(), m.rank());
  const int me = m.rank();
  int wrong = 0;
  for (int i = 0; i < rounds; ++i) {
    // all_reduce: sum of (world rank + i) over the group.
    std::vector<long> v{me + i};
    dm::all_reduce<N>(m, std::span(v), dm::op::sum);
    long expected = 0;
    for (int r : g) expected += r + i;
    wrong += v[0] != expected;
    // all_gather: every member's world rank, in group order.
    const std::vector<int> mine{me * 1000 + i};
    std::vector<int> all(static_cast<std::size_t>(g.size()));
    dm::all_gather<N>(m, std::span<const int>(mine), std::span(all));
    for (int k = 0; k < g.size(); ++k) wrong += all[static_cast<std::size_t>(k)] != g[k] * 1000 + i;
    // broadcast from local rank i % size.
    const int root = i % g.size();
    std::vector<int> b{g.index_of(me) == root ? i * 7 + root : -1};
    dm::broadcast<N>(m, std::span(b), root);
    wrong += b[0] != i * 7 + root;
  }
  return wrong;
}

TEST_CASE("concurrent collectives on dp, tp and tp_dp, one thread each") {
  if (test::thread_level() < MPI_THREAD_MULTIPLE) {
    test::skip("this MPI library provides thread level " + std::to_string(test::thread_level()) +
               ", not MPI_THREAD_MULTIPLE (" + std::to_string(MPI_THREAD_MULTIPLE) + ")");
    return;
  }
  rounds = std::atoi(test::arg(0, std::to_string(rounds)).c_str());
  const auto world = dm::mpi::world();
  {
    // Creation is collective and not thread-safe: done here, before the threads start.
    auto m = dm::init_device_mesh<dp_tp>(world);
    auto f = m.flatten<"tp_dp", "tp", "dp">();
    const std::size_t live = comm_counter::live();

    std::atomic<int> wrong_dp{0}, wrong_tp{0}, wrong_tp_dp{0};
    std::thread a([&] { wrong_dp = hammer<"dp">(m); });
    std::thread b([&] { wrong_tp = hammer<"tp">(m); });
    std::thread c([&] { wrong_tp_dp = hammer<"tp_dp">(f); });
    // Meanwhile: layout queries and handle copies (shared_ptr counts) on this thread.
    long reads = 0;
    for (int i = 0; i < 20000; ++i) {
      const auto copy = f;
      reads += dm::local_rank<"tp">(copy.layout(), copy.rank()) + copy.size<"tp_dp">() +
               copy.layout().coordinate(copy.rank())[0];
    }
    a.join();
    b.join();
    c.join();
    CHECK_EQ(wrong_dp.load(), 0);
    CHECK_EQ(wrong_tp.load(), 0);
    CHECK_EQ(wrong_tp_dp.load(), 0);
    CHECK_EQ(comm_counter::live(), live);  // nothing created or freed by the threads
    CHECK(reads > 0);
    if (test::world_rank() == 0)
      std::printf("threads: %d rounds of all_reduce + all_gather + broadcast on dp, tp and tp_dp concurrently\n",
                  rounds);
  }
  CHECK_EQ(comm_counter::live(), std::size_t{0});
}
}  // namespace reliability_threads_test
