// tests/contract/nccl_contract.cpp (issue 9, "over the NCCL test double where the path
// exists"): the runtime contract with dm::device_mesh over dm::nccl::world(dm::mpi::world())
// on the link-time double of tests/nccl/double (NCCL over MPI, "device" memory is host memory,
// so every collective is checked numerically with host vectors). 4 ranks. Each scenario is one
// ctest test, contract.nccl.<scenario> (tests/contract/CMakeLists.txt).
//
//   distinct        (dp=1, cp=2, tp=2): the alias dp_cp (the groups of cp) has its own
//                   ncclComm_t; size-1 dims, a dim spanning the world (flatten of all dims, a 1-D
//                   mesh) and two meshes over one world: no two dims share an ncclComm_t, none is
//                   the world's native(); per_dim["tp"].name (and an alias's, a size-1 dim's)
//                   reaches opts().name and the commName NCCL saw; every dim's values right
//   distinct_lazy   the same in lazy mode (first uses in the same order everywhere)
//   share           options.share_equal_groups: equal groups with equal options share one
//                   ncclComm_t (alias and dim, two size-1 dims); other options or names do not;
//                   never the world
//   check_<kind>    DEVMESH_CHECK_COLLECTIVES=1: one rank calls a different collective (count,
//                   op, bcast_root, reduce_root, type): every rank of the group throws mesh_error
//                   ("disagree" and the word naming what differs), first on the alias "all"
//                   (odd: world rank 2), then on "tp" (odd: world rank 1; the other tp group
//                   agrees and gets right values); afterwards sums on all, tp and dp are right
//   check_equal     DEVMESH_CHECK_COLLECTIVES=1, equal arguments: every collective (all_reduce,
//                   reduce, broadcast, all_gather, reduce_scatter, all_to_all, barrier, shift,
//                   send_next/recv_prev) on all, tp and dp gives the right values
//   check_option    options.check_collectives = true (no environment): a count mismatch on tp
//                   throws on both ranks of the odd group; values right afterwards
//   deadline_flatten  DEVMESH_TIMEOUT=3: rank 3 skips an eager flatten: ranks 0-2 throw
//                   mesh_error ("flatten", "timed out"); every rank meets at MPI_Barrier and ends
//                   normally (no communicator or device allocation left)
//   deadline_option options.timeout = 2 s, the same
//   shift_aliased   shift(buf, buf) on all and tp, 4 ints and 1 MiB, periodic or not,
//                   displacement 1 and 2: the neighbour's data; and ncclSend never reads the
//                   receive buffer (ncclSend/ncclRecv are wrapped with -Wl,--wrap: a real NCCL
//                   reads the send buffer while the receive lands)
//   shift_overlap   send and receive overlapping by 3 elements (either direction): the
//                   neighbour's data in recv, the rest of the buffer untouched, ncclSend reads
//                   no byte of recv
//   avg             op::avg on int, long, unsigned (all_reduce, reduce, reduce_scatter) throws
//                   comm_error "op::avg on an integer type" on every rank before any NCCL call
//                   (the last call the double saw is unchanged, and the ranks stay in step);
//                   on float and double it averages
//
//   deadline_other_mesh  DEVMESH_TIMEOUT=3: meshes A and B over one NCCL world; rank 3 skips
//                   A.flatten, ranks 0-2 time out; then every rank flattens B, which works:
//                   each mesh's control steps have a private copy of the host channel.
//   all_reduce_overlap   all_reduce with recv = send + 1 element (partially overlapping):
//                   NCCL is given a copy of send, and the result is right.
//
// Each scenario is the test case of that name (--test-case=<scenario>). The world is made
// inside run() and dies before its last checks (every handle gone, the double's counters must
// be back to zero); the double fails the process at exit on a leak.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../nccl/common.hpp"
#include "common.hpp"

using C = dm::nccl::communicator;
using O = dm::device_mesh_options<C>;
using m2 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;
using m3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;
using line = dm::mesh<dm::dim<"x">>;

// ---- what the backend hands to NCCL (-Wl,--wrap=ncclSend,--wrap=ncclRecv,--wrap=ncclAllReduce)
namespace {

struct range {
  std::uintptr_t begin = 0, end = 0;
  bool overlaps(const range& o) const { return begin < o.end && o.begin < end; }
};
struct p2p_log {
  bool on = false;
  std::vector<range> sends, recvs;
  void start() {
    on = true;
    sends.clear();
    recvs.clear();
  }
};
p2p_log p2p;
struct reduce_log {
  bool on = false;
  std::vector<std::pair<range, range>> calls;  // (send, recv) of each ncclAllReduce
};
reduce_log reductions;

std::size_t bytes_of(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    default: return 8;
  }
}
range range_of(const void* p, std::size_t count, ncclDataType_t t) {
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  return {b, b + count * bytes_of(t)};
}

}  // namespace

extern "C" {
ncclResult_t __real_ncclSend(const void* send, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                             cudaStream_t s);
ncclResult_t __real_ncclRecv(void* recv, size_t count, ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t s);
ncclResult_t __real_ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                  ncclComm_t comm, cudaStream_t s);

ncclResult_t __wrap_ncclSend(const void* send, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                             cudaStream_t s) {
  if (p2p.on) p2p.sends.push_back(range_of(send, count, t));
  return __real_ncclSend(send, count, t, peer, comm, s);
}
ncclResult_t __wrap_ncclRecv(void* recv, size_t count, ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t s) {
  if (p2p.on) p2p.recvs.push_back(range_of(recv, count, t));
  return __real_ncclRecv(recv, count, t, peer, comm, s);
}
ncclResult_t __wrap_ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                  ncclComm_t comm, cudaStream_t s) {
  if (reductions.on) reductions.calls.emplace_back(range_of(send, count, t), range_of(recv, count, t));
  return __real_ncclAllReduce(send, recv, count, t, op, comm, s);
}
}  // extern "C"

namespace {

int me = 0;

// ---- option fields through requires-expressions (the file also builds against headers
// without them, to show which checks fail there); a missing field is a failed check.
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
  CHECK_MESSAGE(present, (std::string("dm::device_mesh_options<dm::nccl::communicator> has no field '") + name +
                          "' (the contract of issue 9)"));
  return present;
}

// ---- what the double knows about a communicator ------------------------------------------
devmesh_fake_comm_info info_of(ncclComm_t c) {
  devmesh_fake_comm_info info{};
  if (!devmesh_fake_nccl_comm_info(c, &info)) info.size = -1;
  return info;
}
/// The world ranks of c's members, in its rank order.
std::vector<int> members(ncclComm_t c) {
  const auto info = info_of(c);
  if (info.size < 0) return {};
  return std::vector<int>(info.world_ranks, info.world_ranks + std::min(info.size, 64));
}
std::string ranks_text(const std::vector<int>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

using named = std::vector<std::pair<std::string, ncclComm_t>>;

void expect_pairwise_distinct(const named& a, const std::string& where, int line) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    test::check_at(a[i].second, __FILE__, line, "a[i].second",
                   where + ": dim '" + a[i].first + "' has no ncclComm_t");
    for (std::size_t j = i + 1; j < a.size(); ++j) {
      test::check_at(a[i].second != a[j].second, __FILE__, line, "a[i].second != a[j].second",
                     where + ": '" + a[i].first + "' and '" + a[j].first + "' are the same ncclComm_t");
    }
  }
}

/// c's members are the layout's group `g` of this rank, in order.
template <class Group>
void expect_members(const C& c, const Group& g, const std::string& what, int line) {
  std::vector<int> want;
  for (int r : g) want.push_back(r);
  const auto got = members(c.native());
  test::check_at(got == want && c.size() == static_cast<int>(want.size()), __FILE__, line,
                 "got == want && c.size() == want.size()",
                 what + ": members " + ranks_text(got) + " (size " + std::to_string(c.size()) + "), expected " +
                     ranks_text(want));
}

/// opts().name of the dim's communicator and the commName the double received.
void expect_name(const C& c, const std::string& expected, const std::string& what, int line) {
  test::check_at(c.opts().name == expected, __FILE__, line, "c.opts().name == expected",
                 what + ": opts().name is '" + c.opts().name + "', expected '" + expected + "'");
  const std::string seen = info_of(c.native()).comm_name;
  test::check_at(seen == expected, __FILE__, line, "seen == expected",
                 what + ": NCCL saw commName '" + seen + "', expected '" + expected + "'");
}

/// all_reduce(sum) of longs on dim N of m, against the layout's group.
template <dm::fixed_string N, class M>
void expect_sum(const M& m, long salt, int line) {
  const auto g = dm::group<N>(m.layout(), me);
  std::vector<long> v{me + 1 + salt, 2L * (me + 1) + salt, 7};
  dm::all_reduce<N>(m, std::span(v), dm::op::sum);
  long e0 = 0, e1 = 0;
  for (int r : g) e0 += r + 1 + salt, e1 += 2L * (r + 1) + salt;
  test::check_at(v[0] == e0 && v[1] == e1 && v[2] == 7L * g.size(), __FILE__, line, "expect_sum",
                 "all_reduce on '" + std::string(N.view()) + "': got " + std::to_string(v[0]) + "," +
                     std::to_string(v[1]) + "," + std::to_string(v[2]) + ", expected " + std::to_string(e0) + "," +
                     std::to_string(e1) + "," + std::to_string(7L * g.size()));
}

// ---- 1. distinct communicators, names ------------------------------------------------------
void distinct(const C& world, bool lazy) {
  O o;
  o.lazy = lazy;
  o.per_dim["tp"].name = "my_tp";
  o.per_dim["dp_cp"].name = "my_dp_cp";  // an alias
  o.per_dim["b"].name = "my_b";          // a size-1 dim
  const std::string mode = lazy ? "lazy: " : "eager: ";
  const ncclComm_t w = world.native();

  // (dp=1, cp=2, tp=2): dp_cp has exactly the groups of cp.
  auto mesh = dm::init_device_mesh(world, m3(1, 2, 2), o);
  auto f = mesh.flatten<"dp_cp", "dp", "cp">();
  auto all = mesh.flatten<"all">();  // spans the world, in world order
  const C &dp = mesh.comm<"dp">(), &cp = mesh.comm<"cp">(), &tp = mesh.comm<"tp">();
  const C &dp_cp = f.comm<"dp_cp">(), &whole = all.comm<"all">();
  const named first{{"dp", dp.native()},       {"cp", cp.native()},       {"tp", tp.native()},
                    {"dp_cp", dp_cp.native()}, {"all", whole.native()}, {"the world", w}};
  expect_pairwise_distinct(first, mode + "(dp=1, cp=2, tp=2) + dp_cp + all", __LINE__);
  expect_members(dp_cp, mesh.layout().group<"cp">(me), mode + "dp_cp (the groups of cp)", __LINE__);
  expect_members(cp, mesh.layout().group<"cp">(me), mode + "cp", __LINE__);
  expect_members(whole, all.layout().group<"all">(me), mode + "all (the world's ranks)", __LINE__);
  CHECK_EQ(dp.size(), 1);
  CHECK_EQ(whole.size(), 4);
  expect_name(dp, "mesh:dp", mode + "dim dp", __LINE__);
  expect_name(cp, "mesh:cp", mode + "dim cp", __LINE__);
  expect_name(tp, "my_tp", mode + "dim tp (per_dim name)", __LINE__);
  expect_name(dp_cp, "my_dp_cp", mode + "alias dp_cp (per_dim name)", __LINE__);
  expect_name(whole, "mesh:all", mode + "alias all", __LINE__);
  expect_sum<"dp">(mesh, 0, __LINE__);
  expect_sum<"cp">(mesh, 10, __LINE__);
  expect_sum<"tp">(mesh, 20, __LINE__);
  expect_sum<"dp_cp">(f, 30, __LINE__);
  expect_sum<"all">(all, 40, __LINE__);

  // Two size-1 dims and one spanning the world: each its own communicator, with its own name.
  using ones = dm::mesh<dm::dim<"a">, dm::dim<"b">, dm::dim<"c">>;
  auto o1 = dm::init_device_mesh(world, ones(1, 1, 4), o);
  const C &a = o1.comm<"a">(), &b = o1.comm<"b">(), &c = o1.comm<"c">();
  expect_pairwise_distinct({{"a", a.native()}, {"b", b.native()}, {"c", c.native()}, {"the world", w}},
                           mode + "(a=1, b=1, c=4)", __LINE__);
  CHECK_EQ(a.size(), 1);
  CHECK_EQ(b.size(), 1);
  expect_members(a, std::vector<int>{me}, mode + "size-1 dim a", __LINE__);
  expect_members(c, o1.layout().group<"c">(me), mode + "dim c spanning the world", __LINE__);
  expect_name(a, "mesh:a", mode + "size-1 dim a", __LINE__);
  expect_name(b, "my_b", mode + "size-1 dim b (per_dim name)", __LINE__);
  expect_sum<"a">(o1, 1, __LINE__);
  expect_sum<"b">(o1, 2, __LINE__);
  expect_sum<"c">(o1, 3, __LINE__);

  // A 1-D mesh over the world: a communicator of its own, never the world.
  auto l1 = dm::init_device_mesh<line>(world, o);
  expect_pairwise_distinct({{"x", l1.comm().native()}, {"the world", w}, {"c", c.native()}, {"all", whole.native()}},
                           mode + "1-D mesh over the world", __LINE__);
  expect_members(l1.comm(), l1.layout().group<"x">(me), mode + "1-D mesh", __LINE__);
  expect_sum<"x">(l1, 5, __LINE__);

  // Two meshes over the same world: nothing in common.
  auto again = dm::init_device_mesh(world, m3(1, 2, 2), o);
  auto f2 = again.flatten<"dp_cp", "dp", "cp">();
  auto all2 = again.flatten<"all">();
  const named second{{"dp", again.comm<"dp">().native()},
                     {"cp", again.comm<"cp">().native()},
                     {"tp", again.comm<"tp">().native()},
                     {"dp_cp", f2.comm<"dp_cp">().native()},
                     {"all", all2.comm<"all">().native()}};
  for (const auto& one : first)  // not structured bindings: doctest's macros capture them in lambdas (clang 14)
    for (const auto& two : second)
      CHECK_MESSAGE(one.second != two.second,
                    (mode + "two meshes over one world: first's '" + one.first + "' is second's '" + two.first + "'"));
  expect_sum<"cp">(again, 7, __LINE__);
  expect_sum<"dp_cp">(f2, 8, __LINE__);
  expect_sum<"all">(all2, 9, __LINE__);

  // The world itself is untouched and still works (its own all_reduce, on device = host memory).
  CHECK_MESSAGE(world.native() == w, (mode + "the world's ncclComm_t changed"));
  std::vector<int> wv{me + 1};
  world.all_reduce(wv.data(), wv.data(), 1, dm::op::sum, nullptr);
  CHECK_EQ(wv[0], 10);
  if (me == 0) std::printf("%sdistinct: every dim its own ncclComm_t, names as set\n", mode.c_str());
}

// ---- 1b. opt-in sharing ----------------------------------------------------------------------
void share(const C& world) {
  O o;
  if (!field(set_share(o, true), "share_equal_groups")) return;
  const ncclComm_t w = world.native();
  auto expect_same = [](ncclComm_t x, ncclComm_t y, bool same, const std::string& what, int line) {
    test::check_at((x == y) == same, __FILE__, line, "(x == y) == same",
                   what + (same ? ": not shared" : ": shared"));
  };
  auto mesh = dm::init_device_mesh(world, m3(1, 2, 2), o);
  auto f = mesh.flatten<"dp_cp", "dp", "cp">();
  expect_same(f.comm<"dp_cp">().native(), mesh.comm<"cp">().native(), true, "dp_cp vs cp, equal options", __LINE__);
  auto all = mesh.flatten<"all">();
  expect_same(all.comm<"all">().native(), w, false, "flatten of all dims vs the world", __LINE__);
  auto l = dm::init_device_mesh<line>(world, o);
  expect_same(l.comm().native(), w, false, "1-D mesh vs the world", __LINE__);
  expect_sum<"dp_cp">(f, 1, __LINE__);
  expect_sum<"cp">(mesh, 2, __LINE__);
  expect_sum<"all">(all, 3, __LINE__);
  expect_sum<"x">(l, 4, __LINE__);

  using ones = dm::mesh<dm::dim<"a">, dm::dim<"b">, dm::dim<"c">, dm::dim<"d">>;
  O o2 = o;
  o2.per_dim["c"].min_ctas = 2;   // other options
  o2.per_dim["d"].name = "my_d";  // another name
  auto ab = dm::init_device_mesh(world, ones(1, 1, 1, 4), o2);
  const C &a = ab.comm<"a">(), &b = ab.comm<"b">(), &c = ab.comm<"c">(), &d = ab.comm<"d">();
  expect_same(a.native(), b.native(), true, "size-1 dims a and b, equal options", __LINE__);
  expect_same(a.native(), c.native(), false, "size-1 dims a and c, c with min_ctas", __LINE__);
  expect_same(d.native(), w, false, "dim d spanning the world vs the world", __LINE__);
  CHECK_EQ(info_of(c.native()).min_ctas, 2);
  expect_name(d, "my_d", "dim d (per_dim name)", __LINE__);
  auto fd = ab.flatten<"a_d", "a", "d">();  // the groups of d, default options: not d's
  expect_same(fd.comm<"a_d">().native(), d.native(), false, "a_d (default options) vs d (named my_d)", __LINE__);
  expect_members(fd.comm<"a_d">(), ab.layout().group<"d">(me), "a_d", __LINE__);
  expect_sum<"a">(ab, 5, __LINE__);
  expect_sum<"c">(ab, 6, __LINE__);
  expect_sum<"d">(ab, 7, __LINE__);
  expect_sum<"a_d">(fd, 8, __LINE__);
  if (me == 0) std::printf("share: equal groups with equal options shared, never the world\n");
}

// ---- 2. the collective check mode over NCCL (host channels of split children) ---------------
struct kind {
  const char* name;
  const char* word;         // what differs
  const char* normal_call;  // the collective the normal ranks call
  const char* odd_call;     // the collective the odd rank calls
};
const kind kinds[] = {
    {"count", "count", "all_reduce", "all_reduce"},     {"op", "op", "all_reduce", "all_reduce"},
    {"bcast_root", "root", "broadcast", "broadcast"},   {"reduce_root", "root", "reduce", "reduce"},
    {"type", "type", "all_reduce", "all_reduce"},
};

/// The normal ranks' call on dim N; an empty string if the result is right.
template <dm::fixed_string N, class M>
std::string normal(const M& m, const std::string& k) {
  const auto g = dm::group<N>(m.layout(), me);
  const int idx = g.index_of(me);
  auto wrong = [](const std::string& what, long got, long expected) {
    return what + ": got " + std::to_string(got) + ", expected " + std::to_string(expected);
  };
  if (k == "count" || k == "op" || k == "type") {
    const std::size_t n = k == "count" ? 8 : 4;
    std::vector<int> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = me * 100 + static_cast<int>(i);
    dm::all_reduce<N>(m, std::span(v), dm::op::sum);
    for (std::size_t i = 0; i < n; ++i) {
      long e = 0;
      for (int r : g) e += r * 100L + static_cast<long>(i);
      if (v[i] != e) return wrong("all_reduce element " + std::to_string(i), v[i], e);
    }
  } else if (k == "bcast_root") {
    std::vector<int> v(4, -1);
    if (idx == 0) v = {g[0] * 10, g[0] * 10 + 1, g[0] * 10 + 2, g[0] * 10 + 3};
    dm::broadcast<N>(m, std::span(v), 0);
    for (int i = 0; i < 4; ++i)
      if (v[static_cast<std::size_t>(i)] != g[0] * 10 + i)
        return wrong("broadcast element " + std::to_string(i), v[static_cast<std::size_t>(i)], g[0] * 10 + i);
  } else if (k == "reduce_root") {
    std::vector<int> v{me + 1, 2 * me};
    dm::reduce<N>(m, std::span(v), dm::op::sum, 0);
    if (idx == 0) {
      long e0 = 0, e1 = 0;
      for (int r : g) e0 += r + 1, e1 += 2L * r;
      if (v[0] != e0) return wrong("reduce element 0 on the root", v[0], e0);
      if (v[1] != e1) return wrong("reduce element 1 on the root", v[1], e1);
    }
  }
  return {};
}

/// The odd rank's call on dim N (it must throw).
template <dm::fixed_string N, class M>
void odd(const M& m, const std::string& k) {
  if (k == "count") {
    std::vector<int> v(4, me);
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
  } else if (k == "type") {
    std::vector<float> v{1.f, 2.f, 3.f, 4.f};
    dm::all_reduce<N>(m, std::span(v), dm::op::sum);
  }
}

template <class M>
void still_usable(const M& all, int salt) {
  const auto t = contract::catch_all([&] {
    for (int round = 0; round < 3; ++round) {
      expect_sum<"all">(all, salt + round, __LINE__);
      expect_sum<"tp">(all, salt + 10 + round, __LINE__);
      expect_sum<"dp">(all, salt + 20 + round, __LINE__);
    }
  });
  CHECK_MESSAGE(!t.any, ("a correct all_reduce after the mismatch threw " + t.type + ": " + t.what));
}

/// One mismatch of kind k on dim N, with world rank `odd_rank` calling the odd version.
template <dm::fixed_string N, class M>
void mismatch(const M& all, const kind& k, int odd_rank) {
  const auto g = dm::group<N>(all.layout(), me);
  const bool in_odd_group = g.contains(odd_rank);
  const std::string where = std::string(k.name) + " on '" + std::string(N.view()) + "' (odd: world rank " +
                            std::to_string(odd_rank) + ")";
  std::string result;
  MPI_Barrier(MPI_COMM_WORLD);
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
    int s = 0;
    for (int r : g) s += r;
    std::vector<int> v{me, 1};
    dm::all_reduce<N>(all, std::span(v), dm::op::sum);
    expect(v[0] == s && v[1] == n, "all_reduce(int, sum, in place)");
    std::vector<double> d{static_cast<double>(me)}, dout(1);
    dm::all_reduce<N>(all, std::span<const double>(d), std::span(dout), dm::op::max);
    expect(dout[0] == g[n - 1], "all_reduce(double, max, out of place)");
    std::vector<float> fa{static_cast<float>(me)};
    dm::all_reduce<N>(all, std::span(fa), dm::op::avg);
    expect(fa[0] == static_cast<float>(s) / static_cast<float>(n), "all_reduce(float, avg)");
    std::vector<float> big(std::size_t{1} << 16, 1.f);
    dm::all_reduce<N>(all, std::span(big), dm::op::sum);
    expect(big.front() == static_cast<float>(n) && big.back() == static_cast<float>(n), "all_reduce(2^16 floats)");
    for (int root = 0; root < n; ++root) {
      std::vector<long> r{me + 1L};
      dm::reduce<N>(all, std::span(r), dm::op::sum, root);
      if (idx == root) expect(r[0] == s + n, "reduce to root " + std::to_string(root));
    }
    for (int root = 0; root < n; ++root) {
      std::vector<int> b(5, idx == root ? g[root] * 3 : -1);
      dm::broadcast<N>(all, std::span(b), root);
      expect(b[0] == g[root] * 3 && b[4] == g[root] * 3, "broadcast from root " + std::to_string(root));
    }
    const std::vector<int> mine{me, -me};
    std::vector<int> gathered(2 * static_cast<std::size_t>(n));
    dm::all_gather<N>(all, std::span<const int>(mine), std::span(gathered));
    bool ok = true;
    for (int j = 0; j < n; ++j)
      ok = ok && gathered[2 * static_cast<std::size_t>(j)] == g[j] && gathered[2 * static_cast<std::size_t>(j) + 1] == -g[j];
    expect(ok, "all_gather");
    std::vector<int> send(static_cast<std::size_t>(n)), got(1);
    for (int j = 0; j < n; ++j) send[static_cast<std::size_t>(j)] = me + j;
    dm::reduce_scatter<N>(all, std::span<const int>(send), std::span(got), dm::op::sum);
    expect(got[0] == s + n * idx, "reduce_scatter");
    std::vector<int> a2a(static_cast<std::size_t>(n)), recv(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) a2a[static_cast<std::size_t>(j)] = me * 100 + j;
    dm::all_to_all<N>(all, std::span<const int>(a2a), std::span(recv));
    ok = true;
    for (int j = 0; j < n; ++j) ok = ok && recv[static_cast<std::size_t>(j)] == g[j] * 100 + idx;
    expect(ok, "all_to_all");
    dm::barrier<N>(all);
    const std::vector<int> out{me * 7};
    std::vector<int> in{-1};
    dm::shift<N>(all, std::span<const int>(out), std::span(in), 1, true);
    expect(in[0] == g[(idx - 1 + n) % n] * 7, "shift (periodic)");
    std::vector<int> in2{-1};
    dm::shift<N>(all, std::span<const int>(out), std::span(in2), 1, false);
    expect(in2[0] == (idx == 0 ? -1 : g[idx - 1] * 7), "shift (not periodic)");
    // A forward pass of a pipeline: not collective, not checked, still right.
    std::vector<int> act{0};
    if (idx > 0) dm::recv_prev<N>(all, std::span(act));
    act[0] += me;
    if (idx < n - 1) dm::send_next<N>(all, std::span(act));
    int e = 0;
    for (int j = 0; j <= idx; ++j) e += g[j];
    expect(act[0] == e, "send_next/recv_prev pipeline");
  };
  run.template operator()<"all">();
  run.template operator()<"tp">();
  run.template operator()<"dp">();
  still_usable(all, 5);
  if (me == 0) std::printf("check mode over NCCL: every collective right with equal arguments on all, tp and dp\n");
}

void checks(const C& world, const std::string& scenario) {
  const char* env_check = std::getenv("DEVMESH_CHECK_COLLECTIVES");
  if (!env_check || std::string(env_check) != "1")
    throw std::invalid_argument("run " + scenario + " with DEVMESH_CHECK_COLLECTIVES=1 (mpirun -x)");
  auto mesh = dm::init_device_mesh(world, m2(2, 2));
  auto all = mesh.flatten<"all">();
  // The dims' communicators are NCCL split children with host channels: the check's
  // all-reduce runs on the host, never through a device buffer.
  for (const C* c : {&all.comm<"all">(), &all.comm<"tp">(), &all.comm<"dp">()})
    CHECK_MESSAGE(c->has_host_channel(), "a dim's communicator has no host channel");
  const std::string k = scenario.substr(std::string("check_").size());
  if (k == "equal") return equal(all);
  for (const kind& x : kinds)
    if (k == x.name) {
      mismatch<"all">(all, x, 2);
      mismatch<"tp">(all, x, 1);
      return;
    }
  throw std::invalid_argument("unknown scenario '" + scenario + "'");
}

void check_option(const C& world) {
  O o;
  if (!field(set_check_collectives(o, true), "check_collectives")) return;
  auto mesh = dm::init_device_mesh(world, m2(2, 2), o);
  const auto g = mesh.layout().group<"tp">(me);
  std::vector<int> v(me == 1 ? 4 : 8, me);
  const auto t = contract::catch_all([&] { mesh.all_reduce<"tp">(std::span(v), dm::op::sum); });
  if (g.contains(1)) {
    EXPECT_MESH_ERROR(t, "all_reduce of 4 elements on rank 1, 8 on rank 0", "devmesh: ", "all_reduce", "disagree",
                      "count");
    if (me <= 1) contract::show("check_option", t.what);
  } else {
    CHECK_MESSAGE(!t.any, ("the agreeing tp group threw " + t.type + ": " + t.what));
    int e = 0;
    for (int r : g) e += r;
    CHECK((v[0] == e && v[7] == e));
  }
  for (int round = 0; round < 3; ++round) {
    expect_sum<"tp">(mesh, round, __LINE__);
    expect_sum<"dp">(mesh, round + 10, __LINE__);
  }
}

// ---- 3. deadlines over NCCL ---------------------------------------------------------------
void deadline_flatten(const C& world, bool option) {
  O o;
  if (option && !field(set_timeout(o, std::chrono::milliseconds(2000)), "timeout")) return;
  if (!option) {
    const char* t = std::getenv("DEVMESH_TIMEOUT");
    if (!t || !*t) throw std::invalid_argument("run deadline_flatten with DEVMESH_TIMEOUT=3 (mpirun -x)");
  }
  auto mesh = dm::init_device_mesh(world, m2(2, 2), o);
  expect_sum<"tp">(mesh, 1, __LINE__);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me != 3) {
    const auto start = std::chrono::steady_clock::now();
    const auto t = contract::catch_all([&] { (void)mesh.flatten<"all">(); });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_MESH_ERROR(t, "flatten without rank 3", "devmesh: ", "flatten", "timed out");
    std::printf("[rank %d] flatten without rank 3: after %.2f s: %s: %s\n", me, s, t.any ? t.type.c_str() : "no exception",
                t.what.c_str());
    std::fflush(stdout);
  }
  // The mesh's dims were made before: they still work on every rank (the time-out is in
  // devmesh's control step, not on the dims' communicators).
  MPI_Barrier(MPI_COMM_WORLD);
  expect_sum<"tp">(mesh, 2, __LINE__);
  expect_sum<"dp">(mesh, 3, __LINE__);
}

/// Not registered (fails on the current headers): another mesh over the same NCCL world after
/// a time-out. On MPI, B's control communicator is its own MPI_Comm_idup and B is unaffected.
void deadline_other_mesh(const C& world) {
  auto a = dm::init_device_mesh(world, m2(2, 2));
  auto b = dm::init_device_mesh(world, m2(1, 4));
  MPI_Barrier(MPI_COMM_WORLD);
  if (me != 3) {
    const auto t = contract::catch_all([&] { (void)a.flatten<"all">(); });
    EXPECT_MESH_ERROR(t, "A.flatten without rank 3", "devmesh: ", "flatten", "timed out");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t = contract::catch_all([&] {
    auto fb = b.flatten<"all">();
    expect_sum<"all">(fb, 4, __LINE__);
  });
  CHECK_MESSAGE(!t.any, ("B.flatten, every rank taking part, after A's time-out threw " + t.type + ": " + t.what));
  contract::show("B.flatten after A's time-out", t.what);
  // Every rank is done with the world's channel before anything is freed (a parked operation
  // on a freed communicator that a late rank then matches crashes OpenMPI's progress engine).
  MPI_Barrier(MPI_COMM_WORLD);
}

// ---- 5. shift with aliased / overlapping device buffers ---------------------------------------
int value(int rank, std::size_t i) { return rank * 1'000'003 + static_cast<int>(i % 1'000'000); }

/// After one shift: ncclSend never read a byte that ncclRecv wrote.
void expect_send_apart(const std::string& what, int line) {
  bool apart = true;
  for (const auto& s : p2p.sends)
    for (const auto& r : p2p.recvs) apart = apart && !s.overlaps(r);
  test::check_at(apart, __FILE__, line, "expect_send_apart",
                 what + ": ncclSend reads the buffer ncclRecv writes (no copy was sent)");
}

template <dm::fixed_string N, class M>
void shift_aliased_on(const M& m) {
  const auto g = dm::group<N>(m.layout(), me);
  const int idx = g.index_of(me), n = g.size();
  for (const std::size_t count : {std::size_t{4}, std::size_t{1} << 18 /* 1 MiB of int */}) {
    for (const bool periodic : {true, false}) {
      for (const int disp : {1, 2}) {
        if (disp >= n) continue;
        std::vector<int> buf(count);
        for (std::size_t i = 0; i < count; ++i) buf[i] = value(me, i);
        const std::string what = "shift<" + std::string(N.view()) + ">(buf, buf) of " + std::to_string(count) +
                                 " ints, displacement " + std::to_string(disp) + (periodic ? ", periodic" : "");
        p2p.start();
        dm::shift<N>(m, std::span<const int>(buf), std::span(buf), disp, periodic);
        p2p.on = false;
        const int src_idx = periodic ? ((idx - disp) % n + n) % n : idx - disp;
        const int src = src_idx >= 0 ? g[src_idx] : me;  // no source: recv left untouched
        std::size_t bad = 0, first = count;
        for (std::size_t i = 0; i < count; ++i)
          if (buf[i] != value(src, i)) bad += 1, first = std::min(first, i);
        CHECK_MESSAGE(!bad, (what + ": " + std::to_string(bad) + " wrong elements, element " + std::to_string(first) +
                             " is " + std::to_string(buf[first]) + " (from rank " +
                             std::to_string(buf[first] / 1'000'003) + "), expected from rank " + std::to_string(src)));
        expect_send_apart(what, __LINE__);
      }
    }
  }
}

void shift_aliased(const C& world) {
  auto mesh = dm::init_device_mesh(world, m2(2, 2));
  auto all = mesh.flatten<"all">();
  shift_aliased_on<"all">(all);
  shift_aliased_on<"tp">(all);
  expect_sum<"all">(all, 0, __LINE__);
  if (me == 0) std::printf("shift(buf, buf) over NCCL: the neighbour's data, sent from a copy\n");
}

void shift_overlap(const C& world) {
  auto mesh = dm::init_device_mesh(world, m2(1, 4));
  const auto g = mesh.layout().group<"tp">(me);
  const int idx = g.index_of(me), n = g.size();
  const int src = g[(idx - 1 + n) % n];
  for (const std::size_t count : {std::size_t{4}, std::size_t{1} << 18}) {
    for (const int offset : {3, -3}) {  // recv starts 3 elements after / before send
      const std::size_t pad = 3;
      std::vector<int> buf(count + pad, -1);
      const std::size_t send_at = offset > 0 ? 0 : pad, recv_at = offset > 0 ? pad : 0;
      for (std::size_t i = 0; i < count; ++i) buf[send_at + i] = value(me, i);
      const std::vector<int> before = buf;
      const std::string what = "shift with send and recv overlapping (" + std::to_string(count) + " ints, recv at " +
                               std::to_string(offset) + ")";
      p2p.start();
      const auto t = contract::catch_all([&] {
        mesh.shift<"tp">(std::span<const int>(buf.data() + send_at, count), std::span(buf.data() + recv_at, count), 1,
                         true);
      });
      p2p.on = false;
      CHECK_MESSAGE(!t.any, (what + ": threw " + t.type + ": " + t.what));
      if (t.any) continue;
      std::size_t bad = 0, first = count;
      for (std::size_t i = 0; i < count; ++i)
        if (buf[recv_at + i] != value(src, i)) bad += 1, first = std::min(first, i);
      CHECK_MESSAGE(!bad, (what + ": " + std::to_string(bad) + " wrong elements, element " + std::to_string(first) +
                           " is " + std::to_string(buf[recv_at + first]) + ", expected " +
                           std::to_string(value(src, first))));
      // The part of the buffer outside recv keeps this rank's own data.
      std::size_t changed = buf.size();
      for (std::size_t i = 0; i < buf.size() && changed == buf.size(); ++i)
        if ((i < recv_at || i >= recv_at + count) && buf[i] != before[i]) changed = i;
      CHECK_MESSAGE(changed == buf.size(), (what + ": element " + std::to_string(changed) + " outside recv changed"));
      expect_send_apart(what, __LINE__);
    }
  }
  expect_sum<"tp">(mesh, 0, __LINE__);
  if (me == 0) std::printf("shift with overlapping send and recv over NCCL: checked\n");
}

// ---- 6. op::avg on integers is refused on NCCL, before any communication ----------------------
template <class T, class M>
void refuse_avg(const M& mesh, const char* type) {
  const auto before = devmesh_fake_nccl_last_call();
  const std::string before_name = before.name;
  std::vector<T> v(4, static_cast<T>(me + 1)), out(1);
  const std::vector<T> send(4, static_cast<T>(me + 1));
  auto expect_refused = [&](const std::string& call, auto&& f) {
    const auto t = contract::catch_all(f);
    const std::string what = call + " with op::avg on " + type;
    std::string problem;
    if (!t.any)
      problem = ": did not throw";
    else if (t.type != "comm_error")
      problem = ": threw " + t.type + ", not comm_error: " + t.what;
    else if (!contract::contains(t.what, "op::avg on an integer type"))
      problem = ": no 'op::avg on an integer type' in: " + t.what;
    CHECK_MESSAGE(problem.empty(), (what + problem));
    if (me == 0 && t.any && call == "all_reduce") contract::show(what, t.what);
  };
  expect_refused("all_reduce", [&] { dm::all_reduce<"all">(mesh, std::span(v), dm::op::avg); });
  expect_refused("all_reduce (out of place)",
                 [&] { dm::all_reduce<"tp">(mesh, std::span<const T>(send), std::span(v), dm::op::avg); });
  expect_refused("reduce", [&] { dm::reduce<"all">(mesh, std::span(v), dm::op::avg, 0); });
  expect_refused("reduce_scatter",
                 [&] { dm::reduce_scatter<"all">(mesh, std::span<const T>(send), std::span(out), dm::op::avg); });
  // No NCCL call was made (the double records every collective and point-to-point call).
  const auto after = devmesh_fake_nccl_last_call();
  CHECK_MESSAGE((std::string(after.name) == before_name && after.count == before.count &&
                 after.datatype == before.datatype),
                (std::string("op::avg on ") + type + ": NCCL was called (" + after.name + ", count " +
                 std::to_string(after.count) + ") before the refusal"));
  CHECK_MESSAGE(v == std::vector<T>(4, static_cast<T>(me + 1)),
                (std::string("op::avg on ") + type + ": the buffer changed"));
}

void avg(const C& world) {
  auto mesh = dm::init_device_mesh(world, m2(2, 2));
  auto all = mesh.flatten<"all">();
  // A distinctive last call: 3 floats summed on "all".
  std::vector<float> mark{1.f, 2.f, 3.f};
  all.all_reduce<"all">(std::span(mark), dm::op::sum);
  CHECK((mark[0] == 4.f && mark[2] == 12.f));
  refuse_avg<int>(all, "int");
  refuse_avg<long>(all, "long");
  refuse_avg<unsigned>(all, "unsigned");
  refuse_avg<std::int8_t>(all, "std::int8_t");
  // Every rank refused locally: the ranks are still in step, and floats average.
  expect_sum<"all">(all, 1, __LINE__);
  {
    std::vector<float> f{static_cast<float>(me), 2.f * static_cast<float>(me) + 1.f};
    all.all_reduce<"all">(std::span(f), dm::op::avg);
    CHECK((f[0] == 1.5f && f[1] == 4.f));  // (0+1+2+3)/4, (1+3+5+7)/4
  }
  {
    const auto g = all.layout().group<"tp">(me);
    std::vector<double> d{static_cast<double>(me)};
    all.all_reduce<"tp">(std::span(d), dm::op::avg);
    CHECK(d[0] == (g[0] + g[1]) / 2.0);
    std::vector<float> r{static_cast<float>(me) * 2.f};
    all.reduce<"tp">(std::span(r), dm::op::avg, 1);
    if (g.index_of(me) == 1) CHECK(r[0] == static_cast<float>(g[0] + g[1]));
    const std::vector<float> send{static_cast<float>(me), static_cast<float>(10 * me)};
    std::vector<float> got(1);
    all.reduce_scatter<"tp">(std::span<const float>(send), std::span(got), dm::op::avg);
    const float e = g.index_of(me) == 0 ? static_cast<float>(g[0] + g[1]) / 2.f : 10.f * static_cast<float>(g[0] + g[1]) / 2.f;
    CHECK(got[0] == e);
  }
  expect_sum<"tp">(all, 2, __LINE__);
  if (me == 0) std::printf("op::avg: refused on integers before any NCCL call, exact on floats\n");
}

// ---- not registered: all_reduce with partially overlapping buffers ----------------------------
void all_reduce_overlap(const C& world) {
  auto mesh = dm::init_device_mesh(world, m2(1, 4));
  const auto g = mesh.layout().group<"tp">(me);
  for (const std::size_t count : {std::size_t{4}, std::size_t{1} << 16}) {
    std::vector<int> buf(count + 1);
    for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = value(me, i) % 1000;
    const std::vector<int> before = buf;
    reductions.on = true;
    reductions.calls.clear();
    mesh.all_reduce<"tp">(std::span<const int>(buf.data(), count), std::span(buf.data() + 1, count), dm::op::sum);
    reductions.on = false;
    const std::string what = "all_reduce(send = buf, recv = buf + 1) of " + std::to_string(count) + " ints";
    bool partial = false;
    for (const auto& [s, r] : reductions.calls) partial = partial || (s.overlaps(r) && s.begin != r.begin);
    CHECK_MESSAGE(!partial, (what + ": ncclAllReduce got partially overlapping send and recv (no copy)"));
    std::size_t bad = 0;
    for (std::size_t i = 0; i < count; ++i) {
      long e = 0;
      for (int r : g) e += value(r, i) % 1000;
      if (buf[1 + i] != e) ++bad;
    }
    CHECK_MESSAGE(!bad, (what + ": " + std::to_string(bad) + " wrong elements"));
  }
}

/// One scenario over a fresh NCCL world (every rank starts together); then the rendezvous:
/// every rank, the odd one included, gets here with every handle gone.
void run(void (*scenario)(const C&)) {
  me = test::world_rank();
  contract::require_ranks(4);
  const auto t = contract::catch_all([&] {
    auto world = dm::nccl::world(dm::mpi::world());
    MPI_Barrier(MPI_COMM_WORLD);  // every rank starts the scenario together
    scenario(world);
  });
  CHECK_MESSAGE(!t.any, ("the scenario threw " + t.type + ": " + t.what));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_EQ(devmesh_fake_nccl_live_comms(), 0);
  CHECK_EQ(devmesh_fake_cuda_live_allocs(), 0);
}

}  // namespace

TEST_CASE("distinct") { run([](const C& w) { distinct(w, false); }); }
TEST_CASE("distinct_lazy") { run([](const C& w) { distinct(w, true); }); }
TEST_CASE("share") { run(share); }
TEST_CASE("check_count") { run([](const C& w) { checks(w, "check_count"); }); }
TEST_CASE("check_op") { run([](const C& w) { checks(w, "check_op"); }); }
TEST_CASE("check_bcast_root") { run([](const C& w) { checks(w, "check_bcast_root"); }); }
TEST_CASE("check_reduce_root") { run([](const C& w) { checks(w, "check_reduce_root"); }); }
TEST_CASE("check_type") { run([](const C& w) { checks(w, "check_type"); }); }
TEST_CASE("check_equal") { run([](const C& w) { checks(w, "check_equal"); }); }
TEST_CASE("check_option") { run(check_option); }
TEST_CASE("deadline_flatten") { run([](const C& w) { deadline_flatten(w, false); }); }
TEST_CASE("deadline_option") { run([](const C& w) { deadline_flatten(w, true); }); }
TEST_CASE("deadline_other_mesh") { run(deadline_other_mesh); }
TEST_CASE("shift_aliased") { run(shift_aliased); }
TEST_CASE("shift_overlap") { run(shift_overlap); }
TEST_CASE("avg") { run(avg); }
TEST_CASE("all_reduce_overlap") { run(all_reduce_overlap); }
