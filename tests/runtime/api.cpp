// The runtime's call forms (issue 21): collectives and queries as free functions (generic
// code without `.template`), the unnamed forms on 1-D meshes, buffers as any contiguous
// range, and dims chosen at run time by name or index (dim_ref), aliases included, with
// one index domain in the core and the runtime. Run under mpirun with 1, 2, 4 and 8 ranks.
#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <devmesh/devmesh.hpp>
#include <devmesh/runtime/impl/consensus.hpp>  // rank_groups, an implementation detail tested here

#include "../mpi/mpi_doctest.hpp"

namespace dm = devmesh;
using namespace dm::literals;
using mesh2 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;

// ---- the free forms on layouts, at compile time ----------------------------------------------
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;
constexpr mesh3d m3{};
static_assert(dm::size<"cp">(m3) == 2);
static_assert(dm::dim_index<"tp">(m3) == 2);
static_assert(dm::local_rank<"tp">(m3, 5) == 1);
static_assert(dm::group<"dp", "cp">(m3, 1)[3] == 7);
static_assert(dm::comm_split<"tp">(m3, 5) == dm::split_args{4, 1});
static_assert(dm::size<"dp_cp">(dm::flatten<"dp_cp", "dp", "cp">(m3)) == 4);
static_assert(dm::slice<"tp", "dp">(m3).size() == 4);
static_assert(dm::flatten(m3).ndim == 1);
static_assert(dm::size<"a">(dm::unflatten<"dp", dm::dim<"a", 1>, dm::dim<"b", 2>>(m3)) == 1);

/// Generic code in the free forms: no `.template` anywhere.
template <dm::fixed_string N, class Mesh>
long sum_over(const Mesh& mesh, long value) {
  std::vector<long> v{value};
  dm::all_reduce<N>(mesh, v, dm::op::sum);
  return v[0] + 0 * dm::size<N>(mesh) + 0 * dm::local_rank<N>(mesh) + 0 * dm::comm<N>(mesh).size();
}

/// Every collective in its free form, each buffer a different contiguous range.
TEST_CASE("every collective in its free form, each buffer a different contiguous range") {
  auto world = dm::mpi::world();
  const int w = world.size(), me = world.rank();
  auto mesh = dm::init_device_mesh(world, mesh2(w >= 2 ? w / 2 : 1, w >= 2 ? 2 : 1));
  const auto g = mesh.layout().group<"tp">(mesh.position());
  const int n = g.size(), li = g.index_of(mesh.position());
  long group_sum = 0;
  for (int r : g) group_sum += r;
  CHECK_EQ(sum_over<"tp">(mesh, me), group_sum);
  CHECK_EQ(sum_over<"tp">(mesh.slice<"tp">(), me), group_sum);  // a 1-D mesh, named
  // std::array in place, a C array out of place.
  std::array<int, 2> a{me, 1};
  dm::all_reduce<"tp">(mesh, a, dm::op::max);
  CHECK_EQ(a[0], g.back());
  int in[2] = {me, me}, out[2] = {};
  dm::all_reduce<"tp">(mesh, in, out, dm::op::min);
  CHECK_EQ(out[1], g.front());
  // reduce, broadcast: vectors.
  std::vector<double> r{1.0};
  dm::reduce<"tp">(mesh, r, dm::op::sum, 0);
  if (li == 0) CHECK_EQ(r[0], static_cast<double>(n));
  std::vector<int> b{li == n - 1 ? 42 : -1};
  dm::broadcast<"tp">(mesh, b, n - 1);
  CHECK_EQ(b[0], 42);
  // all_gather from a const vector into a vector; reduce_scatter and all_to_all back.
  const std::vector<int> mine{me};
  std::vector<int> all(static_cast<std::size_t>(n));
  dm::all_gather<"tp">(mesh, mine, all);
  for (int i = 0; i < n; ++i) CHECK_EQ(all[static_cast<std::size_t>(i)], g[i]);
  std::vector<int> piece(1);
  dm::reduce_scatter<"tp">(mesh, all, piece, dm::op::sum);
  CHECK_EQ(piece[0], n * g[li]);
  std::vector<int> back(static_cast<std::size_t>(n));
  dm::all_to_all<"tp">(mesh, all, back);
  for (int i = 0; i < n; ++i) CHECK_EQ(back[static_cast<std::size_t>(i)], g[li]);
  // shift, send_next / recv_prev, barrier, shift_peers.
  const auto [source, dest] = dm::shift_peers<"tp">(mesh, 1, true);
  CHECK_EQ(dest, (li + 1) % n);
  std::vector<int> from(1, -1);
  dm::shift<"tp">(mesh, mine, from, 1, true);
  CHECK_EQ(from[0], g[source]);
  std::vector<int> prev{-1};
  if (li % 2 == 0) {
    dm::send_next<"tp">(mesh, mine);
    dm::recv_prev<"tp">(mesh, prev);
  } else {
    dm::recv_prev<"tp">(mesh, prev);
    dm::send_next<"tp">(mesh, mine);
  }
  CHECK_EQ(prev[0], li == 0 ? -1 : g[li - 1]);
  dm::barrier<"dp">(mesh);
}

/// A 1-D mesh needs no name: comm(), local_rank() and every collective.
TEST_CASE("a 1-D mesh needs no name") {
  auto world = dm::mpi::world();
  const int w = world.size(), me = world.rank();
  auto mesh = dm::init_device_mesh(world, mesh2(w >= 2 ? w / 2 : 1, w >= 2 ? 2 : 1));
  auto flat = mesh.flatten<"all">().slice<"all">();
  CHECK(flat.comm().native() == flat.comm<"all">().native());
  CHECK_EQ(flat.local_rank(), me);
  std::vector<int> v{me};
  flat.all_reduce(v, dm::op::sum);
  CHECK_EQ(v[0], w * (w - 1) / 2);
  std::vector<int> all(static_cast<std::size_t>(w));
  dm::all_gather(flat, std::span<const int>(&me, 1), all);
  for (int i = 0; i < w; ++i) CHECK_EQ(all[static_cast<std::size_t>(i)], i);
  CHECK(dm::comm(flat).native() == flat.comm().native());
}

/// Dims chosen at run time: names and indices, aliases after the mesh's own dims, as in the
/// core (dim_index<"name">()); errors list the dims.
TEST_CASE("dims chosen at run time by name or index, aliases included") {
  auto world = dm::mpi::world();
  const int w = world.size();
  auto mesh = dm::init_device_mesh(world, mesh2(w >= 2 ? w / 2 : 1, w >= 2 ? 2 : 1));
  auto flat = mesh.flatten<"dp_tp", "dp", "tp">();
  const int alias = flat.dim_index("dp_tp");
  CHECK_EQ(alias, 2);
  CHECK_EQ(alias, decltype(flat)::layout_type::dim_index<"dp_tp">());
  CHECK_EQ(flat.size(alias), w);
  CHECK_EQ(flat.size(std::string("dp_tp")), w);
  CHECK(flat.comm(alias).native() == flat.comm<"dp_tp">().native());
  CHECK_EQ(flat.local_rank(alias), flat.local_rank<"dp_tp">());
  CHECK_EQ(flat.local_rank("tp"), flat.local_rank(1));
  const std::string bad = CHECK_THROWS_WHAT(dm::mesh_error, flat.comm(3), "comm(3): dim index not in [0, 3)");
  CHECK(bad.find("dims: dp, tp (aliases: dp_tp)") != std::string::npos);
  CHECK_THROWS_WITH_AS(flat.size("pp"), doctest::Contains("size(\"pp\"): unknown dim 'pp'"), dm::mesh_error);
  CHECK_THROWS_WITH_AS(mesh.local_rank(-1),
                       doctest::Contains("local_rank(-1): dim index not in [0, 2)"), dm::mesh_error);
}

/// A moved-from handle keeps its layout and holds no communicators: every member that needs
/// them, or this rank, throws mesh_error naming itself (never a null dereference); copies,
/// assignment, destruction, ==, hash and to_string work, and assigning a mesh revives it.
TEST_CASE("a moved-from device_mesh: its queries and collectives throw mesh_error") {
  auto world = dm::mpi::world();
  const int w = world.size();
  for (bool check : {false, true}) {  // the check mode reads the state in collectives too
    CAPTURE(check);
    dm::device_mesh_options<dm::mpi::communicator> o;
    o.check_collectives = check;
    auto mesh = dm::init_device_mesh(world, mesh2(w >= 2 ? w / 2 : 1, w >= 2 ? 2 : 1), o);
    const auto other = mesh.slice<"dp", "tp">();  // shares the state: it survives the move
    auto moved = mesh;
    const auto taken = std::move(moved);
    // Layout queries need no state.
    CHECK_EQ(moved.size(), w);
    CHECK_EQ(moved.size<"tp">(), mesh.size<"tp">());
    CHECK(moved.layout() == mesh.layout());
    CHECK_EQ(moved.dim_index("tp"), 1);
    const std::string rest = ": this device_mesh was moved from: it keeps its layout, " + to_string(mesh.layout()) +
                             ", and no communicators; assign a mesh to it before using it";
#define MOVED_FROM(expr, what) \
  CHECK_THROWS_WITH_AS((void)(expr), test::containing("devmesh: " what + rest), dm::mesh_error)
    MOVED_FROM(moved.rank(), "rank");
    MOVED_FROM(moved.position(), "position");
    MOVED_FROM(moved.rank_map(), "rank_map");
    MOVED_FROM(moved.node_of_rank(), "node_of_rank");
    MOVED_FROM(moved.world_size(), "world_size");
    MOVED_FROM(moved.is_member(), "is_member");
    MOVED_FROM(moved.coordinate(), "coordinate");
    MOVED_FROM(moved.local_rank<"tp">(), "local_rank");
    MOVED_FROM(moved.local_rank("dp"), "local_rank");
    MOVED_FROM(moved.comm<"tp">(), "comm");
    MOVED_FROM(dm::comm<"dp">(moved), "comm");
    MOVED_FROM(moved.comm(1), "comm");
    MOVED_FROM(moved.flattened_comm(3u), "flattened_comm");
    MOVED_FROM(moved.flattened_comm(1u), "flattened_comm");
    MOVED_FROM(moved.world(), "world");
    MOVED_FROM(moved.communicator_count(), "communicator_count");
    MOVED_FROM(moved.options(), "options");
    MOVED_FROM(moved.slice<"tp">(), "slice");
    MOVED_FROM(moved["dp"_dim], "slice");
    MOVED_FROM(moved.flatten<"dp_tp">(), "flatten");
    MOVED_FROM(moved.flatten<"dp_tp">(dm::mpi::comm_options{}), "flatten");
    MOVED_FROM((moved.unflatten<"tp", dm::dim<"a">, dm::dim<"b", 1>>()), "unflatten");
    auto dp = other.slice<"dp">();
    auto tp = other.slice<"tp">();
    const auto dp_taken = std::move(dp);
    const auto tp_taken = std::move(tp);
    const auto concatenate = doctest::Contains("devmesh: concatenate: this device_mesh was moved from");
    CHECK_THROWS_WITH_AS((void)dp.concatenate(tp_taken), concatenate, dm::mesh_error);  // either side moved from
    CHECK_THROWS_WITH_AS((void)dp_taken.concatenate(tp), concatenate, dm::mesh_error);
    CHECK(dp_taken.concatenate(tp_taken) == other);
    MOVED_FROM(moved.ranks(), "ranks");
    MOVED_FROM(dm::rank_nested(moved), "ranks");
    MOVED_FROM(dm::rank_grid(moved), "ranks");
    MOVED_FROM(moved.topology(), "topology");
    MOVED_FROM(moved.root<mesh2>(), "root");
    std::vector<int> v{1}, vs(static_cast<std::size_t>(w));
    MOVED_FROM(moved.all_reduce<"tp">(v, dm::op::sum), "all_reduce");
    MOVED_FROM(dm::all_reduce<"dp">(moved, v, v, dm::op::sum), "all_reduce");
    MOVED_FROM(moved.reduce<"tp">(v, dm::op::sum, 0), "reduce");
    MOVED_FROM(moved.broadcast<"tp">(v, 0), "broadcast");
    MOVED_FROM(moved.all_gather<"tp">(v, vs), "all_gather");
    MOVED_FROM(moved.reduce_scatter<"tp">(vs, v, dm::op::sum), "reduce_scatter");
    MOVED_FROM(moved.all_to_all<"tp">(vs, vs), "all_to_all");
    MOVED_FROM(moved.barrier<"dp">(), "barrier");
    MOVED_FROM(moved.shift_peers<"tp">(), "shift_peers");
    MOVED_FROM(moved.shift<"tp">(v, v), "shift");
    MOVED_FROM(moved.send_next<"tp">(v), "send_next");
    MOVED_FROM(moved.recv_prev<"tp">(v), "recv_prev");
#undef MOVED_FROM
    moved.abort();  // noexcept: nothing to abort
    // to_string, ==, hash, copies: no state needed.
    CHECK(to_string(moved).find(", moved from)") != std::string::npos);
    auto copy = moved;
    CHECK(copy == moved);
    CHECK(!(copy == taken));
    CHECK_EQ(copy.hash(), std::hash<decltype(moved)>{}(moved));
    CHECK_THROWS_AS((void)copy.rank(), dm::mesh_error);
    auto moved_again = std::move(copy);  // a moved-from handle moves as well
    CHECK_THROWS_AS((void)moved_again.world_size(), dm::mesh_error);
    // Assigning a mesh revives it; the handle it was moved to works throughout.
    moved = taken;
    CHECK(moved == taken);
    CHECK_EQ(moved.rank(), world.rank());
    copy = std::move(moved);
    CHECK_THROWS_AS((void)moved.rank(), dm::mesh_error);
    CHECK_EQ(sum_over<"tp">(copy, 1), copy.size<"tp">());
    CHECK_EQ(sum_over<"dp">(taken, 1), taken.size<"dp">());
    CHECK_EQ(taken.communicator_count(), other.communicator_count());
  }
}

TEST_CASE("options.per_dim: std::map's interface by dim name, in name order (options_by_dim)") {
  dm::options_by_dim<int> m;
  CHECK(m.empty());
  m["tp"] = 2;
  m["dp"] = 1;
  m[std::string(3, 'c')] = 3;
  std::vector<std::string> names;
  for (const auto& [name, value] : m) names.push_back(name + "=" + std::to_string(value));
  CHECK(names == std::vector<std::string>{"ccc=3", "dp=1", "tp=2"});
  CHECK_EQ(m["pp"], 0);  // operator[] adds default options
  CHECK_EQ(m.size(), 4u);
  CHECK(!m.emplace("tp", 7).second);  // a name keeps its options
  CHECK_EQ(m.find("tp")->second, 2);
  CHECK(m.emplace("ep", 5).second);
  CHECK_EQ(m.erase("pp"), 1u);
  CHECK_EQ(m.erase("pp"), 0u);
  CHECK(m.contains("ep"));
  CHECK_EQ(m.count("xx"), 0u);
  CHECK(m.find("xx") == m.end());
  const auto& view = m;
  CHECK_EQ(view.find("dp")->second, 1);
  CHECK_EQ(view.size(), 4u);
}

// A small deterministic generator for the randomized cases below: next(n) is in [0, n).
struct lcg {
  std::uint64_t state;
  int operator()(int n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(n));
  }
};

TEST_CASE("number_nodes: every rank's node numbered in order of the node's lowest rank") {
  lcg next{12345};
  for (int round = 0; round < 200; ++round) {
    const int ranks = next(40), values = 1 + next(8);
    std::vector<dm::detail::node_key> keys;
    for (int r = 0; r < ranks; ++r) keys.push_back({next(3), next(values)});
    std::vector<dm::detail::node_key> seen;  // the brute force: ids by first appearance
    std::vector<int> expected;
    for (const auto& k : keys) {
      const auto at = std::find(seen.begin(), seen.end(), k);
      expected.push_back(static_cast<int>(at - seen.begin()));
      if (at == seen.end()) seen.push_back(k);
    }
    CHECK(dm::detail::number_nodes(keys) == expected);
  }
}

TEST_CASE("rank_groups: ranks grouped by what they hold, in order of their first rank") {
  const std::vector<std::string> held = {"b", "a", "b", "c", "a", "b"};
  const auto groups = dm::detail::rank_groups(held.size(), [&](int a, int b) {
    return held[static_cast<std::size_t>(a)] == held[static_cast<std::size_t>(b)];
  });
  CHECK(groups == std::vector<std::vector<int>>{{0, 2, 5}, {1, 4}, {3}});
  CHECK(dm::detail::rank_groups(0, [](int, int) { return true; }).empty());
}
