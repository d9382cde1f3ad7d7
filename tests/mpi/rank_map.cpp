// Rank maps (options.rank_map: position -> world rank, PyTorch's mesh tensor) on the MPI
// backend, 1-8 ranks: seeded random permutations (the same on every rank), the reversed
// order, a mesh at an offset (rank_range) with non-members, and a map smaller than the world
// in random order. For each, eager and lazy: every dim's and alias's communicator (size,
// rank, and its members, all-gathered as world ranks with plain MPI over the native
// communicator), coordinate(), local ranks (compile-time, by name, by index), position(),
// ranks(), shift peers, a collective through the mesh, flatten and unflatten; from_comms with
// a map (valid, and with wrongly grouped members: every rank throws).
//
// The expected groups come from a brute-force row-major model (every position's coordinate,
// every group enumerated), mapped through the rank map: nothing from the layout code.
#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <devmesh/devmesh.hpp>

#include "mpi_doctest.hpp"

namespace mpi_rank_map_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;
using namespace dm::literals;
using C = dm::mpi::communicator;
using mesh3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;
using mesh2 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;

namespace {

int me = 0;

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

std::string show(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return "{" + s + "}";
}

/// The brute-force model: a row-major mesh of `sizes` over positions [0, prod(sizes)).
struct model {
  std::vector<int> sizes;
  std::vector<int> map;  // position -> world rank (complete: never empty here)

  int positions() const { return std::accumulate(sizes.begin(), sizes.end(), 1, std::multiplies<>()); }
  std::vector<int> coord(int p) const {
    std::vector<int> c(sizes.size());
    for (std::size_t d = sizes.size(); d-- > 0;) c[d] = p % sizes[d], p /= sizes[d];
    return c;
  }
  /// Positions of p's group over dims S (in S's order, row-major), by enumeration.
  std::vector<int> group(const std::vector<int>& S, int p) const {
    const auto cp = coord(p);
    std::vector<std::pair<long, int>> found;
    for (int q = 0; q < positions(); ++q) {
      const auto cq = coord(q);
      bool same = true;
      for (std::size_t d = 0; d < sizes.size(); ++d)
        if (std::find(S.begin(), S.end(), static_cast<int>(d)) == S.end() && cq[d] != cp[d]) same = false;
      if (!same) continue;
      long key = 0;
      for (int d : S) key = key * sizes[static_cast<std::size_t>(d)] + cq[static_cast<std::size_t>(d)];
      found.push_back({key, q});
    }
    std::sort(found.begin(), found.end());
    std::vector<int> out;
    for (const auto& f : found) out.push_back(f.second);
    return out;
  }
  std::vector<int> world(const std::vector<int>& positions) const {
    std::vector<int> out;
    for (int p : positions) out.push_back(map[static_cast<std::size_t>(p)]);
    return out;
  }
  /// This world rank's position, or -1.
  int position_of(int w) const {
    const auto it = std::find(map.begin(), map.end(), w);
    return it == map.end() ? -1 : static_cast<int>(it - map.begin());
  }
};

/// Dim N of `mesh` against the model's group over S: communicator size, rank and members
/// (plain MPI over the native communicator), local rank, a sum and an all_gather through the
/// mesh. Members only.
template <dm::fixed_string N, class M>
void check_dim(const M& mesh, const model& mo, const std::vector<int>& S, const std::string& label) {
  const int p = mo.position_of(me);
  const std::vector<int> expected = mo.world(mo.group(S, p));
  const std::string what = label + " dim '" + std::string(N.view()) + "'";
  const C& c = dm::comm<N>(mesh);
  const int idx = static_cast<int>(std::find(expected.begin(), expected.end(), me) - expected.begin());
  CHECK_EQ(c.size(), static_cast<int>(expected.size()));
  CHECK_EQ(c.rank(), idx);
  CHECK_EQ(dm::local_rank<N>(mesh), idx);
  CHECK_EQ(mesh.local_rank(N.view()), idx);
  std::vector<int> members(expected.size(), -1);
  MPI_Allgather(&me, 1, MPI_INT, members.data(), 1, MPI_INT, c.native());
  CHECK_MESSAGE(members == expected, (what + ": members " + show(members) + ", expected " + show(expected)));
  std::vector<long> v{me, 1};
  dm::all_reduce<N>(mesh, std::span(v), dm::op::sum);
  CHECK_EQ(v[0], std::accumulate(expected.begin(), expected.end(), 0L));
  CHECK_EQ(v[1], static_cast<long>(expected.size()));
  std::vector<int> gathered(expected.size(), -1);
  const std::vector<int> mine{me};
  dm::all_gather<N>(mesh, std::span<const int>(mine), std::span(gathered));
  CHECK_MESSAGE(gathered == expected, (what + ": all_gather " + show(gathered) + ", expected " + show(expected)));
}

/// "a, b, c".
std::string joined(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

/// The model's world ranks nested by its three dims, as PyTorch prints its mesh tensor.
std::string nested3(const model& mo) {
  std::string s = "[";
  for (int a = 0; a < mo.sizes[0]; ++a) {
    s += a ? ", [" : "[";
    for (int b = 0; b < mo.sizes[1]; ++b) {
      s += b ? ", [" : "[";
      for (int c = 0; c < mo.sizes[2]; ++c)
        s += (c ? ", " : "") + std::to_string(mo.map[static_cast<std::size_t>((a * mo.sizes[1] + b) * mo.sizes[2] + c)]);
      s += "]";
    }
    s += "]";
  }
  return s + "]";
}

/// Everything about a (dp, cp, tp) mesh over map `mo`, members and non-members.
template <class M>
void check_mesh3(const M& mesh, const model& mo, const std::string& label) {
  const int p = mo.position_of(me);
  CHECK_EQ(mesh.is_member(), p >= 0);
  CHECK_EQ(mesh.rank(), me);
  CHECK((mesh.rank_map() == mo.map || (mesh.rank_map().empty() && mo.map == dm::rank_range(0, mo.positions()))));
  if (p < 0) {
    CHECK(!mesh.coordinate().has_value());
    std::string msg;
    try {
      (void)dm::local_rank<"tp">(mesh);
    } catch (const dm::mesh_error& e) {
      msg = e.what();
    }
    CHECK(contains(msg, "is not a member of this mesh"));
    CHECK((contains(msg, "rank map holds world ranks") || mesh.rank_map().empty()));
    return;
  }
  CHECK_EQ(mesh.position(), p);
  const auto c = mo.coord(p);
  CHECK((mesh.coordinate() == std::array<int, 3>{c[0], c[1], c[2]}));
  CHECK_EQ(mesh.local_rank(0), c[0]);
  CHECK_EQ(mesh.local_rank(2), c[2]);
  CHECK(mesh.ranks() == mo.map);  // the whole root, row-major, as world ranks
  CHECK(mesh["cp"_dim].ranks() == mo.world(mo.group({1}, p)));
  CHECK(dm::rank_nested(mesh) == nested3(mo));  // PyTorch's mesh tensor: world ranks, nested
  CHECK(dm::rank_nested(mesh["cp"_dim]) == "[" + joined(mo.world(mo.group({1}, p))) + "]");
  CHECK(dm::rank_grid(mesh["cp"_dim]).ends_with(" " + std::to_string(mo.world(mo.group({1}, p)).back()) + "\n"));
  const auto [src, dst] = dm::shift_peers<"tp">(mesh, 1, true);
  CHECK_EQ(src, (c[2] + mo.sizes[2] - 1) % mo.sizes[2]);
  CHECK_EQ(dst, (c[2] + 1) % mo.sizes[2]);
  check_dim<"dp">(mesh, mo, {0}, label);
  check_dim<"cp">(mesh, mo, {1}, label);
  check_dim<"tp">(mesh, mo, {2}, label);
  // shift along tp: receive the world rank of the previous position's rank.
  std::vector<int> mine{me}, got{-1};
  dm::shift<"tp">(mesh, std::span<const int>(mine), std::span(got), 1, true);
  const auto tp = mo.world(mo.group({2}, p));
  CHECK_EQ(got[0], tp[static_cast<std::size_t>(src)]);
}

/// Derived meshes over the map: flatten (adjacent, transposed), a slice of one.
/// Collective over the world in eager mode; lazy mode: members only (derivation is local).
template <class M>
void check_derived(const M& mesh, const model& mo, const std::string& label, bool lazy) {
  const bool member = mo.position_of(me) >= 0;
  if (lazy && !member) return;
  auto f = dm::flatten<"dp_cp", "dp", "cp">(mesh);
  auto t = dm::flatten<"tp_dp", "tp", "dp">(mesh);
  if (!member) return;
  check_dim<"dp_cp">(f, mo, {0, 1}, label + " flatten");
  check_dim<"tp_dp">(t, mo, {2, 0}, label + " transposed flatten");
  check_dim<"tp_dp">(dm::slice<"tp_dp">(t), mo, {2, 0}, label + " slice of a flatten");
  CHECK(f.rank_map() == mesh.rank_map());
}

/// A 2-D mesh (1, n) whose tp is unflattened into (a, 2): positions refine tp row-major.
void check_unflatten(C& world, const std::vector<int>& map, bool lazy, const std::string& label) {
  const int n = static_cast<int>(map.size());
  if (n < 2 || n % 2) return;
  dm::device_mesh_options<C> o;
  o.rank_map = map;
  o.lazy = lazy;
  auto mesh = dm::init_device_mesh(world, mesh2(1, n), o);
  const model mo{{1, n / 2, 2}, map};  // (dp, a, b)
  if (lazy && !mesh.is_member()) return;
  auto un = mesh.unflatten<"tp", dm::dim<"a">, dm::dim<"b", 2>>();
  auto ab = un.flatten<"ab", "a", "b">();  // the groups of the old tp again (eager: every rank)
  if (!un.is_member()) return;
  check_dim<"a">(un, mo, {1}, label + " unflatten a");
  check_dim<"b">(un, mo, {2}, label + " unflatten b");
  check_dim<"ab">(ab, mo, {1, 2}, label + " unflatten, flattened back");
}

/// (dp, cp, tp) sizes for n positions.
std::vector<int> sizes_for(int n) {
  if (n >= 8) return {n / 4, 2, 2};
  if (n >= 4) return {1, n / 2, 2};
  if (n >= 2) return {1, 1, n};
  return {1, 1, 1};
}

void run_map(C& world, const std::vector<int>& map, const std::string& label) {
  const auto sz = sizes_for(static_cast<int>(map.size()));
  const model mo{sz, map};
  for (const bool lazy : {false, true}) {
    const std::string l = label + (lazy ? " (lazy)" : "");
    dm::device_mesh_options<C> o;
    o.rank_map = map;
    o.lazy = lazy;
    auto mesh = dm::init_device_mesh(world, mesh3(sz[0], sz[1], sz[2]), o);
    check_mesh3(mesh, mo, l);
    check_derived(mesh, mo, l, lazy);
    check_unflatten(world, map, lazy, l);
  }
}

/// Communicators for each dim of `mo` made with plain MPI_Comm_split from the model (color:
/// the group's first position, key: the index), non-members MPI_UNDEFINED.
std::array<C, 3> comms_for(const model& mo, bool swap_tp_members) {
  const int p = mo.position_of(me);
  std::array<C, 3> out;
  for (int d = 0; d < 3; ++d) {
    int color = MPI_UNDEFINED, key = 0;
    if (p >= 0) {
      const auto g = mo.group({d}, p);
      color = g.front();
      key = static_cast<int>(std::find(g.begin(), g.end(), p) - g.begin());
      // Wrong members, right sizes and ranks: the odd members of two groups trade places.
      if (d == 2 && swap_tp_members && key % 2 == 1) color = (color / 2) % 2 == 0 ? color + 2 : color - 2;
    }
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, color, key, &c);
    out[static_cast<std::size_t>(d)] = c == MPI_COMM_NULL ? C{} : C::adopt(c);
  }
  return out;
}

void from_comms_with_map(C& world, const std::vector<int>& map, const std::string& label) {
  const auto sz = sizes_for(static_cast<int>(map.size()));
  const model mo{sz, map};
  dm::device_mesh_options<C> o;
  o.rank_map = map;
  auto mesh = dm::from_comms(world, comms_for(mo, false), mesh3(sz[0], sz[1], sz[2]), o);
  check_mesh3(mesh, mo, label + " from_comms");
  // tp groups of size 2, at least two of them, with first positions 0, 2, 4, ...: swapping
  // the odd members keeps every size and rank and breaks the membership.
  if (sz[2] != 2 || mo.positions() < 4) return;
  std::string msg;
  try {
    (void)dm::from_comms(world, comms_for(mo, true), mesh3(sz[0], sz[1], sz[2]), o);
  } catch (const dm::mesh_error& e) {
    msg = e.what();
  }
  CHECK(contains(msg, "from_comms failed on"));
  CHECK(contains(msg, "dim 'tp': rank 1 of the communicator is world rank"));
  if (!mesh.rank_map().empty()) CHECK(contains(msg, "of the rank map)"));
}

std::vector<int> permutation(int n, unsigned seed) {
  std::vector<int> v = dm::rank_range(0, n);
  std::mt19937 g(seed);
  for (int i = n - 1; i > 0; --i) std::swap(v[static_cast<std::size_t>(i)], v[g() % static_cast<unsigned>(i + 1)]);
  return v;
}

/// The world, with `me` set to this rank.
C world_here() {
  C world = dm::mpi::world();
  me = world.rank();
  return world;
}

}  // namespace

TEST_CASE("seeded random permutations, the same on every rank") {
  C world = world_here();
  for (unsigned seed : {1u, 7u, 2024u})
    run_map(world, permutation(world.size(), seed), "permutation " + std::to_string(seed));
}

TEST_CASE("the reversed order and the identity") {
  C world = world_here();
  std::vector<int> reversed = dm::rank_range(0, world.size());
  std::reverse(reversed.begin(), reversed.end());
  run_map(world, reversed, "reversed");
  run_map(world, dm::rank_range(0, world.size()), "identity");
}

TEST_CASE("a mesh at an offset, and a map smaller than the world in random order") {
  C world = world_here();
  const int w = world.size();
  if (w < 2) return;
  run_map(world, dm::rank_range(w / 2, w - w / 2), "offset");  // world ranks [0, w/2) are not members
  std::vector<int> part = permutation(w, 99);
  part.resize(static_cast<std::size_t>(w / 2));  // w/2 world ranks in random order
  run_map(world, part, "smaller, shuffled");
}

TEST_CASE("from_comms with a map: valid, and wrongly grouped members (every rank throws)") {
  C world = world_here();
  const int w = world.size();
  from_comms_with_map(world, permutation(w, 5), "permutation");
  if (w >= 2) from_comms_with_map(world, dm::rank_range(w / 2, w - w / 2), "offset");
}
}  // namespace mpi_rank_map_test
