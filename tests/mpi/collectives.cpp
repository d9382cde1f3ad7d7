// Every dim's communicator against the core layout, and every typed collective checked
// numerically on every dim: plain, flattened (adjacent and transposed), sliced, unflattened,
// and on 1-D meshes through the unnamed API. Run under mpirun with 1, 2, 4 and 8 ranks, and
// with the watchdog on (DEVMESH_WATCHDOG: mpi.collectives.watchdog.np4), where the last test
// case proves the watched path ran.
#include <array>
#include <cstdlib>
#include <complex>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <devmesh/devmesh.hpp>

#include "call_counter.hpp"
#include "mpi_doctest.hpp"

namespace mpi_collectives_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;
using namespace dm::literals;

// Named (dm::all_reduce<"dp">(m, ...)) or unnamed (m.all_reduce(...), 1-D meshes) call.
#define DEVMESH_TEST_CALL(fn)                                       \
  template <dm::fixed_string N, bool Unnamed, class DM, class... A> \
  void fn(const DM& m, A&&... a) {                                  \
    if constexpr (Unnamed)                                          \
      m.fn(std::forward<A>(a)...);                                  \
    else                                                            \
      dm::fn<N>(m, std::forward<A>(a)...);                          \
  }
DEVMESH_TEST_CALL(all_reduce)
DEVMESH_TEST_CALL(reduce)
DEVMESH_TEST_CALL(broadcast)
DEVMESH_TEST_CALL(all_gather)
DEVMESH_TEST_CALL(reduce_scatter)
DEVMESH_TEST_CALL(all_to_all)
DEVMESH_TEST_CALL(shift)
#undef DEVMESH_TEST_CALL

/// The communicator of dim N holds exactly the layout's group of this rank, in its order
/// (gathered with plain MPI, independently of devmesh's collectives).
template <dm::fixed_string N, class DM>
void check_membership(const DM& m) {
  const auto g = dm::group<N>(m.layout(), m.rank());
  const auto& c = dm::comm<N>(m);
  CHECK(c.valid());
  CHECK_EQ(c.size(), g.size());
  CHECK_EQ(c.rank(), g.index_of(m.rank()));
  CHECK_EQ(dm::local_rank<N>(m), g.index_of(m.rank()));
  std::vector<int> ranks(static_cast<std::size_t>(c.size()));
  int me = m.rank();
  MPI_Allgather(&me, 1, MPI_INT, ranks.data(), 1, MPI_INT, c.native());
  for (int i = 0; i < g.size(); ++i) CHECK_EQ(ranks[static_cast<std::size_t>(i)], g[i]);
}

template <dm::fixed_string N, bool Unnamed = false, class DM>
void check_collectives(const DM& m) {
  check_membership<N>(m);
  const auto g = dm::group<N>(m.layout(), m.rank());
  const int n = g.size();
  const int me = m.rank();
  const int li = g.index_of(me);
  long sum = 0, sum_sq = 0;
  for (int r : g) sum += r + 1, sum_sq += static_cast<long>(r) * r;

  // all_reduce in place, several ops and types.
  std::vector<long> v{me + 1, static_cast<long>(me) * me, 1};
  all_reduce<N, Unnamed>(m, std::span(v), dm::op::sum);
  CHECK_EQ(v[0], sum);
  CHECK_EQ(v[1], sum_sq);
  CHECK_EQ(v[2], n);
  std::vector<double> x{static_cast<double>(me)}, y(1, -1.0);
  all_reduce<N, Unnamed>(m, std::span(x), std::span(y), dm::op::max);
  CHECK_EQ(y[0], static_cast<double>(g.back()));
  all_reduce<N, Unnamed>(m, std::span(x), std::span(y), dm::op::min);
  CHECK_EQ(y[0], static_cast<double>(g.front()));
  std::vector<float> f{static_cast<float>(me + 1)};
  all_reduce<N, Unnamed>(m, std::span(f), dm::op::avg);
  CHECK(std::abs(f[0] - static_cast<float>(sum) / static_cast<float>(n)) < 1e-5f);
  std::vector<std::int8_t> two{2};
  all_reduce<N, Unnamed>(m, std::span(two), dm::op::prod);
  CHECK_EQ(static_cast<int>(two[0]), n <= 4 ? (1 << n) : static_cast<std::int8_t>(1 << n));
  std::vector<std::uint64_t> big{1ull << 40};
  all_reduce<N, Unnamed>(m, std::span(big), dm::op::sum);
  CHECK(big[0] == (1ull << 40) * static_cast<std::uint64_t>(n));

  // reduce onto the last local rank (in place and out of place).
  std::vector<int> r{me + 1};
  reduce<N, Unnamed>(m, std::span(r), dm::op::sum, n - 1);
  if (li == n - 1) CHECK_EQ(static_cast<long>(r[0]), sum);
  std::vector<int> rin{me}, rout{-7};
  reduce<N, Unnamed>(m, std::span(rin), std::span(rout), dm::op::max, 0);
  CHECK_EQ(rout[0], li == 0 ? g.back() : -7);

  // broadcast from the middle.
  const int root = n / 2;
  std::vector<short> b{static_cast<short>(me), static_cast<short>(-me)};
  broadcast<N, Unnamed>(m, std::span(b), root);
  CHECK_EQ(b[0], g[root]);
  CHECK_EQ(b[1], -g[root]);

  // all_gather: the group's ranks in order.
  std::vector<int> send{me, -me}, all(static_cast<std::size_t>(2 * n));
  all_gather<N, Unnamed>(m, std::span(send), std::span(all));
  for (int i = 0; i < n; ++i) {
    CHECK_EQ(all[static_cast<std::size_t>(2 * i)], g[i]);
    CHECK_EQ(all[static_cast<std::size_t>(2 * i + 1)], -g[i]);
  }

  // reduce_scatter: block j of rank r holds r * (j + 1) + k; this rank gets block li.
  std::vector<double> rs_send(static_cast<std::size_t>(2 * n)), rs_recv(2);
  for (int j = 0; j < n; ++j)
    for (int k = 0; k < 2; ++k) rs_send[static_cast<std::size_t>(2 * j + k)] = me * (j + 1) + k;
  reduce_scatter<N, Unnamed>(m, std::span(rs_send), std::span(rs_recv), dm::op::sum);
  CHECK_EQ(rs_recv[0], static_cast<double>((sum - n) * (li + 1)));
  CHECK_EQ(rs_recv[1], static_cast<double>((sum - n) * (li + 1) + n));

  // all_to_all: block j of rank r is r * 1000 + j.
  std::vector<long long> a_send(static_cast<std::size_t>(n)), a_recv(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) a_send[static_cast<std::size_t>(j)] = me * 1000LL + j;
  all_to_all<N, Unnamed>(m, std::span(a_send), std::span(a_recv));
  for (int i = 0; i < n; ++i) CHECK_EQ(a_recv[static_cast<std::size_t>(i)], g[i] * 1000LL + li);

  // shift: non-periodic +1 (the first rank receives nothing), periodic -1.
  std::vector<int> s_send{me}, s_recv{-1};
  shift<N, Unnamed>(m, std::span(s_send), std::span(s_recv), 1, false);
  CHECK_EQ(s_recv[0], li > 0 ? g[li - 1] : -1);
  shift<N, Unnamed>(m, std::span(s_send), std::span(s_recv), -1, true);
  CHECK_EQ(s_recv[0], g[(li + 1) % n]);
  const auto peers = dm::shift_peers<N>(m, 1, false);
  CHECK_EQ(peers.first, li > 0 ? li - 1 : -1);
  CHECK_EQ(peers.second, li + 1 < n ? li + 1 : -1);

  // Pipeline: each rank receives from the previous one, then sends to the next (a chain).
  std::vector<int> from_prev{-1};
  if (li > 0) dm::recv_prev<N>(m, std::span(from_prev));
  if (li + 1 < n) dm::send_next<N>(m, std::span(s_send));
  CHECK_EQ(from_prev[0], li > 0 ? g[li - 1] : -1);

  if constexpr (Unnamed) m.barrier(); else dm::barrier<N>(m);

  // Sizes that do not fit the dim are errors, thrown before any communication.
  if (n > 1) {
    std::vector<int> bad(static_cast<std::size_t>(2 * n + 1));
    CHECK_THROWS_WITH_AS((all_gather<N, Unnamed>(m, std::span(send), std::span(bad))), doctest::Contains("all_gather"),
                         dm::mesh_error);
    std::vector<int> one(1);
    CHECK_THROWS_WITH_AS((reduce_scatter<N, Unnamed>(m, std::span(bad), std::span(one), dm::op::sum)),
                         doctest::Contains("not divisible by the dim size"), dm::mesh_error);
    CHECK_THROWS_WITH_AS((all_to_all<N, Unnamed>(m, std::span(bad), std::span(bad))),
                         doctest::Contains("not divisible by the dim size"), dm::mesh_error);
  }
  CHECK_THROWS_WITH_AS((reduce<N, Unnamed>(m, std::span(r), dm::op::sum, n)),
                       doctest::Contains("root"), dm::mesh_error);
}

template <class DM>
void check_mesh3(const DM& mesh) {
  check_collectives<"dp">(mesh);
  check_collectives<"cp">(mesh);
  check_collectives<"tp">(mesh);

  // Flattened: adjacent dims, and non-adjacent dims in transposed order.
  const auto f = dm::flatten<"dp_cp", "dp", "cp">(mesh);
  check_collectives<"dp_cp">(f);
  check_collectives<"tp">(f);
  const auto t = dm::flatten<"tp_dp", "tp", "dp">(mesh);
  check_collectives<"tp_dp">(t);

  // A transposed submesh, its whole-mesh flatten, and 1-D meshes through the unnamed API.
  const auto cd = dm::slice<"cp", "dp">(mesh);
  check_collectives<"cp">(cd);
  check_collectives<"dp">(cd);
  const auto cd_flat = dm::flatten<"cpdp">(cd);
  check_collectives<"cpdp", true>(cd_flat);
  check_collectives<"tp", true>(mesh["tp"_dim]);
  check_collectives<"dp_cp", true>(f["dp_cp"_dim]);
  const auto all = dm::flatten<"all">(mesh);
  check_collectives<"all", true>(all);
  check_collectives<"dp">(all);  // former dims stay reachable as aliases

  // Unflatten a dim into two (one of size 1: a group of one rank per rank).
  const auto u = dm::unflatten<"tp", dm::dim<"outer", 1>, dm::dim<"inner">>(mesh);
  check_collectives<"outer">(u);
  check_collectives<"inner">(u);
  check_collectives<"dp_cp">(dm::flatten<"dp_cp", "dp", "cp">(u));
}

// Dynamic sizes fitted to the world: (1,1,1), (1,1,2), (2,1,2), (2,2,2).
TEST_CASE("a dynamic (dp, cp, tp) mesh fitted to the world") {
  auto world = dm::mpi::world();
  const int w = world.size();
  using mesh3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;
  const int dp = w >= 4 ? 2 : 1, tp = w >= 2 ? 2 : 1;
  check_mesh3(dm::init_device_mesh(world, mesh3(dp, w / (dp * tp), tp)));
}

TEST_CASE("the static mesh of the issue, (dp=2, cp=2, tp=2) on 8 ranks") {
  auto world = dm::mpi::world();
  if (world.size() != 8) return;
  using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;
  const auto mesh = dm::init_device_mesh<mesh3d>(world);
  check_mesh3(mesh);
  // Unflatten a flattened dim into static parts.
  const auto u = mesh.flatten<"dp_cp", "dp", "cp">().unflatten<"dp_cp", dm::dim<"a", 4>, dm::dim<"b", 1>>();
  check_collectives<"a">(u);
  const auto v = mesh.flatten<"all">().unflatten<"all", dm::dim<"x", 2>, dm::dim<"y", 4>>();
  check_collectives<"x">(v);
  check_collectives<"y">(v);
}

TEST_CASE("a dynamic dim inferred from the world (HSDP)") {
  auto world = dm::mpi::world();
  using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 2>>;
  if (world.size() % 2 != 0) return;
  const auto h = dm::init_device_mesh<hsdp>(world);
  check_collectives<"replicate">(h);
  check_collectives<"shard">(h);
}

// std::complex is recognised by its interface (mpi/datatype.hpp includes no <complex>): it
// maps to MPI's complex types, sums as complex numbers, and op::avg divides it.
struct two_floats {
  float re, im;
};
static_assert(dm::mpi::has_datatype<std::complex<float>> && dm::mpi::has_datatype<const std::complex<double>>);
static_assert(!dm::mpi::has_datatype<std::complex<long double>> && !dm::mpi::has_datatype<two_floats>);
TEST_CASE("std::complex elements: MPI's complex types, sum and avg") {
  CHECK(dm::mpi::datatype<std::complex<float>>() == MPI_CXX_FLOAT_COMPLEX);
  CHECK(dm::mpi::datatype<std::complex<double>>() == MPI_CXX_DOUBLE_COMPLEX);
  auto world = dm::mpi::world();
  const int n = world.size();
  const auto m = dm::init_device_mesh(world, dm::mesh<dm::dim<"dp">>(n));
  const double r = m.rank();
  std::vector<std::complex<double>> sum{{r, 1.0}, {1.0, -r}};
  dm::all_reduce<"dp">(m, sum, dm::op::sum);
  const double ranks = n * (n - 1) / 2.0;
  CHECK_EQ(sum[0], std::complex<double>(ranks, n));
  CHECK_EQ(sum[1], std::complex<double>(n, -ranks));
  std::vector<std::complex<float>> avg{{2.0f * static_cast<float>(r), 4.0f}};
  dm::all_reduce<"dp">(m, avg, dm::op::avg);
  CHECK_EQ(avg[0], std::complex<float>(static_cast<float>(n - 1), 4.0f));
}

// bool: MPI_CXX_BOOL takes only MPI's logical ops, so op::sum and op::max reduce with a
// logical or, op::prod and op::min with a logical and (PyTorch's meaning on bool tensors);
// op::avg is refused before any communication. Flag k of rank r is flag(r, k); each result
// is checked against the or / and of the group's flags computed here.
static bool flag(int r, int k) { return (r + k) % 3 == 0; }
template <class G, class F>
static bool any_of_group(const G& g, F f) {
  for (int r : g)
    if (f(r)) return true;
  return false;
}
template <class G, class F>
static bool all_of_group(const G& g, F f) {
  for (int r : g)
    if (!f(r)) return false;
  return true;
}

template <dm::fixed_string N, class DM>
void check_bools(const DM& m) {
  const auto g = dm::group<N>(m.layout(), m.rank());
  const int n = g.size(), me = m.rank(), li = g.index_of(me);
  const auto k_of = [](int k) { return [k](int r) { return flag(r, k); }; };
  constexpr int K = 4;
  std::array<bool, K> mine{};
  for (int k = 0; k < K; ++k) mine[static_cast<std::size_t>(k)] = flag(me, k);

  for (dm::op o : {dm::op::sum, dm::op::max, dm::op::prod, dm::op::min}) {
    const bool is_or = o == dm::op::sum || o == dm::op::max;
    auto expect = [&](int k) { return is_or ? any_of_group(g, k_of(k)) : all_of_group(g, k_of(k)); };
    std::array<bool, K> in_place = mine;  // std::array, in place
    dm::all_reduce<N>(m, in_place, o);
    bool out[K] = {};  // a C array, out of place
    dm::all_reduce<N>(m, mine, out, o);
    bool reduced[K] = {true, true, true, true};  // onto the last local rank
    dm::reduce<N>(m, std::span<const bool>(mine), std::span<bool>(reduced), o, n - 1);
    for (int k = 0; k < K; ++k) {
      const auto i = static_cast<std::size_t>(k);
      CHECK_EQ(in_place[i], expect(k));
      CHECK_EQ(out[i], expect(k));
      CHECK_EQ(reduced[i], li == n - 1 ? expect(k) : true);
    }
    // Partly overlapping send and recv: MPI gets a copy of send.
    bool overlap[K + 1] = {};
    for (int k = 0; k < K; ++k) overlap[k + 1] = flag(me, k);
    dm::all_reduce<N>(m, std::span<bool>(overlap + 1, K), std::span<bool>(overlap, K), o);
    for (int k = 0; k < K; ++k) CHECK_EQ(overlap[k], expect(k));
    // reduce_scatter: flag k of block j on rank r is flag(r + j, k); this rank gets block li.
    const auto blocks = std::make_unique<bool[]>(static_cast<std::size_t>(n * K));
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < K; ++k) blocks[static_cast<std::size_t>(j * K + k)] = flag(me + j, k);
    std::array<bool, K> block{};
    dm::reduce_scatter<N>(m, std::span<bool>(blocks.get(), static_cast<std::size_t>(n * K)), block, o);
    for (int k = 0; k < K; ++k) {
      const auto f = [&](int r) { return flag(r + li, k); };
      CHECK_EQ(block[static_cast<std::size_t>(k)], is_or ? any_of_group(g, f) : all_of_group(g, f));
    }
  }
  std::array<bool, K> avg = mine;
  CHECK_THROWS_WITH_AS(dm::all_reduce<N>(m, avg, dm::op::avg), doctest::Contains("op::avg on bool elements"),
                       dm::comm_error);

  // Moves: all_gather, broadcast, all_to_all, shift.
  const auto all = std::make_unique<bool[]>(static_cast<std::size_t>(n * K));
  dm::all_gather<N>(m, mine, std::span<bool>(all.get(), static_cast<std::size_t>(n * K)));
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < K; ++k) CHECK_EQ(all[static_cast<std::size_t>(i * K + k)], flag(g[i], k));
  std::array<bool, K> b = mine;
  dm::broadcast<N>(m, b, n - 1);
  for (int k = 0; k < K; ++k) CHECK_EQ(b[static_cast<std::size_t>(k)], flag(g[n - 1], k));
  const auto send = std::make_unique<bool[]>(static_cast<std::size_t>(n)),
             recv = std::make_unique<bool[]>(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) send[static_cast<std::size_t>(j)] = flag(me, j);
  dm::all_to_all<N>(m, std::span<bool>(send.get(), static_cast<std::size_t>(n)),
                    std::span<bool>(recv.get(), static_cast<std::size_t>(n)));
  for (int i = 0; i < n; ++i) CHECK_EQ(recv[static_cast<std::size_t>(i)], flag(g[i], li));
  std::array<bool, K> shifted = mine;  // shift(buf, buf): MPI gets a copy of send
  dm::shift<N>(m, shifted, shifted, 1, true);
  for (int k = 0; k < K; ++k) CHECK_EQ(shifted[static_cast<std::size_t>(k)], flag(g[(li + n - 1) % n], k));
}

static_assert(dm::mpi::has_datatype<bool>);
TEST_CASE("bool elements: sum and max are a logical or, prod and min a logical and; avg refused") {
  CHECK(dm::mpi::datatype<bool>() == MPI_CXX_BOOL);
  auto world = dm::mpi::world();
  const int w = world.size();
  check_bools<"dp">(dm::init_device_mesh(world, dm::mesh<dm::dim<"dp">>(w)));
  const int tp = w >= 2 ? 2 : 1;
  const auto m = dm::init_device_mesh(world, dm::mesh<dm::dim<"dp">, dm::dim<"tp">>(w / tp, tp));
  check_bools<"dp">(m);
  check_bools<"tp">(m);
}
// NaN in op::max and op::min: a NaN that any rank holds is the result on every rank, as
// torch.maximum and torch.minimum give (MPI's MPI_MAX leaves NaN to the implementation: Open
// MPI's dropped it unless the last rank held it). Each rank in turn holds the NaN; element 1
// holds none (the plain max and min), element 2 a NaN on the holder and -inf on the others.
template <class F, class DM>
void check_nan(const DM& m, int holder) {
  const int n = dm::comm<"dp">(m).size(), me = m.rank();
  const F nan = std::numeric_limits<F>::quiet_NaN(), inf = std::numeric_limits<F>::infinity();
  const std::array<F, 3> mine{me == holder ? nan : static_cast<F>(me), static_cast<F>(me), me == holder ? nan : -inf};
  for (dm::op o : {dm::op::max, dm::op::min}) {
    INFO("NaN on rank " << holder << ", op::" << (o == dm::op::max ? "max" : "min"));
    const F plain = o == dm::op::max ? static_cast<F>(n - 1) : F{0};
    std::array<F, 3> r = mine;
    dm::all_reduce<"dp">(m, r, o);
    CHECK(std::isnan(r[0]));
    CHECK_EQ(r[1], plain);
    CHECK(std::isnan(r[2]));
    std::array<F, 3> at_root{};
    dm::reduce<"dp">(m, std::span<const F>(mine), std::span<F>(at_root), o, n - 1);
    if (me == n - 1) CHECK(std::isnan(at_root[0]));
    // reduce_scatter: every block holds the holder's NaN.
    std::vector<F> blocks(static_cast<std::size_t>(n), me == holder ? nan : static_cast<F>(me));
    std::array<F, 1> block{};
    dm::reduce_scatter<"dp">(m, blocks, block, o);
    CHECK(std::isnan(block[0]));
  }
}
TEST_CASE("a NaN on any rank wins op::max and op::min on every rank (float, double, long double)") {
  auto world = dm::mpi::world();
  const auto m = dm::init_device_mesh(world, dm::mesh<dm::dim<"dp">>(world.size()));
  for (int holder = 0; holder < world.size(); ++holder) {
    check_nan<float>(m, holder);
    check_nan<double>(m, holder);
    check_nan<long double>(m, holder);
  }
}

// Which path the collectives above took: with DEVMESH_WATCHDOG set, the watchdog's (issued
// non-blocking, MPI_Iallreduce, and waited for under its bound), else the plain blocking call.
// Counted on the dim's own communicator by PMPI wrappers (call_counter.hpp).
TEST_CASE("the watchdog's path is taken exactly when DEVMESH_WATCHDOG is set") {
  const char* env = std::getenv("DEVMESH_WATCHDOG");
  const bool watched = env != nullptr && std::atof(env) > 0;
  auto world = dm::mpi::world();
  const auto m = dm::init_device_mesh(world, dm::mesh<dm::dim<"world">>(world.size()));
  const MPI_Comm c = dm::comm<"world">(m).native();
  const std::size_t blocking = call_counter::allreduce(c), nonblocking = call_counter::iallreduce(c);
  constexpr int calls = 3;
  std::vector<float> v{1.0f};
  for (int i = 0; i < calls; ++i) dm::all_reduce<"world">(m, std::span(v), dm::op::sum);
  CHECK_EQ(v[0], static_cast<float>(world.size() * world.size() * world.size()));
  MESSAGE("DEVMESH_WATCHDOG=" << std::string(env ? env : "(unset)") << ": " << call_counter::iallreduce(c) - nonblocking
                              << " MPI_Iallreduce, " << call_counter::allreduce(c) - blocking << " MPI_Allreduce");
  CHECK_EQ(call_counter::iallreduce(c) - nonblocking, watched ? calls : 0);
  CHECK_EQ(call_counter::allreduce(c) - blocking, watched ? 0 : calls);
}
}  // namespace mpi_collectives_test
