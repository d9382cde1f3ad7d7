// tests/nccl/backend.cpp: dm::nccl::communicator over the NCCL/CUDA test double, under
// mpirun (2, 4, 8 ranks). Every rank runs every case; "device" buffers are host memory in
// the double. Checks what the backend hands NCCL (colors, keys, datatypes, counts, config,
// group calls) and what comes back (membership, numbers), and the RAII bookkeeping.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "common.hpp"
#include "../mpi/mpi_doctest.hpp"

namespace nccl_backend_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;
using namespace nccl_test;

namespace {

// Every communicator made by a case is gone by its end, finalized before destroyed.
struct no_leaks {
  int aborted_before = devmesh_fake_nccl_aborted();
  ~no_leaks() {
    CHECK(devmesh_fake_nccl_live_comms() == 0);
    CHECK(devmesh_fake_cuda_live_allocs() == 0);
    CHECK(devmesh_fake_nccl_destroyed_unfinalized() == 0);
  }
};

dm::nccl::communicator make_world(bool blocking = false) { return dm::nccl::world(MPI_COMM_WORLD, fast(blocking)); }

}  // namespace

// ---- compile-time mapping ----------------------------------------------------------------
static_assert(dm::nccl::datatype<float> == ncclFloat32);
static_assert(dm::nccl::datatype<const double> == ncclFloat64);
static_assert(dm::nccl::datatype<std::int8_t> == ncclInt8);
static_assert(dm::nccl::datatype<std::uint8_t> == ncclUint8);
static_assert(dm::nccl::datatype<char> == (std::is_signed_v<char> ? ncclInt8 : ncclUint8));
static_assert(dm::nccl::datatype<std::int32_t> == ncclInt32);
static_assert(dm::nccl::datatype<std::uint32_t> == ncclUint32);
static_assert(dm::nccl::datatype<long> == ncclInt64);
static_assert(dm::nccl::datatype<long long> == ncclInt64);
static_assert(dm::nccl::datatype<unsigned long long> == ncclUint64);
static_assert(dm::nccl::datatype<__half> == ncclFloat16);
static_assert(dm::nccl::datatype<__nv_bfloat16> == ncclBfloat16);
static_assert(dm::nccl::datatype<std::byte> == ncclUint8);
static_assert(dm::nccl::redop(dm::op::sum) == ncclSum && dm::nccl::redop(dm::op::prod) == ncclProd &&
              dm::nccl::redop(dm::op::min) == ncclMin && dm::nccl::redop(dm::op::max) == ncclMax &&
              dm::nccl::redop(dm::op::avg) == ncclAvg);
// bool: NCCL has none; ncclUint8 with max (or) and min (and), op::avg refused before NCCL.
static_assert(dm::nccl::datatype<bool> == ncclUint8 && dm::nccl::datatype<const bool> == ncclUint8);
static_assert(dm::nccl::redop_of<bool>(dm::op::sum) == ncclMax && dm::nccl::redop_of<bool>(dm::op::max) == ncclMax &&
              dm::nccl::redop_of<bool>(dm::op::prod) == ncclMin && dm::nccl::redop_of<bool>(dm::op::min) == ncclMin &&
              dm::nccl::redop_of<float>(dm::op::sum) == ncclSum && dm::nccl::redop_of<int>(dm::op::prod) == ncclProd);
static_assert(dm::communicator<dm::nccl::communicator>);

TEST_CASE("world from MPI: rank order, device from the local rank, host channel") {
  no_leaks guard;
  auto w = make_world();
  CHECK(w.valid());
  CHECK(w.rank() == world_rank());
  CHECK(w.size() == world_size());
  CHECK(w.has_host_channel());
  CHECK(std::string(dm::nccl::communicator::backend_name()) == "nccl");
  CHECK(devmesh_fake_cuda_current_device() == std::atoi(std::getenv("OMPI_COMM_WORLD_LOCAL_RANK")));
  devmesh_fake_comm_info info{};
  REQUIRE(devmesh_fake_nccl_comm_info(w.native(), &info));
  CHECK(info.blocking == 0);  // devmesh's default: non-blocking, bounded by the timeout
  for (int r = 0; r < std::min(world_size(), 64); ++r) CHECK(info.world_ranks[r] == r);
  std::vector<int> all(static_cast<std::size_t>(w.size()));
  int me = w.rank() * 10;
  w.all_gather_bytes(&me, all.data(), sizeof me);
  for (int r = 0; r < w.size(); ++r) CHECK(all[static_cast<std::size_t>(r)] == r * 10);
}

TEST_CASE("scalable init over several roots, and blocking mode") {
  no_leaks guard;
  dm::nccl::bootstrap_options b;
  b.roots = 2;
  auto w = dm::nccl::world(MPI_COMM_WORLD, fast(true), b);
  CHECK(devmesh_fake_nccl_last_init_nids() == std::min(2, world_size()));
  CHECK(w.size() == world_size());
  devmesh_fake_comm_info info{};
  REQUIRE(devmesh_fake_nccl_comm_info(w.native(), &info));
  CHECK(info.blocking == 1);
  std::vector<float> v{1.f};
  w.all_reduce(v.data(), v.data(), 1, dm::op::sum, nullptr);
  CHECK(v[0] == static_cast<float>(world_size()));
}

TEST_CASE("split: colors and keys reach NCCL, membership follows the key order") {
  no_leaks guard;
  auto w = make_world();
  const int r = w.rank(), n = w.size();
  // Two groups (even, odd), ordered by descending world rank.
  const int color = r % 2, key = n - r;
  auto o = fast();
  o.name = "test:parity";
  auto c = w.split(color, key, o);
  int last_color = 0, last_key = 0;
  devmesh_fake_nccl_last_split(&last_color, &last_key);
  CHECK(last_color == color);
  CHECK(last_key == key);
  std::vector<int> expected;
  for (int q = n - 1; q >= 0; --q)
    if (q % 2 == color) expected.push_back(q);
  REQUIRE(c.valid());
  CHECK(c.size() == static_cast<int>(expected.size()));
  CHECK(c.rank() == static_cast<int>(std::find(expected.begin(), expected.end(), r) - expected.begin()));
  CHECK(c.has_host_channel());  // children get the parent's host channel, split alike
  std::vector<int> members(expected.size());
  c.all_gather_bytes(&r, members.data(), sizeof r);
  CHECK(members == expected);
  devmesh_fake_comm_info info{};
  REQUIRE(devmesh_fake_nccl_comm_info(c.native(), &info));
  CHECK(std::string(info.comm_name) == "test:parity");
  for (std::size_t i = 0; i < expected.size() && i < 64; ++i) CHECK(info.world_ranks[i] == expected[i]);

  // dm::no_color becomes NCCL_SPLIT_NOCOLOR, and those ranks get an invalid communicator.
  auto d = w.split(r == 0 ? dm::no_color : 0, r, fast());
  devmesh_fake_nccl_last_split(&last_color, &last_key);
  if (r == 0) {
    CHECK(last_color == NCCL_SPLIT_NOCOLOR);
    CHECK_FALSE(d.valid());
    CHECK(d.size() == 0);
  } else {
    CHECK(d.size() == n - 1);
    CHECK(d.rank() == r - 1);
  }
  CHECK_THROWS_WITH_AS(w.split(-5, 0, fast()), doctest::Contains("color must be >= 0 or dm::no_color"), dm::comm_error);
}

TEST_CASE("options map to ncclConfig_t") {
  no_leaks guard;
  auto w = make_world();
  dm::nccl::options o = fast(true);
  o.cga_cluster_size = 2;
  o.min_ctas = 1;
  o.max_ctas = 4;
  o.net_name = "IB";
  o.name = "mesh:tp";
  o.split_share = true;
  auto c = w.split(0, w.rank(), o);
  devmesh_fake_comm_info info{};
  REQUIRE(devmesh_fake_nccl_comm_info(c.native(), &info));
  CHECK(info.blocking == 1);
  CHECK(info.cga_cluster_size == 2);
  CHECK(info.min_ctas == 1);
  CHECK(info.max_ctas == 4);
  CHECK(std::string(info.net_name) == "IB");
  CHECK(std::string(info.comm_name) == "mesh:tp");
  CHECK(info.split_share == 1);
  CHECK(c.opts() == o);
  CHECK(o.describe().find("commName=mesh:tp") != std::string::npos);
  // Unset fields stay NCCL_CONFIG_UNDEF_INT: NCCL keeps its defaults.
  auto d = w.split(0, w.rank(), fast());
  REQUIRE(devmesh_fake_nccl_comm_info(d.native(), &info));
  CHECK(info.cga_cluster_size == -1);
  CHECK(info.split_share == -1);
  CHECK(std::string(info.comm_name).empty());
}

template <class T>
void check_collectives(const dm::nccl::communicator& c, bool reducible) {
  const int r = c.rank(), n = c.size();
  const std::size_t un = static_cast<std::size_t>(n);
  const std::size_t k = 3;
  constexpr ncclDataType_t dt = dm::nccl::datatype<T>;
  cudaStream_t s = nullptr;
  if (reducible) {
    std::vector<T> v(k);
    for (std::size_t i = 0; i < k; ++i) v[i] = static_cast<T>(r + 1 + static_cast<int>(i));
    std::vector<T> sum(k);
    c.all_reduce(v.data(), sum.data(), k, dm::op::sum, s);
    auto last = devmesh_fake_nccl_last_call();
    CHECK(std::string(last.name) == "ncclAllReduce");
    CHECK(last.datatype == dt);
    CHECK(last.count == k);
    CHECK(last.op == ncclSum);
    for (std::size_t i = 0; i < k; ++i) CHECK(sum[i] == static_cast<T>(n * (n + 1) / 2 + n * static_cast<int>(i)));
    std::vector<T> mx = v;  // in place
    c.all_reduce(mx.data(), mx.data(), k, dm::op::max, s);
    CHECK(mx[0] == static_cast<T>(n));
    std::vector<T> mn(k);
    c.all_reduce(v.data(), mn.data(), k, dm::op::min, s);
    CHECK(mn[0] == static_cast<T>(1));
    std::vector<T> one{static_cast<T>(r == 0 ? 2 : 1)}, prod(1);
    c.all_reduce(one.data(), prod.data(), 1, dm::op::prod, s);
    CHECK(prod[0] == static_cast<T>(2));
    std::vector<T> same{static_cast<T>(6)}, avg(1);
    if constexpr (std::is_integral_v<T>) {
      // ncclAvg sums in the element type: refused on integers rather than overflowing.
      CHECK_THROWS_WITH_AS(c.all_reduce(same.data(), avg.data(), 1, dm::op::avg, s),
                           doctest::Contains("op::avg on an integer type"), dm::comm_error);
    } else {
      c.all_reduce(same.data(), avg.data(), 1, dm::op::avg, s);
      CHECK(devmesh_fake_nccl_last_call().op == ncclAvg);
      CHECK(avg[0] == static_cast<T>(6));
    }
    // reduce to the last rank
    std::vector<T> red(k, T{});
    c.reduce(v.data(), red.data(), k, dm::op::sum, n - 1, s);
    CHECK(devmesh_fake_nccl_last_call().peer == n - 1);
    if (r == n - 1) CHECK(red[0] == static_cast<T>(n * (n + 1) / 2));
    // reduce_scatter: rank p gets the sum of element block p
    std::vector<T> in(k * un), out(k);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<T>(i % 10);
    c.reduce_scatter(in.data(), out.data(), k, dm::op::sum, s);
    CHECK(devmesh_fake_nccl_last_call().count == k);
    for (std::size_t i = 0; i < k; ++i) CHECK(out[i] == static_cast<T>(n * static_cast<int>((static_cast<std::size_t>(r) * k + i) % 10)));
  }
  // broadcast from rank 0
  std::vector<T> b(k, static_cast<T>(r == 0 ? 7 : 0));
  c.broadcast(b.data(), k, 0, s);
  CHECK(std::all_of(b.begin(), b.end(), [](T x) { return x == static_cast<T>(7); }));
  // all_gather
  std::vector<T> mine(k, static_cast<T>(r)), all(k * un);
  c.all_gather(mine.data(), all.data(), k, s);
  CHECK(devmesh_fake_nccl_last_call().count == k);
  for (std::size_t i = 0; i < all.size(); ++i) CHECK(all[i] == static_cast<T>(static_cast<int>(i / k)));
  // all_to_all: block p of rank r holds r*16+p; received block p holds p*16+r
  std::vector<T> a2a(k * un), got(k * un);
  for (std::size_t i = 0; i < a2a.size(); ++i) a2a[i] = static_cast<T>(r * 16 + static_cast<int>(i / k));
  c.all_to_all(a2a.data(), got.data(), k, s);
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == static_cast<T>(static_cast<int>(i / k) * 16 + r));
  c.all_to_all(a2a.data(), a2a.data(), k, s);  // in place
  CHECK(a2a == got);
  // sendrecv: a periodic shift to the right
  std::vector<T> sv(k, static_cast<T>(r)), rv(k);
  c.sendrecv(sv.data(), k, (r + 1) % n, rv.data(), k, (r + n - 1) % n, s);
  CHECK(rv[0] == static_cast<T>((r + n - 1) % n));
  // non-periodic: the ends send or receive nothing (-1)
  std::vector<T> rv2(k, static_cast<T>(99));
  c.sendrecv(sv.data(), k, r + 1 < n ? r + 1 : -1, rv2.data(), k, r > 0 ? r - 1 : -1, s);
  CHECK(rv2[0] == static_cast<T>(r > 0 ? r - 1 : 99));
  c.barrier(s);
  CHECK(std::string(devmesh_fake_nccl_last_call().name) == "ncclAllReduce");
}

TEST_CASE("typed collectives, numerically, per element type, on world and on a split") {
  no_leaks guard;
  for (bool blocking : {false, true}) {
    CAPTURE(blocking);
    auto w = make_world(blocking);
    auto half = w.split(w.rank() % 2, w.rank(), fast(blocking));
    for (const auto* c : {&w, &half}) {
      check_collectives<float>(*c, true);
      check_collectives<double>(*c, true);
      check_collectives<std::int32_t>(*c, true);
      check_collectives<std::uint32_t>(*c, true);
      check_collectives<std::int64_t>(*c, true);
      check_collectives<std::uint64_t>(*c, true);
      check_collectives<std::int8_t>(*c, true);
      check_collectives<std::uint8_t>(*c, false);
    }
  }
}

TEST_CASE("bool: ncclUint8, sum and max a logical or, prod and min a logical and, avg refused") {
  no_leaks guard;
  auto w = make_world();
  const int r = w.rank(), n = w.size();
  // Flag 0: rank 0 only; 1: every rank; 2: none; 3: odd ranks.
  const bool mine[4] = {r == 0, true, false, r % 2 == 1};
  const bool any[4] = {true, true, false, n > 1}, every[4] = {n == 1, true, false, false};
  for (dm::op o : {dm::op::sum, dm::op::max, dm::op::prod, dm::op::min}) {
    CAPTURE(static_cast<int>(o));
    const bool is_or = o == dm::op::sum || o == dm::op::max;
    bool out[4] = {};
    w.all_reduce(mine, out, 4, o, nullptr);
    const auto last = devmesh_fake_nccl_last_call();
    CHECK(last.datatype == ncclUint8);
    CHECK(last.op == (is_or ? ncclMax : ncclMin));
    for (int k = 0; k < 4; ++k) CHECK(out[k] == (is_or ? any[k] : every[k]));
    bool red[4] = {true, true, true, true};
    w.reduce(mine, red, 4, o, n - 1, nullptr);
    for (int k = 0; k < 4; ++k) CHECK(red[k] == (r == n - 1 ? (is_or ? any[k] : every[k]) : true));
    std::unique_ptr<bool[]> blocks(new bool[static_cast<std::size_t>(n)]);  // block p: rank p's flag 3
    for (int p = 0; p < n; ++p) blocks[static_cast<std::size_t>(p)] = mine[3];
    bool block = !mine[3];
    w.reduce_scatter(blocks.get(), &block, 1, o, nullptr);
    CHECK(block == (is_or ? any[3] : every[3]));
  }
  bool out[4] = {};
  CHECK_THROWS_WITH_AS(w.all_reduce(mine, out, 4, dm::op::avg, nullptr), doctest::Contains("op::avg on bool elements"),
                       dm::comm_error);
  std::unique_ptr<bool[]> all(new bool[4 * static_cast<std::size_t>(n)]);
  w.all_gather(mine, all.get(), 4, nullptr);
  for (int p = 0; p < n; ++p) CHECK(all[4 * static_cast<std::size_t>(p)] == (p == 0));
}

TEST_CASE("group: calls on several communicators batched into one ncclGroupEnd") {
  no_leaks guard;
  auto w = make_world();
  auto a = w.split(0, w.rank(), fast());
  auto b = w.split(w.rank() % 2, w.rank(), fast());
  std::vector<int> x{1}, y{1};
  const int ends = devmesh_fake_nccl_group_ends();
  {
    dm::nccl::group g;
    a.all_reduce(x.data(), x.data(), 1, dm::op::sum, nullptr);
    CHECK(devmesh_fake_nccl_last_call().in_group == 1);
    b.all_reduce(y.data(), y.data(), 1, dm::op::sum, nullptr);
  }
  CHECK(devmesh_fake_nccl_group_ends() == ends + 1);
  CHECK(x[0] == a.size());
  CHECK(y[0] == b.size());
  // The concept's static hooks, nested: one outermost end.
  dm::nccl::communicator::group_start();
  dm::nccl::communicator::group_start();
  a.all_reduce(x.data(), x.data(), 1, dm::op::sum, nullptr);
  dm::nccl::communicator::group_end();
  CHECK(devmesh_fake_nccl_group_ends() == ends + 1);
  dm::nccl::communicator::group_end();
  CHECK(devmesh_fake_nccl_group_ends() == ends + 2);
  CHECK(x[0] == a.size() * a.size());
  // A group left by an exception ends quietly; the first error propagates.
  CHECK_THROWS_AS(([&] {
                    dm::nccl::group g;
                    a.reduce(x.data(), x.data(), 1, dm::op::sum, a.size(), nullptr);
                  }()),
                  dm::comm_error);
  CHECK(devmesh_fake_nccl_group_ends() == ends + 3);
}

TEST_CASE("overlapping send and recv: a device copy of send outside a group, refused inside one") {
  no_leaks guard;
  auto w = make_world();
  const int r = w.rank(), n = w.size();
  const std::size_t un = static_cast<std::size_t>(n);
  std::vector<int> buf(un + 1);
  w.broadcast(buf.data(), 1, 0, nullptr);  // the last NCCL call until the refusals below
  {
    // Inside a group the kernels run at the outermost group end, after the copy of send
    // would be freed: every call that needs one throws, before any NCCL call.
    dm::nccl::group g;
    CHECK_THROWS_WITH_AS(w.all_to_all(buf.data(), buf.data(), 1, nullptr),
                         doctest::Contains("all_to_all: overlapping send and recv buffers inside an NCCL group"),
                         dm::comm_error);
    CHECK_THROWS_WITH_AS(w.sendrecv(buf.data(), 2, (r + 1) % n, buf.data() + 1, 2, (r + n - 1) % n, nullptr),
                         doctest::Contains("sendrecv: overlapping send and recv buffers inside an NCCL group"),
                         dm::comm_error);
    const std::vector<std::size_t> ones(un, 1);
    CHECK_THROWS_WITH_AS(w.all_to_allv(buf.data(), ones, {}, buf.data(), ones, {}, nullptr),
                         doctest::Contains("all_to_allv: overlapping send and recv buffers inside an NCCL group"),
                         dm::comm_error);
    CHECK_THROWS_WITH_AS(w.reduce_scatterv(buf.data(), buf.data(), ones, dm::op::sum, nullptr),
                         doctest::Contains("reduce_scatterv: overlapping send and recv buffers inside an NCCL group"),
                         dm::comm_error);
    CHECK_THROWS_WITH_AS(w.all_reduce(buf.data(), buf.data() + 1, 2, dm::op::sum, nullptr),
                         doctest::Contains("use identical buffers (in place) or disjoint ones"), dm::comm_error);
    CHECK(std::string(devmesh_fake_nccl_last_call().name) == "ncclBroadcast");
    // In place is NCCL's own form for a reduction: no copy, allowed in a group.
    buf[0] = 1;
    w.all_reduce(buf.data(), buf.data(), 1, dm::op::sum, nullptr);
  }
  CHECK(buf[0] == n);
  // Outside a group the same calls send from a copy and get the right values.
  for (std::size_t p = 0; p < un; ++p) buf[p] = r * 16 + static_cast<int>(p);
  w.all_to_all(buf.data(), buf.data(), 1, nullptr);
  for (std::size_t p = 0; p < un; ++p) CHECK(buf[p] == static_cast<int>(p) * 16 + r);
  buf.assign(un + 1, r);
  w.sendrecv(buf.data(), 2, (r + 1) % n, buf.data() + 1, 2, (r + n - 1) % n, nullptr);
  CHECK(buf[1] == (r + n - 1) % n);
  CHECK(buf[2] == (r + n - 1) % n);
}

TEST_CASE("v-collectives: all_to_allv and reduce_scatterv on uneven and empty blocks") {
  no_leaks guard;
  auto w = make_world();
  const int r = w.rank(), n = w.size();
  const std::size_t un = static_cast<std::size_t>(n);
  // all_to_allv: rank a sends (a + b) % 3 elements to rank b (some none), a*100 + b*10 + i;
  // sent packed, received at displacements in reverse rank order with a gap of one.
  const auto count = [](int a, int b) { return static_cast<std::size_t>((a + b) % 3); };
  std::vector<std::size_t> sc(un), rc(un), ra(un);
  std::vector<int> send;
  for (int b = 0; b < n; ++b) {
    sc[static_cast<std::size_t>(b)] = count(r, b);
    for (std::size_t i = 0; i < count(r, b); ++i) send.push_back(r * 100 + b * 10 + static_cast<int>(i));
  }
  std::size_t end = 0;
  for (int a = n - 1; a >= 0; --a) {
    const auto ua = static_cast<std::size_t>(a);
    rc[ua] = count(a, r);
    ra[ua] = end;
    end += rc[ua] + 1;
  }
  std::vector<int> got(end, -1);
  const int groups_before = devmesh_fake_nccl_group_ends();
  w.all_to_allv(send.data(), sc, {}, got.data(), rc, ra, nullptr);
  CHECK(devmesh_fake_nccl_group_ends() == groups_before + 1);  // one group of sends and receives
  for (int a = 0; a < n; ++a) {
    const auto ua = static_cast<std::size_t>(a);
    for (std::size_t i = 0; i < rc[ua]; ++i) CHECK(got[ra[ua] + i] == a * 100 + r * 10 + static_cast<int>(i));
    CHECK(got[ra[ua] + rc[ua]] == -1);  // the gap is not written
  }
  // In place (the counts are symmetric: the same packed layout both ways): from a device copy.
  std::vector<int> buf = send;
  w.all_to_allv(buf.data(), sc, {}, buf.data(), sc, {}, nullptr);
  std::size_t at = 0;
  for (int a = 0; a < n; ++a)
    for (std::size_t i = 0; i < count(a, r); ++i, ++at) CHECK(buf[at] == a * 100 + r * 10 + static_cast<int>(i));
  CHECK(devmesh_fake_cuda_live_allocs() == 0);  // the copy is gone

  // reduce_scatterv: block i has i % 3 elements (rank 0's none); element j of every rank's
  // send is (rank + 1) * (j + 1), so the sum is (j + 1) * n (n + 1) / 2.
  std::vector<std::size_t> counts(un), first(un);
  std::size_t total = 0;
  for (std::size_t i = 0; i < un; ++i) {
    counts[i] = i % 3;
    first[i] = total;
    total += counts[i];
  }
  std::vector<double> in(total), out(counts[static_cast<std::size_t>(r)] + 1, -1.0);
  for (std::size_t j = 0; j < total; ++j) in[j] = static_cast<double>((r + 1) * static_cast<int>(j + 1));
  w.reduce_scatterv(in.data(), out.data(), counts, dm::op::sum, nullptr);
  if (n > 1) CHECK(std::string(devmesh_fake_nccl_last_call().name) == "ncclReduce");
  for (std::size_t i = 0; i < counts[static_cast<std::size_t>(r)]; ++i)
    CHECK(out[i] == static_cast<double>((first[static_cast<std::size_t>(r)] + i + 1) * un * (un + 1) / 2));
  CHECK(out.back() == -1.0);  // nothing past this rank's block
  w.reduce_scatterv(in.data(), out.data(), counts, dm::op::avg, nullptr);
  for (std::size_t i = 0; i < counts[static_cast<std::size_t>(r)]; ++i)
    CHECK(out[i] == doctest::Approx(static_cast<double>((first[static_cast<std::size_t>(r)] + i + 1) * (un + 1)) / 2));

  // Misuse: a count per rank, displacements per count, no integer average, before NCCL.
  std::vector<std::size_t> short_counts(un + 1, 1);
  CHECK_THROWS_WITH_AS(w.all_to_allv(send.data(), short_counts, {}, got.data(), rc, ra, nullptr),
                       doctest::Contains("all_to_allv on"), dm::mesh_error);
  const std::string counts_text = std::to_string(un + 1) + " counts for a communicator of " + std::to_string(un) + " ranks";
  CHECK_THROWS_WITH_AS(w.all_to_allv(send.data(), short_counts, {}, got.data(), rc, ra, nullptr),
                       doctest::Contains(counts_text.c_str()), dm::mesh_error);
  const std::vector<std::size_t> long_at(un + 1, 0);
  const std::string at_text = std::to_string(un + 1) + " displacements for " + std::to_string(un) + " counts";
  CHECK_THROWS_WITH_AS(w.all_to_allv(send.data(), sc, long_at, got.data(), rc, ra, nullptr),
                       doctest::Contains(at_text.c_str()), dm::mesh_error);
  std::vector<int> ints(total, 1), mine(counts[static_cast<std::size_t>(r)]);
  CHECK_THROWS_WITH_AS(w.reduce_scatterv(ints.data(), mine.data(), counts, dm::op::avg, nullptr),
                       doctest::Contains("op::avg on an integer type"), dm::comm_error);
}

TEST_CASE("ownership: finalize before destroy, moves, abort, adopt and borrow") {
  no_leaks guard;
  const int destroyed = devmesh_fake_nccl_destroyed(), aborted = devmesh_fake_nccl_aborted();
  {
    auto w = make_world();
    auto c = w.split(0, w.rank(), fast());
    dm::nccl::communicator moved = std::move(c);
    CHECK_FALSE(c.valid());  // NOLINT: moved-from is empty, and safe to destroy
    CHECK(moved.valid());
    CHECK_THROWS_WITH_AS(c.barrier(nullptr), doctest::Contains("invalid nccl::communicator"), dm::comm_error);
    moved = w.split(0, w.rank(), fast());  // the old one is ended first
    CHECK(devmesh_fake_nccl_live_comms() == 2);
    moved.abort();
    CHECK_FALSE(moved.valid());
    CHECK(moved.aborted());
    CHECK_THROWS_WITH_AS(moved.barrier(nullptr), doctest::Contains("aborted"), dm::comm_error);
    moved.abort();  // twice is fine
  }
  CHECK(devmesh_fake_nccl_destroyed() == destroyed + 2);
  CHECK(devmesh_fake_nccl_aborted() == aborted + 1);
  // borrow: the caller still owns the handle
  auto w = make_world();
  ncclComm_t raw = nullptr;
  {
    auto c = w.split(0, w.rank(), fast());
    raw = c.native();
    auto b = dm::nccl::communicator::borrow(raw, fast());
    CHECK(b.rank() == w.rank());
    CHECK(b.size() == w.size());
  }
  // c ended raw; the borrow did not end it again (the double would count a second destroy)
  CHECK(devmesh_fake_nccl_destroyed() == destroyed + 3);
}

TEST_CASE("run-time misuse is a comm_error with context, not UB") {
  no_leaks guard;
  auto w = make_world();
  std::vector<float> v(4);
  CHECK_THROWS_WITH_AS(w.broadcast(v.data(), 4, w.size(), nullptr), doctest::Contains("root"), dm::comm_error);
  CHECK_THROWS_WITH_AS(w.sendrecv(v.data(), 1, w.size() + 3, v.data(), 1, -1, nullptr), doctest::Contains("dest"),
                       dm::comm_error);
  // An NCCL error code becomes an exception carrying ncclGetErrorString and ncclGetLastError.
  std::vector<__half> h(2);
  CHECK_THROWS_WITH_AS(w.all_reduce(h.data(), h.data(), 2, dm::op::sum, nullptr),
                       doctest::Contains("ncclInvalidArgument (invalid argument"), dm::comm_error);
  CHECK_THROWS_WITH_AS(w.all_reduce(h.data(), h.data(), 2, dm::op::sum, nullptr),
                       doctest::Contains("last NCCL error: fake nccl: ncclAllReduce"), dm::comm_error);
  w.all_gather(h.data(), std::vector<__half>(2 * static_cast<std::size_t>(w.size())).data(), 2, nullptr);  // moves are fine
  CHECK(devmesh_fake_nccl_last_call().datatype == ncclFloat16);
}

TEST_CASE("device selection from the launcher's local rank") {
  scoped_env a("OMPI_COMM_WORLD_LOCAL_RANK", nullptr), b("SLURM_LOCALID", nullptr), c("LOCAL_RANK", nullptr);
  CHECK_THROWS_WITH_AS(dm::nccl::select_device(),
                       doctest::Contains("missing: OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, LOCAL_RANK"),
                       dm::comm_error);
  {
    scoped_env l("LOCAL_RANK", "3");
    CHECK(dm::nccl::select_device() == 3);
    CHECK(devmesh_fake_cuda_current_device() == 3);
    scoped_env s("SLURM_LOCALID", "5");  // srun's variable comes before torchrun's
    CHECK(dm::nccl::select_device() == 5);
  }
  {
    scoped_env l("LOCAL_RANK", "9");
    CHECK_THROWS_WITH_AS(dm::nccl::select_device(), doctest::Contains("local rank 9 (from LOCAL_RANK)"), dm::comm_error);
  }
  {
    scoped_env l("SLURM_LOCALID", "x1");
    CHECK_THROWS_WITH_AS(dm::nccl::select_device(), doctest::Contains("SLURM_LOCALID='x1'"), dm::comm_error);
  }
  CHECK(dm::nccl::select_device(dm::nccl::device_choice{2}) == 2);
  // world(): a rank that cannot select a device makes every rank throw, naming it.
  CHECK_THROWS_WITH_AS(dm::nccl::world(MPI_COMM_WORLD, fast()), doctest::Contains("device selection"), dm::comm_error);
  CHECK(devmesh_fake_nccl_live_comms() == 0);
}

TEST_CASE("world_from_env: RANK/WORLD_SIZE and NCCL_COMM_ID from MASTER_ADDR:MASTER_PORT") {
  no_leaks guard;
  const std::string rank = std::to_string(world_rank()), size = std::to_string(world_size());
  scoped_env id("NCCL_COMM_ID", nullptr);
  {
    scoped_env r("RANK", nullptr), n("WORLD_SIZE", size.c_str());
    CHECK_THROWS_WITH_AS(dm::nccl::world_from_env(fast()), doctest::Contains("missing launcher variable(s) RANK"),
                         dm::comm_error);
  }
  scoped_env r("RANK", rank.c_str()), n("WORLD_SIZE", size.c_str());
  {
    scoped_env a("MASTER_ADDR", nullptr), p("MASTER_PORT", nullptr);
    CHECK_THROWS_WITH_AS(dm::nccl::world_from_env(fast()), doctest::Contains("neither is MASTER_ADDR, MASTER_PORT"),
                         dm::comm_error);
  }
  scoped_env a("MASTER_ADDR", "127.0.0.1"), p("MASTER_PORT", "29500");
  auto w = dm::nccl::world_from_env(fast());
  CHECK(std::getenv("NCCL_COMM_ID") == nullptr);  // set during the call only (bootstrap_env.cpp sees it)
  CHECK(w.rank() == world_rank());
  CHECK(w.size() == world_size());
  CHECK_FALSE(w.has_host_channel());
  std::vector<int> all(static_cast<std::size_t>(w.size()));
  const int me = w.rank() + 100;
  w.all_gather_bytes(&me, all.data(), sizeof me);  // through NCCL and a device buffer
  for (int q = 0; q < w.size(); ++q) CHECK(all[static_cast<std::size_t>(q)] == q + 100);
  CHECK(devmesh_fake_cuda_live_allocs() == 0);
}
}  // namespace nccl_backend_test
