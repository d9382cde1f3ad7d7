// tests/contract/contract_comms.cpp (issue 9: "nothing shared by accident, nothing silently
// wrong"): which communicator each dim gets, and what that means for values.
//
//   distinct            4 ranks: a flattened alias with the groups of an existing dim, two size-1
//                       dims, a dim spanning the world (1-D mesh, flatten of all dims, over
//                       MPI_COMM_WORLD and over an adopted dup) and two meshes over one world:
//                       no two dims share an MPI_Comm (MPI_Comm_compare is never MPI_IDENT;
//                       equal groups are MPI_CONGRUENT), and each dim's collectives are right
//   distinct_lazy       the same in lazy mode (first use collective, same order everywhere)
//   names               4 ranks: per-dim name, hints and on_create land on that dim's own
//                       communicator, also for two size-1 dims and a flattened alias
//   names_lazy          the same in lazy mode
//   lazy_threads        4 ranks, MPI_THREAD_MULTIPLE: two threads make the first uses of dp and
//                       tp of a lazy mesh at once, 20 times: each right or mesh_error, never a
//                       hang; first uses in other orders on even and odd ranks: mesh_error
//   threads_equal_groups  4 ranks, MPI_THREAD_MULTIPLE: all_reduce on "cp" and on the alias
//                       "dp_cp" (same groups) from two threads at once, every result checked
//   threads_two_meshes  two meshes over one world, one thread each, every result checked
//   flatten_threads     4 ranks, MPI_THREAD_MULTIPLE, an eager mesh: one thread flattens while
//                       the other makes handles (slices) and all_reduces on tp, every result
//                       checked; then two threads flatten at once, 10 times: each right or
//                       mesh_error on every rank, never a hang or a crash (issue 41)
//   shift_aliased       4 ranks: shift with the same buffer as send and receive (1 MiB, 4 ints,
//                       periodic and not): the neighbour's data, never our own
//   shift_overlap       send and receive overlapping by a few elements: right or an exception
//   static_smaller      8 ranks: init_device_mesh<L>(world) of a static 2x2 mesh: ranks 0-3 are
//                       members with the right coordinates, 4-7 are not; collectives right
//   static_larger       8 ranks: a static 4x4 mesh throws mesh_error on every rank
//   fnv_collision       8 ranks: per_dim keys crafted so that fb4ed9d's FNV-1a check took
//                       (dp=4, tp=2) and (dp=2, tp=4) for the same mesh: every rank throws
//   consistency_long    8 ranks: (dp=4, tp=2) on rank 0, (dp=2, tp=4) elsewhere, with 300-char
//                       per_dim keys and names: every rank throws, and the first 300
//                       characters of the message show dp=4 and dp=2
#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common.hpp"

namespace contract_comms_test {  // one per file: a unity TU holds several files (devmesh_test_program)

using namespace dm::literals;
using contract::compare;
using contract::compare_name;
using contract::contains;
using C = dm::mpi::communicator;
using m2 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;
using m3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;
using line = dm::mesh<dm::dim<"x">>;

namespace {

int me = 0;

/// Fails unless MPI_Comm_compare(a, b) == expected.
void expect_compare(MPI_Comm a, MPI_Comm b, int expected, const std::string& what, const char* file, int line) {
  const int r = compare(a, b);
  test::check_at(r == expected, file, line, "EXPECT_COMPARE",
                 what + ": MPI_Comm_compare is " + compare_name(r) + ", expected " + compare_name(expected));
}
#define EXPECT_COMPARE(a, b, expected, what) expect_compare((a), (b), (expected), (what), __FILE__, __LINE__)

/// Fails if MPI_Comm_compare(a, b) == MPI_IDENT (the same communicator) or a == b.
void expect_not_ident(MPI_Comm a, MPI_Comm b, const std::string& what, const char* file, int line) {
  const int r = compare(a, b);
  test::check_at(a != b && r != MPI_IDENT, file, line, "EXPECT_NOT_IDENT",
                 what + ": the same communicator (MPI_Comm_compare " + compare_name(r) + ")");
}
#define EXPECT_NOT_IDENT(a, b, what) expect_not_ident((a), (b), (what), __FILE__, __LINE__)

/// all_reduce(sum) of (world rank + 1 + salt) on dim N of m, checked against the layout's group.
template <dm::fixed_string N, class M>
void expect_sum(const M& m, long salt, const char* file, int line) {
  const auto g = dm::group<N>(m.layout(), m.rank());
  std::vector<long> v{m.rank() + 1 + salt, 2 * (m.rank() + 1) + salt};
  dm::all_reduce<N>(m, std::span(v), dm::op::sum);
  long e0 = 0, e1 = 0;
  for (int r : g) e0 += r + 1 + salt, e1 += 2 * (r + 1) + salt;
  test::check_at(v[0] == e0 && v[1] == e1, file, line, "EXPECT_SUM",
                 "all_reduce on '" + std::string(N.view()) + "': got " + std::to_string(v[0]) + "," +
                     std::to_string(v[1]) + ", expected " + std::to_string(e0) + "," + std::to_string(e1));
}
#define EXPECT_SUM(N, m, salt) expect_sum<N>((m), (salt), __FILE__, __LINE__)

using named = std::vector<std::pair<std::string, MPI_Comm>>;

/// No two of the named communicators are the same MPI_Comm.
void expect_pairwise_distinct(const named& a, const std::string& where) {
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = i + 1; j < a.size(); ++j)
      EXPECT_NOT_IDENT(a[i].second, a[j].second, where + ": dims '" + a[i].first + "' and '" + a[j].first + "'");
}

void distinct(const C& world, bool lazy) {
  dm::device_mesh_options<C> o;
  o.lazy = lazy;
  const std::string mode = lazy ? "lazy: " : "eager: ";
  // (dp=1, cp=2, tp=2): dp_cp has exactly the groups of cp.
  auto mesh = dm::init_device_mesh(world, m3(1, 2, 2), o);
  auto f = mesh.flatten<"dp_cp", "dp", "cp">();
  auto all = mesh.flatten<"all">();  // spans the world, in world order
  // The same order of first uses on every rank (lazy mode creates here).
  const MPI_Comm dp = mesh.comm<"dp">().native(), cp = mesh.comm<"cp">().native(), tp = mesh.comm<"tp">().native();
  const MPI_Comm dp_cp = f.comm<"dp_cp">().native(), whole = all.comm<"all">().native();
  EXPECT_NOT_IDENT(dp_cp, cp, mode + "flattened alias dp_cp vs cp");
  EXPECT_COMPARE(dp_cp, cp, MPI_CONGRUENT, mode + "dp_cp vs cp (same group, own context)");
  EXPECT_COMPARE(whole, MPI_COMM_WORLD, MPI_CONGRUENT, mode + "flatten of all dims vs MPI_COMM_WORLD");
  expect_pairwise_distinct({{"dp", dp}, {"cp", cp}, {"tp", tp}, {"dp_cp", dp_cp}, {"all", whole}}, mode + "one mesh");
  EXPECT_SUM("dp", mesh, 0);
  EXPECT_SUM("cp", mesh, 10);
  EXPECT_SUM("tp", mesh, 20);
  EXPECT_SUM("dp_cp", f, 30);
  EXPECT_SUM("all", all, 40);

  // Two size-1 dims: each its own communicator (groups of one rank: congruent).
  using ones = dm::mesh<dm::dim<"a">, dm::dim<"b">, dm::dim<"c">>;
  auto o1 = dm::init_device_mesh(world, ones(1, 1, world.size()), o);
  const MPI_Comm a = o1.comm<"a">().native(), b = o1.comm<"b">().native(), c = o1.comm<"c">().native();
  EXPECT_NOT_IDENT(a, b, mode + "size-1 dims a and b");
  EXPECT_COMPARE(a, b, MPI_CONGRUENT, mode + "size-1 dims a and b");
  EXPECT_COMPARE(c, MPI_COMM_WORLD, MPI_CONGRUENT, mode + "dim c spanning the world vs MPI_COMM_WORLD");
  CHECK_EQ(o1.comm<"a">().size(), 1);
  CHECK_EQ(o1.comm<"b">().size(), 1);
  EXPECT_SUM("a", o1, 1);
  EXPECT_SUM("b", o1, 2);
  EXPECT_SUM("c", o1, 3);

  // A 1-D mesh over MPI_COMM_WORLD, and over an adopted dup of it: never the world itself.
  auto l1 = dm::init_device_mesh<line>(world, o);
  EXPECT_COMPARE(l1.comm().native(), MPI_COMM_WORLD, MPI_CONGRUENT, mode + "1-D mesh over the world vs MPI_COMM_WORLD");
  EXPECT_NOT_IDENT(l1.comm().native(), world.native(), mode + "1-D mesh vs the world passed in");
  EXPECT_SUM("x", l1, 5);
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  {
    auto dup_world = C::adopt(dup);
    auto l2 = dm::init_device_mesh<line>(dup_world, o);
    EXPECT_NOT_IDENT(l2.comm().native(), dup, mode + "1-D mesh over an adopted dup vs that dup");
    EXPECT_COMPARE(l2.comm().native(), dup, MPI_CONGRUENT, mode + "1-D mesh over an adopted dup vs that dup");
    EXPECT_NOT_IDENT(l2.comm().native(), MPI_COMM_WORLD, mode + "1-D mesh over an adopted dup vs MPI_COMM_WORLD");
    EXPECT_NOT_IDENT(l2.comm().native(), l1.comm().native(), mode + "two 1-D meshes");
    EXPECT_SUM("x", l2, 6);
  }

  // Two meshes over the same world: no communicator in common.
  auto again = dm::init_device_mesh(world, m3(1, 2, 2), o);
  auto f2 = again.flatten<"dp_cp", "dp", "cp">();
  auto all2 = again.flatten<"all">();
  const named first{{"dp", dp}, {"cp", cp}, {"tp", tp}, {"dp_cp", dp_cp}, {"all", whole}};
  const named second{{"dp", again.comm<"dp">().native()},
                     {"cp", again.comm<"cp">().native()},
                     {"tp", again.comm<"tp">().native()},
                     {"dp_cp", f2.comm<"dp_cp">().native()},
                     {"all", all2.comm<"all">().native()}};
  for (const auto& [n1, c1] : first)
    for (const auto& [n2, c2] : second)
      EXPECT_NOT_IDENT(c1, c2, mode + "two meshes over one world: first mesh's '" + n1 + "' vs second's '" + n2 + "'");
  EXPECT_SUM("cp", again, 7);
  EXPECT_SUM("dp_cp", f2, 8);
  EXPECT_SUM("all", all2, 9);
  if (me == 0) std::printf("%sdistinct: dims compared pairwise\n", mode.c_str());
}

// ---- names, hints, hooks per dim ------------------------------------------------------------
const char* const hint_key = "mpi_assert_no_any_source";  // OpenMPI 4.1 reports this one back

/// The value MPI_Comm_get_info reports for hint_key, or nullopt if the key is not reported.
std::optional<std::string> hint_of(MPI_Comm c) {
  MPI_Info info = MPI_INFO_NULL;
  if (MPI_Comm_get_info(c, &info) != MPI_SUCCESS) return std::nullopt;
  char v[64]{};
  int flag = 0;
  MPI_Info_get(info, hint_key, static_cast<int>(sizeof v) - 1, v, &flag);
  MPI_Info_free(&info);
  if (!flag) return std::nullopt;
  return std::string(v);
}

void names(const C& world, bool lazy) {
  using L = dm::mesh<dm::dim<"a">, dm::dim<"b">, dm::dim<"dp">, dm::dim<"tp">>;
  std::vector<MPI_Comm> hooked_a, hooked_b, hooked_ab;
  dm::device_mesh_options<C> o;
  o.lazy = lazy;
  o.per_dim["tp"].name = "my_tp";
  o.per_dim["a"].hints = {{hint_key, "true"}};
  o.per_dim["a"].on_create = [&](MPI_Comm c) { hooked_a.push_back(c); };
  o.per_dim["b"].on_create = [&](MPI_Comm c) { hooked_b.push_back(c); };
  o.per_dim["a_b"].name = "my_a_b";
  o.per_dim["a_b"].on_create = [&](MPI_Comm c) { hooked_ab.push_back(c); };
  const std::string mode = lazy ? "lazy: " : "eager: ";
  // (a=1, b=1, dp=2, tp=2): a, b and the alias a_b all have groups of one rank.
  auto mesh = dm::init_device_mesh(world, L(1, 1, 2, world.size() / 2), o);
  auto f = mesh.flatten<"a_b", "a", "b">();
  const MPI_Comm a = mesh.comm<"a">().native(), b = mesh.comm<"b">().native();
  const MPI_Comm dp = mesh.comm<"dp">().native(), tp = mesh.comm<"tp">().native();
  const MPI_Comm ab = f.comm<"a_b">().native();
  auto expect_name = [&](MPI_Comm c, const std::string& expected, const std::string& dim) {
    const std::string got = contract::comm_name(c);
    CHECK_MESSAGE(got == expected, (mode + "dim '" + dim + "' is named '" + got + "', expected '" + expected + "'"));
  };
  expect_name(tp, "my_tp", "tp");
  expect_name(dp, "mesh:dp", "dp");
  expect_name(a, "mesh:a", "a");
  expect_name(b, "mesh:b", "b");
  expect_name(ab, "my_a_b", "a_b");
  // Each hook ran exactly once on this rank, with its own dim's communicator.
  CHECK_EQ(hooked_a.size(), std::size_t{1});
  CHECK_EQ(hooked_b.size(), std::size_t{1});
  CHECK_EQ(hooked_ab.size(), std::size_t{1});
  CHECK((hooked_a.size() == 1 && hooked_a[0] == a));
  CHECK((hooked_b.size() == 1 && hooked_b[0] == b));
  CHECK((hooked_ab.size() == 1 && hooked_ab[0] == ab));
  // Hints: only where MPI reports them back (OpenMPI 4.1 reports mpi_assert_no_any_source).
  if (const auto ha = hint_of(a)) {
    CHECK_MESSAGE(*ha == "true", (mode + "dim 'a' has " + hint_key + "=" + *ha + ", expected true"));
    for (const auto& entry : named{{"b", b}, {"a_b", ab}, {"dp", dp}, {"tp", tp}}) {  // no bindings: clang 14
      const auto h = hint_of(entry.second);
      CHECK_MESSAGE(!(h && *h == "true"), (mode + "dim '" + entry.first + "' got dim a's hint " + hint_key + "=true"));
    }
  } else if (me == 0) {
    std::printf("note: this MPI does not report %s through MPI_Comm_get_info; hints not checked\n", hint_key);
  }
  EXPECT_SUM("a", mesh, 1);
  EXPECT_SUM("b", mesh, 2);
  EXPECT_SUM("tp", mesh, 3);
  EXPECT_SUM("a_b", f, 4);
  if (me == 0) std::printf("%snames: tp=%s dp=%s a=%s b=%s a_b=%s\n", mode.c_str(), contract::comm_name(tp).c_str(),
                           contract::comm_name(dp).c_str(), contract::comm_name(a).c_str(),
                           contract::comm_name(b).c_str(), contract::comm_name(ab).c_str());
}

// ---- threads ---------------------------------------------------------------------------------
int rounds = 2000;

/// `rounds` all_reduces on dim N of m, values distinct per thread (`salt`) and per round;
/// returns the number of wrong results (and keeps the first one for the message).
template <dm::fixed_string N, class M>
int hammer(const M& m, long salt, std::string& first_wrong) {
  const auto g = dm::group<N>(m.layout(), m.rank());
  int wrong = 0;
  for (int i = 0; i < rounds; ++i) {
    const long base = salt + 1000L * i;
    std::vector<long> v{base + m.rank(), base * 3 + 7 * m.rank(), -base};
    dm::all_reduce<N>(m, std::span(v), dm::op::sum);
    long e0 = 0, e1 = 0, e2 = 0;
    for (int r : g) e0 += base + r, e1 += base * 3 + 7 * r, e2 -= base;
    if (v[0] != e0 || v[1] != e1 || v[2] != e2) {
      if (!wrong)
        first_wrong = "round " + std::to_string(i) + " on '" + std::string(N.view()) + "': got " +
                      std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) + " expected " +
                      std::to_string(e0) + "," + std::to_string(e1) + "," + std::to_string(e2);
      ++wrong;
    }
  }
  return wrong;
}

void threads_equal_groups(const C& world) {
  auto mesh = dm::init_device_mesh(world, m3(1, 2, 2));
  auto f = mesh.flatten<"dp_cp", "dp", "cp">();  // the groups of cp
  std::atomic<int> wrong_a{0}, wrong_b{0};
  std::string first_a, first_b;
  std::thread ta([&] { wrong_a = hammer<"cp">(mesh, 1'000'000'000L, first_a); });
  std::thread tb([&] { wrong_b = hammer<"dp_cp">(f, 2'000'000'000L, first_b); });
  ta.join();
  tb.join();
  CHECK_EQ(wrong_a.load(), 0);
  CHECK_EQ(wrong_b.load(), 0);
  if (!first_a.empty()) contract::show("thread A, first wrong", first_a);
  if (!first_b.empty()) contract::show("thread B, first wrong", first_b);
  if (me == 0) std::printf("threads: %d all_reduces each on cp and dp_cp at once\n", rounds);
}

void threads_two_meshes(const C& world) {
  auto m1 = dm::init_device_mesh<line>(world);
  auto m2_ = dm::init_device_mesh<line>(world);
  auto t1 = dm::init_device_mesh(world, m3(1, 2, 2));
  auto t2 = dm::init_device_mesh(world, m3(1, 2, 2));
  std::atomic<int> wrong_a{0}, wrong_b{0}, wrong_c{0}, wrong_d{0};
  std::string first_a, first_b, first_c, first_d;
  {
    std::thread ta([&] { wrong_a = hammer<"x">(m1, 1'000'000'000L, first_a); });
    std::thread tb([&] { wrong_b = hammer<"x">(m2_, 2'000'000'000L, first_b); });
    ta.join();
    tb.join();
  }
  {
    std::thread tc([&] { wrong_c = hammer<"tp">(t1, 3'000'000'000L, first_c); });
    std::thread td([&] { wrong_d = hammer<"tp">(t2, 4'000'000'000L, first_d); });
    tc.join();
    td.join();
  }
  CHECK_EQ(wrong_a.load(), 0);
  CHECK_EQ(wrong_b.load(), 0);
  CHECK_EQ(wrong_c.load(), 0);
  CHECK_EQ(wrong_d.load(), 0);
  for (const auto* s : {&first_a, &first_b, &first_c, &first_d})
    if (!s->empty()) contract::show("first wrong", *s);
  if (me == 0) std::printf("threads: two meshes over one world, %d all_reduces per thread\n", rounds);
}

// ---- lazy first use from two threads (issue 41) -------------------------------------------------
/// What one thread's first use of a dim ended in: the right sum, a mesh_error, or else (a
/// failure: another exception, a wrong value).
struct first_use {
  bool right = false, refused = false;
  std::string other;
};
template <dm::fixed_string N, class M>
first_use use_first(const M& mesh) {
  first_use u;
  try {
    const auto g = dm::group<N>(mesh.layout(), me);
    std::vector<int> v{me + 1};
    mesh.template all_reduce<N>(std::span(v), dm::op::sum);
    int e = 0;
    for (int r : g) e += r + 1;
    u.right = v[0] == e;
    if (!u.right) u.other = "all_reduce on '" + std::string(N.view()) + "' gave " + std::to_string(v[0]);
  } catch (const dm::mesh_error&) {
    u.refused = true;
  } catch (const std::exception& x) {
    u.other = x.what();
  }
  return u;
}

// One round of a race: f and g in two threads started together; counts their outcomes (right
// values, or mesh_error) and checks that neither had another (a wrong value, another error).
template <class F, class G>
void race(int round, F f, G g, int& right, int& refused) {
  first_use a, b;
  std::atomic<int> ready{0};
  const auto start_together = [&ready] {
    ++ready;
    while (ready.load() < 2) std::this_thread::yield();
  };
  std::thread ta([&] {
    start_together();
    a = f();
  });
  std::thread tb([&] {
    start_together();
    b = g();
  });
  ta.join();
  tb.join();
  for (const first_use* u : {&a, &b}) {
    CHECK_MESSAGE(u->other.empty(), ("round " + std::to_string(round) + ": " + u->other));
    right += u->right, refused += u->refused;
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Two threads make the first uses of two dims of a lazy mesh at once (each first use is
// collective over the mesh's members): each ends with the right values (the ranks happened to
// make them in one order) or a mesh_error on every rank (they made them in other orders, and
// the ranks disagreed), never a hang, a crash or a wrong value. Then the same with the order
// forced to differ (even ranks dp first, odd ranks tp first): mesh_error on every rank, twice.
void lazy_threads(const C& world) {
  dm::device_mesh_options<C> o;
  o.lazy = true;
  int right = 0, refused = 0;
  for (int round = 0; round < 20; ++round) {
    auto mesh = dm::init_device_mesh(world, m2(2, 2), o);
    race(round, [&] { return use_first<"dp">(mesh); }, [&] { return use_first<"tp">(mesh); }, right, refused);
  }
  if (me == 0) std::printf("lazy_threads: 40 first uses per rank: %d right, %d refused (mesh_error)\n", right, refused);
  auto mesh = dm::init_device_mesh(world, m2(2, 2), o);
  const bool even = me % 2 == 0;
  const first_use x = even ? use_first<"dp">(mesh) : use_first<"tp">(mesh);
  const first_use y = even ? use_first<"tp">(mesh) : use_first<"dp">(mesh);
  CHECK_MESSAGE(x.refused, ("first uses in other orders: the first did not throw mesh_error" + x.other));
  CHECK_MESSAGE(y.refused, ("first uses in other orders: the second did not throw mesh_error" + y.other));
}

// ---- shift with aliased buffers --------------------------------------------------------------
/// Distinct per rank and per element.
int value(int rank, std::size_t i) { return rank * 1'000'003 + static_cast<int>(i % 1'000'000); }

void shift_aliased(const C& world) {
  auto mesh = dm::init_device_mesh(world, m2(1, world.size()));
  const auto g = mesh.layout().group<"tp">(me);
  const int idx = g.index_of(me), n = g.size();
  for (const std::size_t count : {std::size_t{4}, std::size_t{1} << 18 /* 1 MiB of int */}) {
    for (const bool periodic : {true, false}) {
      for (const int disp : {1, 2}) {
        std::vector<int> buf(count);
        for (std::size_t i = 0; i < count; ++i) buf[i] = value(me, i);
        mesh.shift<"tp">(std::span<const int>(buf), std::span(buf), disp, periodic);
        const int src_idx = periodic ? ((idx - disp) % n + n) % n : idx - disp;
        const int src = src_idx >= 0 ? g[src_idx] : me;  // no source: recv left untouched
        std::size_t bad = 0, first = count;
        for (std::size_t i = 0; i < count; ++i)
          if (buf[i] != value(src, i)) bad += 1, first = std::min(first, i);
        CHECK_MESSAGE(!bad, ("shift(buf, buf) of " + std::to_string(count) + " ints, displacement " +
                             std::to_string(disp) + (periodic ? ", periodic" : "") + ": " + std::to_string(bad) +
                             " wrong elements, element " + std::to_string(first) + " is " + std::to_string(buf[first]) +
                             " (from rank " + std::to_string(buf[first] / 1'000'003) + "), expected from rank " +
                             std::to_string(src)));
      }
    }
  }
  if (me == 0) std::printf("shift with one buffer for send and receive: checked\n");
}

void shift_overlap(const C& world) {
  auto mesh = dm::init_device_mesh(world, m2(1, world.size()));
  const auto g = mesh.layout().group<"tp">(me);
  const int idx = g.index_of(me), n = g.size();
  const int src = g[(idx - 1 + n) % n];
  for (const std::size_t count : {std::size_t{4}, std::size_t{1} << 18}) {
    for (const std::ptrdiff_t offset : {3, -3}) {  // recv starts 3 elements after / before send
      const std::size_t pad = 3;
      std::vector<int> buf(count + pad);
      const std::size_t send_at = offset > 0 ? 0 : pad, recv_at = offset > 0 ? pad : 0;
      for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = -1;
      for (std::size_t i = 0; i < count; ++i) buf[send_at + i] = value(me, i);
      const auto t = contract::catch_all([&] {
        mesh.shift<"tp">(std::span<const int>(buf.data() + send_at, count), std::span(buf.data() + recv_at, count), 1,
                         true);
      });
      const std::string what = "shift with send and recv overlapping (" + std::to_string(count) + " ints, recv at " +
                               std::to_string(offset) + ")";
      if (t.any) {
        CHECK_MESSAGE((t.type == "mesh_error" || t.type == "comm_error"), (what + ": threw " + t.type + ": " + t.what));
        if (me == 0) contract::show(what + ": rejected", t.what);
        continue;
      }
      std::size_t bad = 0, first = count;
      for (std::size_t i = 0; i < count; ++i)
        if (buf[recv_at + i] != value(src, i)) bad += 1, first = std::min(first, i);
      CHECK_MESSAGE(!bad, (what + ": silently wrong: " + std::to_string(bad) + " wrong elements, element " +
                           std::to_string(first) + " is " + std::to_string(buf[recv_at + first]) + ", expected " +
                           std::to_string(value(src, first))));
    }
  }
  // Every rank must still agree on the world after the four calls (none left hanging).
  EXPECT_SUM("tp", mesh, 0);
}

// ---- static meshes and the world -------------------------------------------------------------
void static_smaller(const C& world) {
  using L = dm::mesh<dm::dim<"a", 2>, dm::dim<"b", 2>>;
  std::optional<dm::device_mesh<L, C>> m;
  const auto t = contract::catch_all([&] { m.emplace(dm::init_device_mesh<L>(world)); });
  REQUIRE_MESSAGE(!t.any, ("init_device_mesh<2x2>(world of 8) threw " + t.type + ": " + t.what));
  const bool member = me < 4;
  CHECK_EQ(m->is_member(), member);
  CHECK_EQ(m->coordinate().has_value(), member);
  if (member && m->coordinate()) {
    CHECK_EQ((*m->coordinate())[0], me / 2);
    CHECK_EQ((*m->coordinate())[1], me % 2);
    CHECK_EQ(m->local_rank<"b">(), me % 2);
    CHECK_EQ(m->comm<"b">().size(), 2);
    CHECK_EQ(m->comm<"a">().size(), 2);
    std::vector<int> v{me, 10 * me};
    m->all_reduce<"b">(std::span(v), dm::op::sum);
    CHECK_EQ(v[0], 4 * (me / 2) + 1);
    CHECK_EQ(v[1], 10 * (4 * (me / 2) + 1));
    std::vector<int> w{me};
    m->all_reduce<"a">(std::span(w), dm::op::sum);
    CHECK_EQ(w[0], 2 + 2 * (me % 2));
  } else if (!member) {
    std::vector<int> v{1};
    const auto e = contract::catch_all([&] { m->all_reduce<"b">(std::span(v), dm::op::sum); });
    EXPECT_MESH_ERROR(e, "all_reduce on a non-member", "not a member");
  }
  // Eager flatten is collective over the world: members and non-members call it.
  auto f = m->flatten<"ab">();
  if (member) {
    std::vector<int> v{me + 1};
    f.all_reduce<"ab">(std::span(v), dm::op::sum);
    CHECK_EQ(v[0], 10);
  }
}

void static_larger(const C& world) {
  using L = dm::mesh<dm::dim<"a", 4>, dm::dim<"b", 4>>;
  const auto t = contract::catch_all([&] { (void)dm::init_device_mesh<L>(world); });
  EXPECT_MESH_ERROR(t, "static 4x4 mesh on 8 ranks", "devmesh: ", "init_device_mesh");
  if (me == 0) contract::show("static 4x4 on 8 ranks", t.what);
}

void consistency_long(const C& world) {
  dm::device_mesh_options<C> o;
  o.per_dim[std::string(300, 'k')] = {};  // keys that are no dim: they enter the descriptor
  o.per_dim[std::string(300, 'l')].hints = {{hint_key, "true"}};
  o.per_dim["dp"].name = std::string(300, 'n');
  o.per_dim["tp"].name = std::string(300, 't');
  const auto t = contract::catch_all([&] { (void)dm::init_device_mesh(world, me == 0 ? m2(4, 2) : m2(2, 4), o); });
  EXPECT_MESH_ERROR(t, "(dp=4, tp=2) on rank 0, (dp=2, tp=4) elsewhere", "devmesh: ", "init_device_mesh", "rank 0");
  const std::string head = t.what.substr(0, 300);
  CHECK_MESSAGE((contains(head, "dp=4") && contains(head, "dp=2")),
                ("the first 300 characters do not show dp=4 and dp=2: " + head));
  if (me == 0 || me == 1) contract::show("message head", head);
}

/// 64-bit FNV-1a, the hash fb4ed9d's consistency check compared.
std::uint64_t fnv1a(const std::string& s, std::uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

/// A crafted collision: per_dim keys that make fb4ed9d's descriptors of (dp=4, tp=2) and
/// (dp=2, tp=4) hash alike (found by a Pollard rho search over 64-bit FNV-1a; the test checks
/// the collision itself below). There, rank 7 built another mesh and init succeeded. Now the
/// check compares SHA-256 digests of the descriptors: every rank must throw.
void fnv_collision(const C& world) {
  const std::string key_a = "5e47445836fcdafb", key_b = "f2db14ed0b3ff43c";
  const std::string old_a = "mesh((dp=4, tp=2), stride=(2, 1)) [mpi, init_device_mesh, " + key_a + "]";
  const std::string old_b = "mesh((dp=2, tp=4), stride=(4, 1)) [mpi, init_device_mesh, " + key_b + "]";
  CHECK_MESSAGE(fnv1a(old_a) == fnv1a(old_b), "the crafted keys do not collide under FNV-1a");
  const bool odd = me == world.size() - 1;
  dm::device_mesh_options<C> o;
  o.per_dim[odd ? key_b : key_a];
  const auto t = contract::catch_all([&] { (void)dm::init_device_mesh(world, odd ? m2(2, 4) : m2(4, 2), o); });
  EXPECT_MESH_ERROR(t, "a crafted 64-bit hash collision", "devmesh: ", "init_device_mesh", "disagree");
}

/// The world of a scenario, with `me` set, after checking its rank count.
C world_of(int ranks) {
  me = test::world_rank();
  contract::require_ranks(ranks);
  return dm::mpi::world();
}

// Eager flatten from two threads (issue 41): the step runs on the root's control communicator and
// adds to the communicator cache, while handles look the cache up. First one thread flattens
// while the other keeps making handles and all_reduces on them: all right. Then both threads
// flatten at once (other names, so ranks that ran them in other orders disagree): each flatten
// gives a right all_reduce or a mesh_error, never a hang, a crash or a wrong value.
template <dm::fixed_string Name, class M>
first_use flatten_and_use(const M& mesh) {
  first_use u;
  try {
    auto f = mesh.template flatten<Name, "dp", "tp">();
    u = use_first<Name>(f);
  } catch (const dm::mesh_error&) {
    u.refused = true;
  } catch (const std::exception& x) {
    u.other = x.what();
  }
  return u;
}
void flatten_threads(const C& world) {
  auto mesh = dm::init_device_mesh(world, m2(2, 2));
  std::string first_wrong;
  int wrong = 0;
  first_use a;
  std::atomic<bool> done{false};
  std::thread ta([&] {
    a = flatten_and_use<"all">(mesh);
    done = true;
  });
  std::thread tb([&] {
    for (int i = 0; i < 50 || !done.load(); ++i) {
      const auto row = mesh.template slice<"tp">();  // a handle: resolves its dims in the cache
      wrong += hammer<"tp">(row, 5'000'000'000L + 1000L * i, first_wrong) > 0;
    }
  });
  ta.join();
  tb.join();
  CHECK_MESSAGE(a.right, ("flatten beside handles and all_reduces: " + a.other));
  CHECK_MESSAGE(wrong == 0, ("all_reduces on tp beside a flatten: " + first_wrong));
  int right = 0, refused = 0;
  for (int round = 0; round < 10; ++round)
    race(round, [&] { return flatten_and_use<"f1">(mesh); }, [&] { return flatten_and_use<"f2">(mesh); }, right, refused);
  if (me == 0) std::printf("flatten_threads: 20 flattens per rank from two threads: %d right, %d refused\n", right, refused);
}

/// The world of a threads scenario (with the rounds per thread from the command line), or
/// nullopt, the test case skipped, when MPI lacks MPI_THREAD_MULTIPLE.
std::optional<C> threads_world() {
  C world = world_of(4);
  rounds = std::atoi(test::arg(0, std::to_string(rounds)).c_str());
  if (test::thread_level() >= MPI_THREAD_MULTIPLE) return world;
  test::skip("this MPI library provides thread level " + std::to_string(test::thread_level()) +
             ", not MPI_THREAD_MULTIPLE (" + std::to_string(MPI_THREAD_MULTIPLE) + ")");
  return std::nullopt;
}

}  // namespace

TEST_CASE("distinct") { distinct(world_of(4), false); }
TEST_CASE("distinct_lazy") { distinct(world_of(4), true); }
TEST_CASE("names") { names(world_of(4), false); }
TEST_CASE("names_lazy") { names(world_of(4), true); }
TEST_CASE("threads_equal_groups") {
  if (const auto world = threads_world()) threads_equal_groups(*world);
}
TEST_CASE("threads_two_meshes") {
  if (const auto world = threads_world()) threads_two_meshes(*world);
}
TEST_CASE("lazy_threads") {
  if (const auto world = threads_world()) lazy_threads(*world);
}
TEST_CASE("flatten_threads") {
  if (const auto world = threads_world()) flatten_threads(*world);
}
TEST_CASE("shift_aliased") { shift_aliased(world_of(4)); }
TEST_CASE("shift_overlap") { shift_overlap(world_of(4)); }
TEST_CASE("static_smaller") { static_smaller(world_of(8)); }
TEST_CASE("static_larger") { static_larger(world_of(8)); }
TEST_CASE("fnv_collision") { fnv_collision(world_of(8)); }
TEST_CASE("consistency_long") { consistency_long(world_of(8)); }
}  // namespace contract_comms_test
