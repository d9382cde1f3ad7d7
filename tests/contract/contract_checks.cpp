// tests/contract/contract_checks.cpp (issue 9: "nothing silently wrong"): collectives whose
// arguments differ across the ranks of a group, under DEVMESH_CHECK_COLLECTIVES=1 (set by
// CMake with mpirun -x). 4 ranks, mesh (dp=2, tp=2) plus the alias "all" (the whole world).
//
// Each mismatch scenario runs twice:
//   on "all": world rank 2 calls the odd version, the others the normal one: every rank
//             throws mesh_error ("devmesh: ", the collective's name, "disagree", and the word
//             naming what differs: count, type, op, root or operation);
//   on "tp":  world rank 1 is odd: its group {0, 1} throws on both ranks, the other group
//             {2, 3} agrees and gets the right values.
// After each, correct all_reduces on "all", "tp" and "dp" give the right values (the check
// left no message unmatched, on any rank).
//
//   count        all_reduce of 4 elements on the odd rank, 8 elsewhere
//   big          all_reduce of 2^20 floats on the odd rank, 2^16 elsewhere
//   empty        all_reduce of an empty span on the odd rank, 4 elements elsewhere
//   type         all_reduce of 4 floats on the odd rank, 4 ints elsewhere
//   op           all_reduce with op::max on the odd rank, op::sum elsewhere
//   bcast_root   broadcast from root 1 on the odd rank, root 0 elsewhere
//   reduce_root  reduce to root 1 on the odd rank, root 0 elsewhere
//   gather_count all_gather of 2 elements per rank on the odd rank, 3 elsewhere
//   operation    broadcast on the odd rank, all_reduce (same count) elsewhere
//   equal        check mode with equal arguments everywhere: every collective (all_reduce,
//                reduce, broadcast, all_gather, reduce_scatter, all_to_all, barrier, shift)
//                on every dim gives the right values
//   equal_p2p    check mode: a pipeline of send_next / recv_prev (point to point, each
//                matching the neighbour's opposite call) still works
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "common.hpp"

namespace contract_checks_test {  // one per file: a unity TU holds several files (devmesh_test_program)

using C = dm::mpi::communicator;
using m2 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;

namespace {

int me = 0;

struct kind {
  const char* name;
  const char* word;          // what differs
  const char* normal_call;   // the collective the normal ranks call
  const char* odd_call;      // the collective the odd rank calls
};

const kind kinds[] = {
    {"count", "count", "all_reduce", "all_reduce"},         {"big", "count", "all_reduce", "all_reduce"},
    {"empty", "count", "all_reduce", "all_reduce"},         {"type", "type", "all_reduce", "all_reduce"},
    {"op", "op", "all_reduce", "all_reduce"},               {"bcast_root", "root", "broadcast", "broadcast"},
    {"reduce_root", "root", "reduce", "reduce"},            {"gather_count", "count", "all_gather", "all_gather"},
    {"operation", "operation", "all_reduce", "broadcast"},
};

/// The normal rank's call on dim N; returns an empty string if the result is right.
template <dm::fixed_string N, class M>
std::string normal(const M& m, const std::string& k) {
  const auto g = dm::group<N>(m.layout(), me);
  const int idx = g.index_of(me);
  auto sum_of = [&](auto f) {
    long s = 0;
    for (int r : g) s += f(r);
    return s;
  };
  auto wrong = [](const std::string& what, long got, long expected) {
    return what + ": got " + std::to_string(got) + ", expected " + std::to_string(expected);
  };
  if (k == "count" || k == "empty" || k == "op" || k == "operation") {
    const std::size_t n = k == "count" ? 8 : 4;
    std::vector<int> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = me * 100 + static_cast<int>(i);
    dm::all_reduce<N>(m, std::span(v), dm::op::sum);
    for (std::size_t i = 0; i < n; ++i) {
      const long e = sum_of([&](int r) { return r * 100L + static_cast<long>(i); });
      if (v[i] != e) return wrong("all_reduce element " + std::to_string(i), v[i], e);
    }
  } else if (k == "big") {
    std::vector<float> v(std::size_t{1} << 16);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(me + static_cast<int>(i % 7));
    dm::all_reduce<N>(m, std::span(v), dm::op::sum);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const long e = sum_of([&](int r) { return r + static_cast<long>(i % 7); });
      if (v[i] != static_cast<float>(e)) return wrong("all_reduce(2^16 floats) element " + std::to_string(i), static_cast<long>(v[i]), e);
    }
  } else if (k == "type") {
    std::vector<int> v{me, me + 1, me + 2, me + 3};
    dm::all_reduce<N>(m, std::span(v), dm::op::sum);
    for (int i = 0; i < 4; ++i) {
      const long e = sum_of([&](int r) { return static_cast<long>(r + i); });
      if (v[static_cast<std::size_t>(i)] != e) return wrong("all_reduce(int) element " + std::to_string(i), v[static_cast<std::size_t>(i)], e);
    }
  } else if (k == "bcast_root") {
    std::vector<int> v(4, -1);
    if (idx == 0) v = {g[0] * 10, g[0] * 10 + 1, g[0] * 10 + 2, g[0] * 10 + 3};
    dm::broadcast<N>(m, std::span(v), 0);
    for (int i = 0; i < 4; ++i)
      if (v[static_cast<std::size_t>(i)] != g[0] * 10 + i) return wrong("broadcast element " + std::to_string(i), v[static_cast<std::size_t>(i)], g[0] * 10 + i);
  } else if (k == "reduce_root") {
    std::vector<int> v{me + 1, 2 * me};
    dm::reduce<N>(m, std::span(v), dm::op::sum, 0);
    if (idx == 0) {
      const long e0 = sum_of([](int r) { return r + 1L; }), e1 = sum_of([](int r) { return 2L * r; });
      if (v[0] != e0) return wrong("reduce element 0 on the root", v[0], e0);
      if (v[1] != e1) return wrong("reduce element 1 on the root", v[1], e1);
    }
  } else if (k == "gather_count") {
    const std::vector<int> mine{me * 10, me * 10 + 1, me * 10 + 2};
    std::vector<int> all(3 * static_cast<std::size_t>(g.size()), -1);
    dm::all_gather<N>(m, std::span<const int>(mine), std::span(all));
    for (int j = 0; j < g.size(); ++j)
      for (int i = 0; i < 3; ++i)
        if (all[static_cast<std::size_t>(3 * j + i)] != g[j] * 10 + i)
          return wrong("all_gather element " + std::to_string(3 * j + i), all[static_cast<std::size_t>(3 * j + i)], g[j] * 10 + i);
  }
  return {};
}

/// The odd rank's call on dim N (its result is not checked: it must throw).
template <dm::fixed_string N, class M>
void odd(const M& m, const std::string& k) {
  const auto g = dm::group<N>(m.layout(), me);
  if (k == "count") {
    std::vector<int> v(4, me);
    dm::all_reduce<N>(m, std::span(v), dm::op::sum);
  } else if (k == "big") {
    std::vector<float> v(std::size_t{1} << 20, 1.f);
    dm::all_reduce<N>(m, std::span(v), dm::op::sum);
  } else if (k == "empty") {
    std::vector<int> v;
    dm::all_reduce<N>(m, std::span(v), dm::op::sum);
  } else if (k == "type") {
    std::vector<float> v{1.f, 2.f, 3.f, 4.f};
    dm::all_reduce<N>(m, std::span(v), dm::op::sum);
  } else if (k == "op") {
    std::vector<int> v{me, me + 1, me + 2, me + 3};
    dm::all_reduce<N>(m, std::span(v), dm::op::max);
  } else if (k == "bcast_root") {
    std::vector<int> v(4, me);
    dm::broadcast<N>(m, std::span(v), 1);
  } else if (k == "reduce_root") {
    std::vector<int> v{me + 1, 2 * me};
    dm::reduce<N>(m, std::span(v), dm::op::sum, 1);
  } else if (k == "gather_count") {
    const std::vector<int> mine{me * 10, me * 10 + 1};
    std::vector<int> all(2 * static_cast<std::size_t>(g.size()), -1);
    dm::all_gather<N>(m, std::span<const int>(mine), std::span(all));
  } else if (k == "operation") {
    std::vector<int> v(4, me);
    dm::broadcast<N>(m, std::span(v), 0);
  }
}

/// all_reduce(sum) on dim N; returns an empty string if right.
template <dm::fixed_string N, class M>
std::string sum_ok(const M& m, int salt) {
  const auto g = dm::group<N>(m.layout(), me);
  std::vector<long> v{me + salt, 3L * me - salt, 7};
  dm::all_reduce<N>(m, std::span(v), dm::op::sum);
  long e0 = 0, e1 = 0;
  for (int r : g) e0 += r + salt, e1 += 3L * r - salt;
  if (v[0] == e0 && v[1] == e1 && v[2] == 7L * g.size()) return {};
  return "all_reduce on '" + std::string(N.view()) + "' after the mismatch: got " + std::to_string(v[0]) + "," +
         std::to_string(v[1]) + "," + std::to_string(v[2]) + ", expected " + std::to_string(e0) + "," +
         std::to_string(e1) + "," + std::to_string(7L * g.size());
}

template <class M>
void still_usable(const M& all, int salt) {
  for (int round = 0; round < 3; ++round) {
    const auto t = contract::catch_all([&] {
      for (const std::string& w : {sum_ok<"all">(all, salt + round), sum_ok<"tp">(all, salt + 10 + round),
                                   sum_ok<"dp">(all, salt + 20 + round)})
        CHECK_MESSAGE(w.empty(), w);
    });
    CHECK_MESSAGE(!t.any, ("a correct all_reduce after the mismatch threw " + t.type + ": " + t.what));
  }
}

/// One mismatch of kind k on dim N, with world rank `odd_rank` calling the odd version.
template <dm::fixed_string N, class M>
void mismatch(const M& all, const kind& k, int odd_rank) {
  const auto g = dm::group<N>(all.layout(), me);
  const bool in_odd_group = g.contains(odd_rank);
  const std::string where = std::string(k.name) + " on '" + std::string(N.view()) + "' (odd: world rank " +
                            std::to_string(odd_rank) + ")";
  std::string result;
  MPI_Barrier(MPI_COMM_WORLD);  // the mismatch starts together (no rank still in the last one)
  const auto t = contract::catch_all([&] {
    if (me == odd_rank)
      odd<N>(all, k.name);
    else
      result = normal<N>(all, k.name);
  });
  if (in_odd_group) {
    const char* mine = me == odd_rank ? k.odd_call : k.normal_call;
    EXPECT_MESH_ERROR(t, where, "devmesh: ", mine, "disagree");
    CHECK_MESSAGE((!t.mesh_error || contract::has_word(t.what, k.word)),
                  (where + ": the message does not name '" + k.word + "': " + t.what));
    if (me == odd_rank || me == 0) contract::show(where, t.what);
  } else {
    CHECK_MESSAGE(!t.any, (where + ": a rank of the agreeing group threw " + t.type + ": " + t.what));
    if (!t.any) CHECK_MESSAGE(result.empty(), (where + ": a rank of the agreeing group got a wrong result: " + result));
  }
  still_usable(all, odd_rank * 100);
}

template <class M>
void equal(const M& all) {
  auto run = [&]<dm::fixed_string N>() {
    const auto g = dm::group<N>(all.layout(), me);
    const int n = g.size(), idx = g.index_of(me);
    const std::string dim(N.view());
    auto expect = [&](bool ok, const std::string& what) {
      CHECK_MESSAGE(ok, ("check mode, equal arguments, " + what + " on '" + dim + "' is wrong"));
    };
    // all_reduce, in place and out of place, several types and ops.
    std::vector<int> v{me, 1};
    dm::all_reduce<N>(all, std::span(v), dm::op::sum);
    int s = 0;
    for (int r : g) s += r;
    expect(v[0] == s && v[1] == n, "all_reduce(int, sum)");
    std::vector<double> d{static_cast<double>(me)}, dout(1);
    dm::all_reduce<N>(all, std::span<const double>(d), std::span(dout), dm::op::max);
    expect(dout[0] == g[n - 1], "all_reduce(double, max, out of place)");
    std::vector<float> big(std::size_t{1} << 20, 1.f);
    dm::all_reduce<N>(all, std::span(big), dm::op::sum);
    expect(big.front() == static_cast<float>(n) && big.back() == static_cast<float>(n), "all_reduce(2^20 floats)");
    // reduce to every root in turn.
    for (int root = 0; root < n; ++root) {
      std::vector<long> r{me + 1L};
      dm::reduce<N>(all, std::span(r), dm::op::sum, root);
      if (idx == root) expect(r[0] == s + n, "reduce to root " + std::to_string(root));
    }
    // broadcast from every root.
    for (int root = 0; root < n; ++root) {
      std::vector<int> b(5, idx == root ? g[root] * 3 : -1);
      dm::broadcast<N>(all, std::span(b), root);
      expect(b[0] == g[root] * 3 && b[4] == g[root] * 3, "broadcast from root " + std::to_string(root));
    }
    // all_gather.
    const std::vector<int> mine{me, -me};
    std::vector<int> gathered(2 * static_cast<std::size_t>(n));
    dm::all_gather<N>(all, std::span<const int>(mine), std::span(gathered));
    bool ok = true;
    for (int j = 0; j < n; ++j) ok = ok && gathered[2 * static_cast<std::size_t>(j)] == g[j] && gathered[2 * static_cast<std::size_t>(j) + 1] == -g[j];
    expect(ok, "all_gather");
    // reduce_scatter: block j of every rank's send is (rank + j); I get the sum of block idx.
    std::vector<int> send(static_cast<std::size_t>(n)), got(1);
    for (int j = 0; j < n; ++j) send[static_cast<std::size_t>(j)] = me + j;
    dm::reduce_scatter<N>(all, std::span<const int>(send), std::span(got), dm::op::sum);
    expect(got[0] == s + n * idx, "reduce_scatter");
    // all_to_all: block j of my send goes to local rank j: (me * 100 + j).
    std::vector<int> a2a(static_cast<std::size_t>(n)), recv(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) a2a[static_cast<std::size_t>(j)] = me * 100 + j;
    dm::all_to_all<N>(all, std::span<const int>(a2a), std::span(recv));
    ok = true;
    for (int j = 0; j < n; ++j) ok = ok && recv[static_cast<std::size_t>(j)] == g[j] * 100 + idx;
    expect(ok, "all_to_all");
    dm::barrier<N>(all);
    // shift, periodic: from local rank idx - 1.
    const std::vector<int> out{me * 7};
    std::vector<int> in{-1};
    dm::shift<N>(all, std::span<const int>(out), std::span(in), 1, true);
    expect(in[0] == g[(idx - 1 + n) % n] * 7, "shift");
    // shift, not periodic: the first rank receives nothing.
    std::vector<int> in2{-1};
    dm::shift<N>(all, std::span<const int>(out), std::span(in2), 1, false);
    expect(in2[0] == (idx == 0 ? -1 : g[idx - 1] * 7), "shift (not periodic)");
  };
  run.template operator()<"all">();
  run.template operator()<"tp">();
  run.template operator()<"dp">();
  if (me == 0) std::printf("check mode: every collective right with equal arguments on all, tp and dp\n");
}

template <class M>
void equal_p2p(const M& all) {
  // A forward pass over the pipeline "all": stage i receives from i - 1, adds, sends to i + 1.
  const auto g = dm::group<"all">(all.layout(), me);
  const int idx = g.index_of(me), n = g.size();
  for (int round = 0; round < 3; ++round) {
    std::vector<int> act{0};
    if (idx > 0) dm::recv_prev<"all">(all, std::span(act));
    act[0] += me + round;
    if (idx < n - 1) dm::send_next<"all">(all, std::span(act));
    int e = 0;
    for (int j = 0; j <= idx; ++j) e += g[j] + round;
    CHECK_MESSAGE(act[0] == e, ("pipeline stage " + std::to_string(idx) + " round " + std::to_string(round) + ": " +
                                std::to_string(act[0]) + ", expected " + std::to_string(e)));
  }
  still_usable(all, 5);
}

/// What every scenario runs on: 4 ranks under DEVMESH_CHECK_COLLECTIVES=1, the mesh (dp=2,
/// tp=2) and its alias "all" (the whole world).
auto checked_all() {
  me = test::world_rank();
  contract::require_ranks(4);
  const char* env_check = std::getenv("DEVMESH_CHECK_COLLECTIVES");
  REQUIRE_MESSAGE((env_check && std::string(env_check) == "1"), "run with DEVMESH_CHECK_COLLECTIVES=1 (mpirun -x)");
  auto mesh = dm::init_device_mesh(dm::mpi::world(), m2(2, 2));
  return mesh.flatten<"all">();
}

/// The mismatch of kind `name`, on "all" (odd: world rank 2), then on "tp" (odd: world rank 1).
void mismatches(const std::string& name) {
  const auto all = checked_all();
  for (const kind& k : kinds)
    if (name == k.name) {
      mismatch<"all">(all, k, 2);
      mismatch<"tp">(all, k, 1);
      return;
    }
  FAIL("no mismatch kind '" << name << "'");
}

}  // namespace

TEST_CASE("count") { mismatches("count"); }
TEST_CASE("big") { mismatches("big"); }
TEST_CASE("empty") { mismatches("empty"); }
TEST_CASE("type") { mismatches("type"); }
TEST_CASE("op") { mismatches("op"); }
TEST_CASE("bcast_root") { mismatches("bcast_root"); }
TEST_CASE("reduce_root") { mismatches("reduce_root"); }
TEST_CASE("gather_count") { mismatches("gather_count"); }
TEST_CASE("operation") { mismatches("operation"); }
TEST_CASE("equal") { equal(checked_all()); }
TEST_CASE("equal_p2p") { equal_p2p(checked_all()); }
}  // namespace contract_checks_test
