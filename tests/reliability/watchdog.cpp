// tests/reliability/watchdog.cpp: the watchdog and the flight recorder on MPI, 8 ranks
// (docs/reliability.md). Run by bounded.sh under `timeout`: a hang fails the test.
//
//   record           what a rank's flight record holds: calls, numbers per dim, types,
//                    counts, states, the ring going round, off with 0 entries; the dump read
//                    back; DEVMESH_WATCHDOG malformed
//   skipped_flatten  the hang the watchdog exists for: rank 1 skips an eager flatten and
//                    calls all_reduce on "tp"; the seven others time out in flatten, rank 1's
//                    watchdog ends its all_reduce (comm_error naming the call, its number and
//                    group), the mesh is unusable afterwards, and the dumps written to
//                    DEVMESH_FLIGHT_RECORD name rank 1 and the skipped flatten
//   one_absent       rank 2 skips an all_reduce on "tp" that ranks 0, 1 and 3 make: their
//                    watchdogs end it, and each names rank 2 (the roll call), the ranks of
//                    the other tp group complete theirs
//   late_rank        any number of ranks: rank 1 comes to an all_reduce two seconds late, when
//                    the others' watchdogs (300 ms) have ended theirs. The others' buffers,
//                    kept and refilled after their error, are never written by its call: a
//                    watched call's result lands in memory devmesh keeps (issue 41), so a
//                    late rank cannot write into buffers its peers have freed or reused. Its
//                    call completes, and it fails too, naming the ranks that gave up on it
//                    (their notes), its buffer as it was: every rank of the group gets an error
//   half_late        rank 1 comes to an all_reduce half the watchdog's bound (4 s) late: every
//                    rank completes it with the right sum, and the mesh stays usable
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <devmesh/devmesh.hpp>
#include <devmesh/redistribute.hpp>
#include <devmesh/runtime/flight_trace.hpp>

#include "../mpi/mpi_doctest.hpp"

namespace reliability_watchdog_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;
using namespace std::chrono_literals;
using dp_tp = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
using options = dm::device_mesh_options<dm::mpi::communicator>;

namespace {
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct eight_ranks {
  const dm::mpi::communicator world = dm::mpi::world();
  const int me = world.rank();
  eight_ranks() { REQUIRE_MESSAGE(world.size() == 8, "watchdog: run on 8 ranks"); }
};
}  // namespace

TEST_CASE_FIXTURE(eight_ranks, "record") {
  options o;
  o.flight_record_entries = 8;
  const auto mesh = dm::init_device_mesh<dp_tp>(world, o);
  float x[3] = {1, 2, 3};
  mesh.all_reduce<"tp">(x, dm::op::sum);
  mesh.broadcast<"dp">(x, 0);
  dm::barrier<"tp">(mesh);
  const auto flat = mesh.flatten<"all", "dp", "tp">();
  double y = 1;
  flat.all_reduce<"all">(std::span(&y, 1), dm::op::sum);
  CHECK(y == 8);

  const dm::flight_record r = mesh.flight_record();
  CHECK(r.rank == me);
  CHECK(r.mesh == "(dp: 2, tp: 4)");
  REQUIRE(r.entries.size() == 5);
  struct want { const char* what; const char* dim; std::uint64_t seq; const char* type; std::uint64_t count; };
  const want w[] = {{"all_reduce", "tp", 1, "float", 3}, {"broadcast", "dp", 1, "float", 3},
                    {"barrier", "tp", 2, "", 0},     {"flatten", "mesh", 1, "", 0},
                    {"all_reduce", "all", 1, "double", 1}};
  for (std::size_t i = 0; i < 5; ++i) {
    const auto& e = r.entries[i];
    CAPTURE(i);
    CHECK(e.id == i + 1);
    CHECK(e.what == w[i].what);
    CHECK(e.on->name == w[i].dim);
    CHECK(e.seq == w[i].seq);
    CHECK(e.type == w[i].type);
    CHECK(e.count == w[i].count);
    CHECK(e.state == dm::call_state::completed);
    CHECK(e.end_ns >= e.start_ns);
  }
  CHECK(has(to_string(r), "entry 1 tp 1 all_reduce completed 3 "));

  // The ring keeps the last 8.
  for (int i = 0; i < 10; ++i) dm::barrier<"dp">(mesh);
  const auto wrapped = mesh.flight_record();
  CHECK(wrapped.recorded == 15);
  REQUIRE(wrapped.entries.size() == 8);
  CHECK(wrapped.entries.front().id == 8);
  CHECK(wrapped.entries.back().seq == 11);  // the 11th call on dp

  // Written and read back.
  const auto dir = std::filesystem::temp_directory_path() / ("devmesh-fr-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const dm::flight_dump d = dm::read_flight_dump(mesh.dump_flight_record(dir.string()));
  CHECK(d.rank == me);
  CHECK(d.entries.size() == 8);
  CHECK(d.entries.back().what == "barrier");
  CHECK(d.entries.back().channel == "dp");
  std::filesystem::remove_all(dir);
  const auto tp_group = std::find_if(d.channels.begin(), d.channels.end(), [](auto& c) { return c.name == "tp"; });
  REQUIRE(tp_group != d.channels.end());
  CHECK(tp_group->world_ranks == mesh.slice<"tp">().ranks());

  // redistribute's steps are recorded (and watched) as the typed collectives are: P(sum) on dp
  // -> S(1) on tp is an all_reduce on dp (then a local slice).
  {
    using grads = dm::sharding<dp_tp, dm::on<"dp", dm::partial<dm::reduction::sum>>>;
    using cols = dm::sharding<dp_tp, dm::on<"tp", dm::shard<1>>>;
    const dm::extents<4, 8> ext;
    std::vector<double> g(32, 1.0), c(static_cast<std::size_t>(cols{}.local_size(ext, mesh.position())));
    dm::redistribute(mesh, grads{}, cols{}, ext, g, c);
    CHECK(c.front() == 2.0);
    const auto after = mesh.flight_record().entries;
    REQUIRE(!after.empty());
    CHECK(after.back().type == "double");
    CHECK(after.back().state == dm::call_state::completed);
    CHECK(after.back().what == "all_reduce");
    CHECK(after.back().on->name == "dp");
  }

  // Off: nothing recorded.
  o.flight_record_entries = 0;
  const auto quiet = dm::init_device_mesh<dp_tp>(world, o);
  quiet.all_reduce<"tp">(x, dm::op::sum);
  CHECK(quiet.flight_record().entries.empty());

  // A malformed DEVMESH_WATCHDOG fails every rank before any communication.
  ::setenv("DEVMESH_WATCHDOG", "soon", 1);
  CHECK_THROWS_WITH_AS((void)dm::init_device_mesh<dp_tp>(world),
                       doctest::Contains("DEVMESH_WATCHDOG='soon' is not a number of seconds"), dm::mesh_error);
  ::unsetenv("DEVMESH_WATCHDOG");
}

TEST_CASE_FIXTURE(eight_ranks, "skipped_flatten") {
  const char* dir = std::getenv("DEVMESH_FLIGHT_RECORD");
  REQUIRE_MESSAGE(dir, "watchdog: run with DEVMESH_FLIGHT_RECORD=<dir>");
  if (me == 0) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  options o;
  o.timeout = 4s;
  o.watchdog = 4s;
  const auto mesh = dm::init_device_mesh<dp_tp>(world, o);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  bool watchdog = false;
  try {
    if (me == 1) {
      std::vector<float> v(4, 1.0f);
      mesh.all_reduce<"tp">(v, dm::op::sum);
    } else {
      (void)mesh.flatten<"dp_tp">();
    }
    FAIL_CHECK("no rank may return");
  } catch (const dm::comm_error& e) {
    message = e.what(), watchdog = true;
  } catch (const dm::timeout_error& e) {
    message = e.what();
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CAPTURE(message);
  CHECK(waited < 4 + 30);  // the bound plus a margin for a loaded machine
  CHECK(waited > 3.9);
  if (me == 1) {
    CHECK(watchdog);
    CHECK(has(message, "devmesh: all_reduce on dim 'tp' of mesh((dp=2, tp=4), stride=(4, 1)), call #1 on this dim, did not "
                       "complete within 4 s (the watchdog"));
    CHECK(has(message, "; world ranks 0,2-3 of its group (world ranks 0-3) never arrived: they skipped the call, "
                       "wait elsewhere or died (no answer to the roll call); this mesh's communicators are aborted"));
    CHECK(has(message, "(flight record: "));
    // The mesh is unusable afterwards, and says why.
    std::vector<float> v(2, 1.0f);
    CHECK_THROWS_WITH_AS(mesh.all_reduce<"dp">(v, dm::op::sum), doctest::Contains("the watchdog aborted the mesh"),
                         dm::comm_error);
  } else {
    CHECK(!watchdog);
    CHECK(has(message, "flatten"));
    CHECK(has(message, "(flight record: "));
  }
  MPI_Barrier(MPI_COMM_WORLD);  // every dump is written
  if (me != 0) return;
  const std::vector<dm::flight_dump> dumps = dm::read_flight_dumps(dir);
  REQUIRE(dumps.size() == 8);
  std::string report;
  for (const auto& v : dm::analyze(dumps)) report += to_string(v) + "\n";
  CAPTURE(report);
  std::printf("%s", report.c_str());
  CHECK(has(report, "on the mesh's own steps (world ranks 0-7): call #1, flatten: made by ranks 0,2-7, never by rank 1; not "
                    "completed on ranks 0,2-7"));
  CHECK(has(report, "on dim 'tp' (world ranks 0-3): call #1, all_reduce (float x 4): made by rank 1, never by ranks "
                    "0,2-3; not completed on rank 1"));
}

TEST_CASE_FIXTURE(eight_ranks, "one_absent") {
  options o;
  o.watchdog = 3s;
  o.flight_record_entries = 0;
  const auto mesh = dm::init_device_mesh<dp_tp>(world, o);
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<int> v(8, 1);
  std::string message;
  try {
    if (me != 2) mesh.all_reduce<"tp">(v, dm::op::sum);
  } catch (const dm::comm_error& e) {
    message = e.what();
  }
  CAPTURE(message);
  if (me == 0 || me == 1 || me == 3) {
    CHECK(has(message, "all_reduce on dim 'tp' of mesh((dp=2, tp=4), stride=(4, 1)), call #1 on this dim, did not "
                       "complete within 3 s"));
    CHECK(has(message, "; world rank 2 of its group (world ranks 0-3) never arrived: it skipped the call"));
  } else {
    CHECK(message.empty());
    if (me >= 4) CHECK(v[0] == 4);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}
TEST_CASE("late_rank") {
  const dm::mpi::communicator world = dm::mpi::world();
  const int me = world.rank(), n = world.size();
  REQUIRE_MESSAGE(n >= 2, "late_rank: run on 2 ranks or more");
  options o;
  o.watchdog = 300ms;
  o.flight_record_entries = 0;
  const auto mesh = dm::init_device_mesh(world, dm::mesh<dm::dim<"w">>(n), o);
  MPI_Barrier(MPI_COMM_WORLD);
  constexpr float untouched = -7;
  std::vector<float> v(4096, static_cast<float>(me + 1));
  std::string message;
  if (me == 1) std::this_thread::sleep_for(2s);  // the others' watchdogs give up after 330 ms
  try {
    mesh.all_reduce<"w">(v, dm::op::sum);
  } catch (const dm::comm_error& e) {
    message = e.what();
    if (me != 1) std::fill(v.begin(), v.end(), untouched);  // the buffer reused after the error
  }
  // Rank 1 completes the call while the others wait here (MPI progresses their parked requests).
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  CAPTURE(message);
  if (me == 1) {
    CHECK(has(message, "all_reduce on dim 'w' of mesh"));
    CHECK(has(message, "call #1 on this dim, completed on this rank after world ranks 0,2"));
    CHECK(has(message, "gave up on it (their watchdog"));
    CHECK(has(message, "its result is not delivered"));
    CHECK(std::count(v.begin(), v.end(), 2.0f) == static_cast<long>(v.size()));  // as it was
  } else {
    CHECK(has(message, "did not complete within 0.3 s"));
    CHECK(has(message, "world rank 1"));
    CHECK_MESSAGE(std::count(v.begin(), v.end(), untouched) == static_cast<long>(v.size()),
                  "the late rank's result was written into a buffer whose call had ended in an error: v[0] = " << v[0]);
  }
}
TEST_CASE("half_late") {
  const dm::mpi::communicator world = dm::mpi::world();
  const int me = world.rank(), n = world.size();
  options o;
  o.watchdog = 4s;
  o.flight_record_entries = 0;
  const auto mesh = dm::init_device_mesh(world, dm::mesh<dm::dim<"w">>(n), o);
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<float> v(4096, static_cast<float>(me + 1));
  if (me == 1) std::this_thread::sleep_for(2s);
  mesh.all_reduce<"w">(v, dm::op::sum);
  CHECK(std::count(v.begin(), v.end(), static_cast<float>(n * (n + 1) / 2)) == static_cast<long>(v.size()));
  int x = 1;
  mesh.all_reduce<"w">(std::span(&x, 1), dm::op::sum);  // still usable
  CHECK(x == n);
}
}  // namespace reliability_watchdog_test
