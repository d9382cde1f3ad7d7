// tests/reliability/watchdog_nccl.cpp: the watchdog and the flight recorder on NCCL, over the
// asynchronous NCCL test double (tests/nccl/double: a collective enqueues work; a peer that
// never enqueues leaves it pending, as a kernel on a GPU). Run by bounded.sh under `timeout`.
//
//   values           every collective with the watchdog on (options.watchdog = 120 s) gives the
//                    right values (2/4/8 ranks), and the flight record's entries reach
//                    `completed` with end times as the watchdog's thread sees their events
//   one_absent       rank 2 skips an all_reduce on "tp" that the rest of its group makes (4/8
//                    ranks): each of them, blocked in cudaStreamSynchronize, is released by the
//                    watchdog's abort within the bound plus a margin; its next call throws
//                    comm_error naming the call, the dim, call #1, the bound, how long it
//                    waited and world rank 2 (the roll call); every later call on the mesh and
//                    on a mesh derived from it throws; abort() afterwards and destruction are safe
//   barrier_absent   rank 1 skips a barrier on "tp": the others' barrier (which waits for its
//                    work, watched) throws comm_error naming it and rank 1 (2/4 ranks)
//   skipped_flatten  the scenario on 8 ranks: rank 1 skips an eager flatten and calls
//                    all_reduce on "tp"; the seven others time out in flatten, rank 1's watchdog
//                    ends its all_reduce naming ranks 0,2-3; the dump says so
//   abort_pending    abort() while a watched call is pending: the call's entry is `failed`, the
//                    wait on the stream returns, the watchdog never fires afterwards
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <devmesh/devmesh.hpp>
#include <devmesh/nccl.hpp>
#include <devmesh/nccl/mpi_bootstrap.hpp>
#include <devmesh/runtime/flight_trace.hpp>

#include "../mpi/mpi_doctest.hpp"
#include "../nccl/double/fake_control.h"

namespace reliability_watchdog_nccl_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;
using namespace std::chrono_literals;
using C = dm::nccl::communicator;
using options = dm::device_mesh_options<C>;
using dp_tp = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;

namespace {
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct ranks {
  const dm::mpi::communicator mpi = dm::mpi::world();
  const int me = mpi.rank(), n = mpi.size();
  C world = dm::nccl::world(mpi);
  cudaStream_t s = nullptr;
  ranks() { REQUIRE(cudaStreamCreate(&s) == cudaSuccess); }
  ~ranks() { cudaStreamDestroy(s); }
  void sync() const { REQUIRE(cudaStreamSynchronize(s) == cudaSuccess); }
};

/// Polls until every entry of the mesh's record left `enqueued` (the watchdog's thread saw
/// its event), at most 60 s.
template <class M>
dm::flight_record settled(const M& mesh) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    dm::flight_record r = mesh.flight_record();
    bool open = false;
    for (const auto& e : r.entries) open = open || e.state == dm::call_state::enqueued;
    if (!open || since(t0) > 60) return r;
    std::this_thread::sleep_for(2ms);
  }
}
}  // namespace

TEST_CASE_FIXTURE(ranks, "values") {
  REQUIRE(n % 2 == 0);
  options o;
  o.watchdog = 120s;
  const auto mesh = dm::init_device_mesh(world, dp_tp(n / 2, 2), o);
  const int t = mesh.local_rank<"tp">(), d = mesh.local_rank<"dp">();
  std::vector<float> f{1.f + static_cast<float>(me), 2.f};
  mesh.all_reduce<"tp">(f, dm::op::sum, s);
  std::vector<float> mx(2), av(2);
  mesh.all_reduce<"dp">(f, mx, dm::op::max, s);
  mesh.all_reduce<"tp">(f, av, dm::op::avg, s);
  std::vector<int> root(3, me), gathered(2 * 2), scattered(1), a2a{me, me}, got(2), shifted(1, me), prev(1, -1);
  const std::vector<int> mine{me, me};
  mesh.reduce<"tp">(root, dm::op::sum, 0, s);
  std::vector<int> b{t == 1 ? 42 : 0};
  mesh.broadcast<"tp">(b, 1, s);
  mesh.all_gather<"tp">(mine, gathered, s);
  std::vector<int> rs{1, 2};
  mesh.reduce_scatter<"tp">(rs, scattered, dm::op::sum, s);
  mesh.all_to_all<"tp">(a2a, got, s);
  mesh.barrier<"dp">(s);
  mesh.shift<"tp">(shifted, shifted, 1, true, s);  // aliased: a device copy of send, left to the watchdog
  const std::vector<int> next{me};  // alive until the stream is synchronized, as on a GPU
  mesh.send_next<"tp">(next, false, s);
  mesh.recv_prev<"tp">(prev, false, s);
  sync();
  const int partner = t == 0 ? me + 1 : me - 1;  // tp groups are (2k, 2k+1)
  CHECK(f[0] == static_cast<float>(2 + me + partner));
  CHECK(f[1] == 4.f);
  CHECK(av[0] == f[0]);  // the average of the sums, equal on both (stream order: after the sum in place)
  if (t == 0) CHECK(root[0] == me + partner);
  CHECK(b[0] == 42);
  CHECK(gathered == std::vector<int>{std::min(me, partner), std::min(me, partner), std::max(me, partner), std::max(me, partner)});
  CHECK(scattered[0] == 2 * (t + 1));
  CHECK(got == std::vector<int>{std::min(me, partner), std::max(me, partner)});
  CHECK(shifted[0] == partner);
  if (t == 1) CHECK(prev[0] == partner);
  (void)d;

  // Every entry reaches `completed`, its end time after its start, as the watchdog polls it.
  const dm::flight_record r = settled(mesh);
  REQUIRE(r.entries.size() >= 12);
  for (const auto& e : r.entries) {
    if (e.on->name == "mesh") continue;  // devmesh's own steps
    CAPTURE(std::string(e.what));
    CHECK(e.state == dm::call_state::completed);
    CHECK(e.end_ns >= e.start_ns);
  }
  CHECK(devmesh_fake_cuda_pending(s) == 0);
}

TEST_CASE_FIXTURE(ranks, "one_absent") {
  REQUIRE(n % 4 == 0);
  const char* dir = std::getenv("DEVMESH_FLIGHT_RECORD");
  if (dir && me == 0) std::filesystem::create_directories(dir);
  options o;
  o.watchdog = 3s;
  const auto mesh = dm::init_device_mesh(world, dp_tp(n / 4, 4), o);
  const auto tp = mesh.slice<"tp">();
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<int> v(8, 1);
  const auto t0 = std::chrono::steady_clock::now();
  std::string message;
  if (me != 2) {
    mesh.all_reduce<"tp">(v, dm::op::sum, s);  // enqueued: returns at once
    sync();  // ranks 0, 1, 3: until the watchdog aborts (a kernel waiting for rank 2)
  }
  const double waited = since(t0);
  if (me == 0 || me == 1 || me == 3) {
    CHECK(waited > 2.9);
    CHECK(waited < 3 + 60);  // the bound, the roll call's grace, a loaded machine
    try {
      mesh.all_reduce<"dp">(v, dm::op::sum, s);
    } catch (const dm::comm_error& e) {
      message = e.what();
    }
    CAPTURE(message);
    CHECK(has(message, "devmesh: all_reduce on dim 'dp' of mesh("));
    CHECK(has(message, "this mesh was aborted by its watchdog: all_reduce on dim 'tp' of mesh("));
    CHECK(has(message, "call #1 on this dim, did not complete within 3 s (the watchdog: options.watchdog, "
                       "DEVMESH_WATCHDOG; it waited "));
    CHECK(has(message, "; world rank 2 of its group (world ranks 0-3) never arrived: it skipped the call"));
    if (dir) CHECK(has(message, "(flight record: "));
    // A derived mesh, and the communicators themselves, say why.
    CHECK_THROWS_WITH_AS(tp.barrier(s), doctest::Contains("aborted by its watchdog"), dm::comm_error);
    CHECK_THROWS_WITH_AS(mesh.comm<"tp">().all_reduce(v.data(), v.data(), 1, dm::op::sum, s),
                         doctest::Contains("the watchdog aborted the mesh: all_reduce on dim 'tp'"), dm::comm_error);
    const auto rec = mesh.flight_record().entries;
    REQUIRE(!rec.empty());
    CHECK(rec.back().state == dm::call_state::timed_out);
    const int aborted = devmesh_fake_nccl_aborted();
    mesh.abort();  // again: nothing is aborted twice
    CHECK(devmesh_fake_nccl_aborted() == aborted);
  } else if (me >= 4) {
    sync();
    CHECK(v[0] == 4);  // the other tp groups completed theirs
    const auto r = settled(mesh);
    CHECK(r.entries.back().state == dm::call_state::completed);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE_FIXTURE(ranks, "barrier_absent") {
  options o;
  o.watchdog = 2s;
  const auto mesh = dm::init_device_mesh(world, dm::mesh<dm::dim<"tp">>(n), o);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  std::string message;
  try {
    if (me != 1) mesh.barrier<"tp">(s);  // waits for its work, watched
  } catch (const dm::comm_error& e) {
    message = e.what();
  }
  CAPTURE(message);
  if (me != 1) {
    CHECK(since(t0) > 1.9);
    CHECK(since(t0) < 2 + 60);
    CHECK(has(message, "devmesh: barrier on dim 'tp' of mesh("));
    CHECK(has(message, "aborted by its watchdog: barrier on dim 'tp'"));
    CHECK(has(message, "world rank 1 of its group"));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE_FIXTURE(ranks, "skipped_flatten") {
  const char* dir = std::getenv("DEVMESH_FLIGHT_RECORD");
  REQUIRE_MESSAGE(dir, "watchdog_nccl: run with DEVMESH_FLIGHT_RECORD=<dir>");
  REQUIRE(n == 8);
  if (me == 0) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  options o;
  o.timeout = 4s;
  o.watchdog = 4s;
  const auto mesh = dm::init_device_mesh(world, dp_tp(2, 4), o);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  std::string message;
  bool watchdog = false;
  try {
    if (me == 1) {
      std::vector<float> v(4, 1.0f);
      mesh.all_reduce<"tp">(v, dm::op::sum, s);
      sync();  // released by the watchdog's abort
      mesh.all_reduce<"tp">(v, dm::op::sum, s);
    } else {
      (void)mesh.flatten<"dp_tp">();
    }
    FAIL_CHECK("no rank may return");
  } catch (const dm::comm_error& e) {
    message = e.what(), watchdog = true;
  } catch (const dm::timeout_error& e) {
    message = e.what();
  }
  CAPTURE(message);
  CHECK(since(t0) < 4 + 60);
  CHECK(since(t0) > 3.9);
  if (me == 1) {
    CHECK(watchdog);
    CHECK(has(message, "all_reduce on dim 'tp' of mesh((dp=2, tp=4), stride=(4, 1)), call #1 on this dim, did not "
                       "complete within 4 s"));
    CHECK(has(message, "; world ranks 0,2-3 of its group (world ranks 0-3) never arrived"));
    CHECK(has(message, "(flight record: "));
  } else {
    CHECK(!watchdog);
    CHECK(has(message, "flatten"));
  }
  MPI_Barrier(MPI_COMM_WORLD);  // every dump is written
  if (me != 0) return;
  const std::vector<dm::flight_dump> dumps = dm::read_flight_dumps(dir);
  REQUIRE(dumps.size() == 8);
  std::string report;
  for (const auto& v : dm::analyze(dumps)) report += to_string(v) + "\n";
  CAPTURE(report);
  CHECK(has(report, "call #1, flatten: made by ranks 0,2-7, never by rank 1"));
  CHECK(has(report, "on dim 'tp' (world ranks 0-3): call #1, all_reduce (float x 4): made by rank 1, never by ranks "
                    "0,2-3"));
}

TEST_CASE_FIXTURE(ranks, "abort_pending") {
  options o;
  o.watchdog = 3s;
  {
    const auto mesh = dm::init_device_mesh(world, dm::mesh<dm::dim<"x">>(n), o);
    MPI_Barrier(MPI_COMM_WORLD);
    std::vector<int> v(2, 1);
    if (me == 0) {
      mesh.all_reduce(v, dm::op::sum, s);  // the others never make it
      std::thread late([&] {
        std::this_thread::sleep_for(500ms);
        mesh.abort();  // from another thread, while this one waits on the stream
      });
      const auto t0 = std::chrono::steady_clock::now();
      sync();
      late.join();
      CHECK(since(t0) > 0.4);
      CHECK(since(t0) < 2.9);  // abort() ended it, not the watchdog
      const auto rec = mesh.flight_record().entries;
      REQUIRE(!rec.empty());
      CHECK(rec.back().state == dm::call_state::failed);
      std::this_thread::sleep_for(4s);  // past the bound: the watchdog does not fire on it
      CHECK_THROWS_WITH_AS(mesh.all_reduce(v, dm::op::sum, s), doctest::Contains("it was aborted (abort())"),
                           dm::comm_error);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }  // destroyed with the watchdog's thread running: joined, nothing leaked (the double checks at exit)
  CHECK(devmesh_fake_cuda_live_events() == 0);
}
}  // namespace reliability_watchdog_nccl_test
