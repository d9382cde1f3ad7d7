// tests/contract/contract_options.cpp (issue 9): the C++ option fields of
// dm::device_mesh_options<dm::mpi::communicator>, set in code, no environment variable:
//
//   check_collectives  check_collectives = true: an all_reduce of 4 elements on rank 2 and 8
//                      elsewhere throws mesh_error ("disagree", "count") on every rank; a
//                      correct all_reduce afterwards is right
//   timeout            timeout = 2 s: rank 3 skips an eager flatten; ranks 0-2 throw mesh_error
//                      ("flatten", "timed out"); every rank meets at a barrier and exits 0
//   share              share_equal_groups = true: dims with identical groups and equal options
//                      share one communicator (MPI_IDENT): a flattened alias and the dim with
//                      its groups, two size-1 dims; not when their options differ, and never
//                      the user's world (a 1-D mesh over it is only MPI_CONGRUENT)
//   strict             one rule for options and environment (issue 41): DEVMESH_TIMEOUT,
//                      DEVMESH_WATCHDOG, DEVMESH_FLIGHT_RECORD_ENTRIES with spaces, signs,
//                      hex, exponents, units, sub-millisecond or absurd values, negative
//                      options.timeout / watchdog, flight_record_entries of -2 or 2^30: init
//                      throws mesh_error on every rank naming the value (also when one rank
//                      alone has it); valid values are taken
//
// The fields are set through requires-expressions, so that this file compiles against headers
// that do not have them yet (the shared build stays green); a missing field is a failed check
// naming it.
#include <chrono>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "common.hpp"

namespace contract_options_test {  // one per file: a unity TU holds several files (devmesh_test_program)

using C = dm::mpi::communicator;
using O = dm::device_mesh_options<C>;
using m2 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;
using m3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;

namespace {

int me = 0;

template <class T>
bool set_check_collectives(T& o, bool v) {
  if constexpr (requires { o.check_collectives = v; }) {
    o.check_collectives = v;
    return true;
  } else {
    return false;
  }
}
template <class T>
bool set_timeout(T& o, std::chrono::milliseconds v) {
  if constexpr (requires { o.timeout = v; }) {
    o.timeout = v;
    return true;
  } else {
    return false;
  }
}
template <class T>
bool set_share(T& o, bool v) {
  if constexpr (requires { o.share_equal_groups = v; }) {
    o.share_equal_groups = v;
    return true;
  } else {
    return false;
  }
}

bool field(bool present, const char* name) {
  CHECK_MESSAGE(present, (std::string("dm::device_mesh_options<dm::mpi::communicator> has no field '") + name +
                          "' (the contract of issue 9)"));
  return present;
}

template <dm::fixed_string N, class M>
void expect_sum(const M& m, int salt, int line) {
  const auto g = dm::group<N>(m.layout(), me);
  std::vector<int> v{me + salt, 1};
  dm::all_reduce<N>(m, std::span(v), dm::op::sum);
  int e = 0;
  for (int r : g) e += r + salt;
  test::check_at(v[0] == e && v[1] == g.size(), __FILE__, line, "expect_sum",
                 "all_reduce on '" + std::string(N.view()) + "': got " + std::to_string(v[0]) + "," +
                     std::to_string(v[1]) + ", expected " + std::to_string(e) + "," + std::to_string(g.size()));
}

void check_collectives(const C& world) {
  O o;
  if (!field(set_check_collectives(o, true), "check_collectives")) return;
  auto mesh = dm::init_device_mesh(world, m2(1, world.size()), o);
  std::vector<int> v(me == 2 ? 4 : 8, me);
  const auto t = contract::catch_all([&] { mesh.all_reduce<"tp">(std::span(v), dm::op::sum); });
  EXPECT_MESH_ERROR(t, "all_reduce of 4 elements on rank 2, 8 elsewhere", "devmesh: ", "all_reduce", "disagree", "count");
  if (me == 0 || me == 2) contract::show("check_collectives", t.what);
  for (int round = 0; round < 3; ++round) expect_sum<"tp">(mesh, round, __LINE__);
}

void timeout(const C& world) {
  O o;
  if (!field(set_timeout(o, std::chrono::milliseconds(2000)), "timeout")) return;
  auto mesh = dm::init_device_mesh(world, m2(2, 2), o);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me != 3) {
    const auto t = contract::catch_all([&] { (void)mesh.flatten<"all">(); });
    EXPECT_MESH_ERROR(t, "flatten without rank 3, options.timeout = 2 s", "devmesh: ", "flatten", "timed out");
    contract::show("timeout", t.any ? t.what : "no exception");
  }
}

void share(const C& world) {
  using contract::compare;
  using contract::compare_name;
  auto expect_cmp = [](MPI_Comm a, MPI_Comm b, bool want_ident, const std::string& what, int line) {
    const int r = compare(a, b);
    test::check_at(!(want_ident ? r != MPI_IDENT : (r == MPI_IDENT || a == b)), __FILE__, line, "expect_cmp",
                   what + ": MPI_Comm_compare is " + compare_name(r) + ", expected " +
                       (want_ident ? "MPI_IDENT (shared)" : "not MPI_IDENT (not shared)"));
  };
  O o;
  if (!field(set_share(o, true), "share_equal_groups")) return;
  // A flattened alias with the groups of cp, default options everywhere: shared.
  auto mesh = dm::init_device_mesh(world, m3(1, 2, 2), o);
  auto f = mesh.flatten<"dp_cp", "dp", "cp">();
  expect_cmp(f.comm<"dp_cp">().native(), mesh.comm<"cp">().native(), true, "dp_cp vs cp, equal options", __LINE__);
  expect_sum<"dp_cp">(f, 1, __LINE__);
  expect_sum<"cp">(mesh, 2, __LINE__);
  // Never the user's world: the flatten of all dims, a 1-D mesh.
  auto all = mesh.flatten<"all">();
  expect_cmp(all.comm<"all">().native(), MPI_COMM_WORLD, false, "flatten of all dims vs MPI_COMM_WORLD", __LINE__);
  expect_cmp(all.comm<"all">().native(), world.native(), false, "flatten of all dims vs the world passed in", __LINE__);
  auto line = dm::init_device_mesh<dm::mesh<dm::dim<"x">>>(world, o);
  expect_cmp(line.comm().native(), MPI_COMM_WORLD, false, "1-D mesh vs MPI_COMM_WORLD", __LINE__);
  expect_sum<"all">(all, 3, __LINE__);
  expect_sum<"x">(line, 4, __LINE__);
  // Two size-1 dims with equal options: shared; with other options (hints, name): not.
  using ones = dm::mesh<dm::dim<"a">, dm::dim<"b">, dm::dim<"c">, dm::dim<"d">>;
  O o2 = o;
  o2.per_dim["c"].hints = {{"mpi_assert_no_any_source", "true"}};
  o2.per_dim["d"].name = "my_d";
  auto ab = dm::init_device_mesh(world, ones(1, 1, 1, world.size()), o2);
  const MPI_Comm a = ab.comm<"a">().native(), b = ab.comm<"b">().native(), c = ab.comm<"c">().native();
  expect_cmp(a, b, true, "size-1 dims a and b, equal options", __LINE__);
  expect_cmp(a, c, false, "size-1 dims a and c, c with its own hints", __LINE__);
  expect_cmp(ab.comm<"d">().native(), MPI_COMM_WORLD, false, "dim d spanning the world vs MPI_COMM_WORLD", __LINE__);
  CHECK_MESSAGE(contract::comm_name(ab.comm<"d">().native()) == "my_d",
                ("dim d is named '" + contract::comm_name(ab.comm<"d">().native()) + "', expected my_d"));
  auto fd = ab.flatten<"a_d", "a", "d">();  // the groups of d, default options: not d's (named my_d)
  expect_cmp(fd.comm<"a_d">().native(), ab.comm<"d">().native(), false, "a_d (default options) vs d (named my_d)",
             __LINE__);
  expect_sum<"a">(ab, 5, __LINE__);
  expect_sum<"c">(ab, 6, __LINE__);
  expect_sum<"a_d">(fd, 7, __LINE__);
}

/// init_device_mesh with options o refused on every rank: a mesh_error holding every part.
void expect_refused(const C& world, const O& o, const std::string& what, const std::vector<std::string>& parts,
                    int line) {
  const auto t = contract::catch_all([&] { (void)dm::init_device_mesh(world, m2(2, 2), o); });
  bool ok = t.mesh_error;
  for (const auto& p : parts) ok = ok && contract::contains(t.what, p);
  test::check_at(ok, __FILE__, line, "expect_refused",
                 what + ": expected mesh_error with every part of the rule's message, got " +
                     (t.any ? t.type + ": " + t.what : "no exception"));
}
/// The same with environment variable `var` set to `value` on `rank` (-1: every rank) for the call;
/// with one rank, every rank's message names it.
void expect_env_refused(const C& world, const char* var, const char* value, int rank, int line) {
  if (rank < 0 || me == rank) setenv(var, value, 1);
  std::vector<std::string> parts{std::string(var) + "='" + value + "'"};
  if (rank >= 0) parts.push_back("failed on rank " + std::to_string(rank) + " of ");
  expect_refused(world, O{}, std::string(var) + "='" + value + "'" + (rank < 0 ? "" : " on one rank alone"), parts,
                 line);
  unsetenv(var);
}
/// ... and a value the rule takes: init succeeds.
void expect_env_taken(const C& world, const char* var, const char* value, int line) {
  setenv(var, value, 1);
  const auto t = contract::catch_all([&] { (void)dm::init_device_mesh(world, m2(2, 2)); });
  test::check_at(!t.any, __FILE__, line, "expect_env_taken",
                 std::string(var) + "='" + value + "' is valid, and init threw " + t.type + ": " + t.what);
  unsetenv(var);
}

// One strict rule for the options and the environment (issue 41): each value below makes
// init throw mesh_error on every rank naming the option or variable and the value, never
// silently the default, off, raised to 1 ms, or std::bad_alloc.
void strict(const C& world) {
  for (const char* var : {"DEVMESH_TIMEOUT", "DEVMESH_WATCHDOG"}) {
    for (const char* bad : {" 5", "5 ", "0x10", "-1", "+5", "1e-9", "1e3", "0.0001", "0.0005", "5s", "nan", "inf",
                            "1.", ".5", "1000000001"})
      expect_env_refused(world, var, bad, -1, __LINE__);
    // The least value the rule takes, 1 ms: as the watchdog's bound only, which init does not
    // wait under; as DEVMESH_TIMEOUT it would bound init itself, and a loaded machine is slower.
    if (std::string(var) == "DEVMESH_WATCHDOG") expect_env_taken(world, var, "0.001", __LINE__);
    expect_env_taken(world, var, "2.5", __LINE__);
    expect_env_taken(world, var, "600", __LINE__);
  }
  expect_env_refused(world, "DEVMESH_TIMEOUT", "0", -1, __LINE__);  // a bound, never off
  expect_env_taken(world, "DEVMESH_WATCHDOG", "0", __LINE__);       // off
  for (const char* bad : {"-2", " 5", "5 ", "0x10", "+4", "1e3", "1073741824", "16777217"})
    expect_env_refused(world, "DEVMESH_FLIGHT_RECORD_ENTRIES", bad, -1, __LINE__);
  expect_env_taken(world, "DEVMESH_FLIGHT_RECORD_ENTRIES", "0", __LINE__);
  expect_env_taken(world, "DEVMESH_FLIGHT_RECORD_ENTRIES", "16", __LINE__);
  // One rank alone: every rank throws, with that rank's reason.
  expect_env_refused(world, "DEVMESH_WATCHDOG", " 5", 1, __LINE__);

  // The options, by the same rule.
  O o;
  o.watchdog = std::chrono::seconds(-5);
  expect_refused(world, o, "options.watchdog = -5 s", {"options.watchdog = -5000 ms", "negative"}, __LINE__);
  o = O{};
  o.timeout = std::chrono::seconds(-5);
  expect_refused(world, o, "options.timeout = -5 s", {"options.timeout = -5000 ms", "negative"}, __LINE__);
  // Above 10^9 s: refused, never an overflowing deadline (milliseconds::max() once wrapped).
  for (auto huge : {std::chrono::milliseconds::max(), std::chrono::milliseconds(dm::max_bound.count() + 1)}) {
    o = O{};
    o.timeout = huge;
    expect_refused(world, o, "options.timeout = " + std::to_string(huge.count()) + " ms",
                   {"options.timeout = " + std::to_string(huge.count()) + " ms", "is above the largest bound"}, __LINE__);
    o = O{};
    o.watchdog = huge;
    expect_refused(world, o, "options.watchdog = " + std::to_string(huge.count()) + " ms",
                   {"options.watchdog = " + std::to_string(huge.count()) + " ms", "is above the largest bound"}, __LINE__);
  }
  for (long n : {-2L, 1L << 30}) {
    o = O{};
    o.flight_record_entries = n;
    expect_refused(world, o, "options.flight_record_entries = " + std::to_string(n),
                   {"options.flight_record_entries = " + std::to_string(n), "is not in [0, 16777216]"}, __LINE__);
  }
  if (me == 2) {  // one rank's options alone
    o = O{};
    o.watchdog = std::chrono::milliseconds(-1);
  } else {
    o = O{};
  }
  expect_refused(world, o, "options.watchdog = -1 ms on rank 2 alone", {"options.watchdog = -1 ms", "failed on rank 2 of "},
                 __LINE__);
  const auto t = contract::catch_all([&] {
    O w;
    w.watchdog = std::chrono::milliseconds(-1);
    (void)dm::init_device_mesh(world, m2(2, 2), me == 0 ? w : O{});
  });
  contract::show("strict (options.watchdog = -1 ms on rank 0 alone)", t.what);
}

/// A scenario's frame: 4 ranks that start together and meet again at the end (also when
/// the test case throws).
struct scenario {
  C world = dm::mpi::world();
  scenario() {
    me = world.rank();
    contract::require_ranks(4);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  scenario(const scenario&) = delete;
  scenario& operator=(const scenario&) = delete;
  ~scenario() { MPI_Barrier(MPI_COMM_WORLD); }
};

}  // namespace

TEST_CASE_FIXTURE(scenario, "check_collectives") { check_collectives(world); }
TEST_CASE_FIXTURE(scenario, "timeout") { timeout(world); }
TEST_CASE_FIXTURE(scenario, "share") { share(world); }
TEST_CASE_FIXTURE(scenario, "strict") { strict(world); }
}  // namespace contract_options_test
