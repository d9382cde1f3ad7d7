// Randomized property test: the sharding queries against a brute-force model that
// materializes, for every position, the list of global indices it holds along each tensor
// dim, by running PyTorch 2.15's algorithm on lists (torch.chunk by slicing, _StridedShard as
// chunk-into-pieces-then-chunk-each, split factors from DTensorSpec's shard-order formula),
// and FSDP's padded blocks. Checks, on thousands of random specs (1-3-D meshes, aliases,
// transposed slices, tensor ranks 0-3, zero extents, every placement, orders, rules):
//  - local_shape, global_offset (PyTorch's: first held index, or the extent), global_index,
//    padding: equal to the model's lists;
//  - every global element is held by exactly the positions owners() names (and holds()
//    agrees), and by exactly the product of the non-sharding dims' sizes of them: the blocks
//    of one replica tile the tensor;
//  - local_sizes<dim> are the model's counts; is_even() is "every block the same shape";
//  - for_each_shared_run against a second random spec: the elements both blocks hold, in
//    global row-major order, at the model's local offsets;
//  - the same blocks read as plain data, as redistribute's executor reads them (a table view
//    and the mesh's values: redistribute/impl/blocks.hpp): index maps, sizes, shared runs, and
//    the positions of a group over any dims (the core's for_each_in_group).
// Explicit orders and _StridedShards as written (placement::strided) are both generated.
// DEVMESH_PROPERTY_SEED and DEVMESH_PROPERTY_CASES override the seed and case count.
#include <doctest/doctest.h>

#include <devmesh/redistribute/impl/blocks.hpp>
#include <devmesh/sharding.hpp>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <numeric>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dm = devmesh;

namespace {

using list = std::vector<long long>;

// torch.chunk(list, n) padded with empty chunks to n.
std::vector<list> torch_chunk(const list& l, long long n) {
  std::vector<list> out;
  const long long cs = (static_cast<long long>(l.size()) + n - 1) / n;
  for (long long c = 0; c < n; ++c) {
    list part;
    for (long long i = c * cs; i < (c + 1) * cs && i < static_cast<long long>(l.size()); ++i) part.push_back(l[i]);
    out.push_back(part);
  }
  return out;
}

// _StridedShard._split_tensor: chunk into sf pieces, each into n, chunk c = every piece's c-th.
list strided_chunk(const list& l, long long n, long long sf, int c) {
  list out;
  for (const list& piece : torch_chunk(l, sf)) {
    const list sub = torch_chunk(piece, n)[c];
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

// A mesh as the model sees it: root axis sizes; each dim a list of root axes (row-major).
struct model_mesh {
  std::vector<int> root;               // root axis sizes
  std::vector<std::vector<int>> dims;  // dims (primary, then aliases) as root axes
  std::vector<std::string> names;
  std::vector<int> apply;       // dims in application order
  std::vector<int> fixed_axes;  // root axes not in the mesh (a slice): fixed by the member
  int size(int d) const {
    int n = 1;
    for (int a : dims[d]) n *= root[a];
    return n;
  }
  int axis_coord(int position, int a) const {
    int stride = 1;
    for (int b = static_cast<int>(root.size()) - 1; b > a; --b) stride *= root[b];
    return (position / stride) % root[a];
  }
  int coord(int position, int d) const {
    int c = 0;
    for (int a : dims[d]) c = c * root[a] + axis_coord(position, a);
    return c;
  }
  int root_size() const { return std::accumulate(root.begin(), root.end(), 1, std::multiplies<>()); }
  bool same_submesh(int p, int q) const {
    for (int a : fixed_axes)
      if (axis_coord(p, a) != axis_coord(q, a)) return false;
    return true;
  }
};

struct model_spec {
  std::vector<dm::placement> at;  // per dim
  std::vector<int> order_rank;    // per dim, -1: mesh order
  std::vector<bool> placed;       // named by the spec (replicate included)
  dm::chunking rule = dm::chunking::uneven;
};

// The model's split factor: DTensorSpec._convert_shard_order_to_StridedShard, with "mesh dim
// index" read as the position in application order.
long long model_split_factor(const model_mesh& m, const model_spec& s, int d) {
  if (s.at[d].split_factor > 1) return s.at[d].split_factor;  // written as _StridedShard
  if (s.order_rank[d] < 0) return 1;
  const auto pos = [&](int e) { return std::find(m.apply.begin(), m.apply.end(), e) - m.apply.begin(); };
  long long f = 1;
  for (int e = 0; e < static_cast<int>(s.at.size()); ++e)
    if (s.at[e].is_shard() && s.at[e].tensor_dim == s.at[d].tensor_dim && s.order_rank[e] >= 0 &&
        s.order_rank[e] < s.order_rank[d] && pos(e) > pos(d))
      f *= m.size(e);
  return f;
}

// The global indices `position` holds along tensor dim t (padded: with the block's padding).
list model_indices(const model_mesh& m, const model_spec& s, int position, int t, long long extent,
                   long long* padding) {
  list l(static_cast<std::size_t>(extent));
  std::iota(l.begin(), l.end(), 0LL);
  *padding = 0;
  if (s.rule == dm::chunking::padded) {
    std::vector<int> sd;
    for (int d : m.apply)
      if (s.at[d].is_shard() && s.at[d].tensor_dim == t) sd.push_back(d);
    std::stable_sort(sd.begin(), sd.end(), [&](int a, int b) { return s.order_rank[a] < s.order_rank[b]; });
    long long block = 0, blocks = 1;
    for (int d : sd) block = block * m.size(d) + m.coord(position, d), blocks *= m.size(d);
    const long long cs = (extent + blocks - 1) / blocks;
    list out;
    for (long long i = block * cs; i < (block + 1) * cs && i < extent; ++i) out.push_back(i);
    *padding = cs - static_cast<long long>(out.size());
    return out;
  }
  for (int d : m.apply) {
    if (!s.at[d].is_shard() || s.at[d].tensor_dim != t) continue;
    const long long sf = model_split_factor(m, s, d);
    l = sf == 1 ? torch_chunk(l, m.size(d))[m.coord(position, d)]
                : strided_chunk(l, m.size(d), sf, m.coord(position, d));
  }
  return l;
}

std::mt19937& rng() {
  static std::mt19937 g([] {
    const char* s = std::getenv("DEVMESH_PROPERTY_SEED");
    return s ? static_cast<unsigned>(std::strtoul(s, nullptr, 10)) : 20261125u;
  }());
  return g;
}
int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng()); }

// A random spec over the dims of m (no two overlapping dims placed).
template <int R>
model_spec random_spec(const model_mesh& m, const std::vector<std::vector<bool>>& overlaps) {
  const int n = static_cast<int>(m.dims.size());
  model_spec s{std::vector<dm::placement>(n), std::vector<int>(n, -1), std::vector<bool>(n, false),
               static_cast<dm::chunking>(pick(0, 2))};
  std::vector<bool>& used = s.placed;
  const auto op = static_cast<dm::reduction>(pick(0, 3));  // one reduction per spec: mixed ones are refused
  for (int d = 0; d < n; ++d) {
    bool free = pick(0, 3) != 0;
    for (int e = 0; e < n; ++e) free = free && !(used[e] && overlaps[d][e]);
    if (!free) continue;
    used[d] = true;
    const int kind = R == 0 ? pick(0, 1) * 2 : pick(0, 3);
    if (kind == 2) s.at[d] = dm::placement::partial_of(op);
    if (kind >= 1 && kind != 2) s.at[d] = dm::placement::sharded(pick(0, R - 1));
  }
  for (int t = 0; t < R; ++t) {  // an explicit order for some tensor dims sharded twice or more
    std::vector<int> sd;
    for (int d = 0; d < n; ++d)
      if (s.at[d].is_shard() && s.at[d].tensor_dim == t) sd.push_back(d);
    if (sd.size() < 2 || pick(0, 1) == 0) {  // else, sometimes, PyTorch's split factors as written
      for (int d : sd)
        if (pick(0, 3) == 0) s.at[d] = dm::placement::strided(t, pick(2, 4));
      continue;
    }
    std::shuffle(sd.begin(), sd.end(), rng());
    for (int i = 0; i < static_cast<int>(sd.size()); ++i) s.order_rank[sd[i]] = i;
  }
  return s;
}

// The same spec as a dynamic_sharding (placements by name, orders as shard_order lists).
template <class Mesh>
dm::dynamic_sharding<Mesh> build(const Mesh& mesh, const model_mesh& m, const model_spec& s, int rank) {
  dm::dynamic_sharding<Mesh> spec(mesh);
  spec.chunk(s.rule);
  const int n = static_cast<int>(s.at.size());
  for (int d = 0; d < n; ++d)
    if (s.order_rank[d] < 0 && s.placed[d]) spec.place(m.names[d], s.at[d]);
  for (int t = 0; t < rank; ++t) {
    std::vector<std::string_view> order(static_cast<std::size_t>(n));
    int count = 0;
    for (int d = 0; d < n; ++d)
      if (s.order_rank[d] >= 0 && s.at[d].tensor_dim == t) order[s.order_rank[d]] = m.names[d], ++count;
    if (count > 0) spec.order(t, std::span<const std::string_view>(order.data(), static_cast<std::size_t>(count)));
  }
  return spec;
}

long long sharded_ranks(const model_mesh& m, const model_spec& s) {
  long long k = 1;
  for (int d = 0; d < static_cast<int>(s.at.size()); ++d)
    if (s.at[d].is_shard()) k *= m.size(d);
  return k;
}

template <int R>
std::array<dm::tensor_index, R> random_shape() {
  std::array<dm::tensor_index, R> shape{};
  const int most = R == 1 ? 20 : R == 2 ? 12 : 6;
  for (auto& e : shape) e = pick(0, 5) == 0 ? pick(0, 2) : pick(1, most);
  return shape;
}

template <int R, class Mesh, class Spec, class E>
void check_elements(const Mesh& mesh, const model_mesh& m, const model_spec& s, const Spec& spec, const E& ext,
                    const std::array<dm::tensor_index, R>& shape, const std::vector<std::array<list, R>>& held,
                    const std::vector<int>& positions, int member) {
  (void)mesh;
  for (long long flat = 0; flat < ext.size(); ++flat) {
    std::array<dm::tensor_index, R> g{};
    long long rest = flat;
    for (int t = R - 1; t >= 0; --t) g[t] = rest % shape[t], rest /= shape[t];
    std::set<int> expected;
    for (int p : positions) {
      bool all = true;
      for (int t = 0; t < R; ++t) all = all && std::count(held[p][t].begin(), held[p][t].end(), g[t]) == 1;
      if (all) expected.insert(p);
    }
    const auto owners = spec.owners(ext, g, member);
    const std::set<int> got(owners.begin(), owners.end());
    REQUIRE(got == expected);
    CHECK(static_cast<long long>(expected.size()) * sharded_ranks(m, s) == static_cast<long long>(positions.size()));
    CHECK(spec.holds(ext, *expected.begin(), g));
  }
}

// The local offset, row-major, of global element g in a block holding lists[t] along each
// tensor dim; -1 where the block does not hold it.
template <int R>
long long model_offset(const std::array<list, R>& lists, const std::array<dm::tensor_index, R>& g) {
  long long o = 0;
  for (int t = 0; t < R; ++t) {
    const auto it = std::find(lists[t].begin(), lists[t].end(), g[t]);
    if (it == lists[t].end()) return -1;
    o = o * static_cast<long long>(lists[t].size()) + (it - lists[t].begin());
  }
  return o;
}

// for_each_shared_run between the case's spec and another random one (what redistribute's
// steps pack and unpack): exactly the elements both blocks hold, in global row-major order,
// as (offset in the first block, offset in the second), each run consecutive in both.
template <int R, class Mesh, class Spec>
void check_shared_runs(const Mesh& mesh, const model_mesh& m, const std::vector<std::vector<bool>>& overlaps,
                       const Spec& spec, const dm::dextents<R>& ext, const std::array<dm::tensor_index, R>& shape,
                       const std::vector<std::array<list, R>>& held, const std::vector<int>& positions) {
  const model_spec s2 = random_spec<R>(m, overlaps);
  if (s2.rule == dm::chunking::padded) return;  // padding is not an element: refused by redistribute
  const auto other = build(mesh, m, s2, R);
  std::vector<std::array<list, R>> held2(held.size());
  std::set<std::size_t> sizes;
  for (int p : positions)
    for (int t = 0; t < R; ++t) {
      long long padding = 0;
      held2[p][t] = model_indices(m, s2, p, t, shape[t], &padding);
      sizes.insert(held2[p][t].size() * static_cast<std::size_t>(R) + static_cast<std::size_t>(t));
    }
  const int p = positions[static_cast<std::size_t>(pick(0, static_cast<int>(positions.size()) - 1))];
  const int q = positions[static_cast<std::size_t>(pick(0, static_cast<int>(positions.size()) - 1))];
  if (s2.rule == dm::chunking::even && sizes.size() > static_cast<std::size_t>(R)) {  // uneven: refused
    CHECK_THROWS_AS((void)dm::for_each_shared_run(spec, p, other, q, ext, [](auto...) {}), dm::mesh_error);
    return;
  }
  std::vector<std::pair<long long, long long>> expected, got;
  for (long long flat = 0; flat < ext.size(); ++flat) {
    std::array<dm::tensor_index, R> g{};
    for (long long rest = flat, t = R - 1; t >= 0; --t) g[t] = rest % shape[t], rest /= shape[t];
    const long long a = model_offset<R>(held[p], g), b = model_offset<R>(held2[q], g);
    if (a >= 0 && b >= 0) expected.emplace_back(a, b);
  }
  const auto n = dm::for_each_shared_run(spec, p, other, q, ext, [&](long long a, long long b, long long len) {
    CHECK(len > 0);
    for (long long i = 0; i < len; ++i) got.emplace_back(a + i, b + i);
  });
  CHECK(n == static_cast<long long>(got.size()));
  CHECK(got == expected);
  // the same runs as redistribute's executor finds them (two table views on the mesh's values)
  const dm::detail::mesh_data_of<Mesh> values(mesh);
  dm::detail::step_blocks blocks(values.data(), std::span<const dm::tensor_index>(shape), spec.table(), other.table(), 2);
  std::vector<std::pair<long long, long long>> as_data;
  const auto k = blocks.runs(blocks.before(p), blocks.after(q), [&](long long a, long long b, long long len) {
    for (long long i = 0; i < len; ++i) as_data.emplace_back(a + i, b + i);
  });
  CHECK(k == n);
  CHECK(as_data == expected);
}

// The blocks of `spec` as redistribute's executor reads them (redistribute/impl/blocks.hpp: the
// mesh's values, the spec's table as a table_view): the model's lists, and the groups of the
// core's for_each_in_group over every set of the mesh's own dims.
template <int R, class Mesh, class Spec>
void check_as_data(const Mesh& mesh, const Spec& spec, const std::array<dm::tensor_index, R>& shape,
                   const std::vector<std::array<list, R>>& held, const std::vector<int>& positions) {
  const dm::detail::mesh_data_of<Mesh> values(mesh);
  const dm::detail::mesh_data data = values.data();
  const std::span<const dm::tensor_index> ext(shape);
  std::vector<dm::detail::block_map> maps(R);
  for (int p : positions) {
    dm::detail::block_maps_into(data, spec.table(), p, ext, maps.data());
    long long n = 1;
    for (int t = 0; t < R; ++t) {
      const list& l = held[static_cast<std::size_t>(p)][static_cast<std::size_t>(t)];
      REQUIRE(maps[static_cast<std::size_t>(t)].length() == static_cast<long long>(l.size()));
      for (std::size_t i = 0; i < l.size(); ++i)
        CHECK(maps[static_cast<std::size_t>(t)].global_index(static_cast<long long>(i)) == l[i]);
      n *= static_cast<long long>(l.size());
    }
    CHECK(dm::detail::local_size(data, spec.table(), p, ext) == n);
  }
  const int member = positions.front();
  for (unsigned dims = 0; dims < (1u << Mesh::ndim); ++dims) {
    std::vector<int> got, want;
    const int me = dm::detail::group_positions(data, dims, member, got);
    dm::detail::for_each_in_group(mesh, dims, member, [&](int, int q) { want.push_back(q); });
    CHECK(got == want);
    CHECK(got[static_cast<std::size_t>(me)] == member);
  }
}

template <dm::fixed_string Counted, int R, class Mesh>
void check_case(const Mesh& mesh, const model_mesh& m, const std::vector<std::vector<bool>>& overlaps) {
  const model_spec s = random_spec<R>(m, overlaps);
  const auto spec = build(mesh, m, s, R);
  const auto shape = random_shape<R>();
  const auto ext = dm::dextents<R>::from_array(shape);
  const int member = pick(0, m.root_size() - 1);
  if (s.rule == dm::chunking::even) {  // even: the uneven blocks, all alike; else every query throws
    bool divides = true;
    for (int t = 0; t < R; ++t)
      for (int p = 0; p < m.root_size(); ++p) {
        long long padding = 0;
        divides = divides && model_indices(m, s, p, t, shape[t], &padding).size() ==
                                 model_indices(m, s, 0, t, shape[t], &padding).size();
      }
    if (!divides) {
      CHECK_THROWS_AS((void)spec.local_shape(ext, member), dm::mesh_error);
      CHECK_THROWS_AS((void)spec.is_even(ext), dm::mesh_error);
      return;
    }
  }
  std::vector<int> positions;
  for (int p = 0; p < m.root_size(); ++p)
    if (m.same_submesh(p, member)) positions.push_back(p);
  std::vector<std::array<list, R>> held(static_cast<std::size_t>(m.root_size()));
  std::set<std::array<dm::tensor_index, R>> shapes;
  for (int p : positions) {
    const auto local = spec.local_shape(ext, p), offset = spec.global_offset(ext, p), pad = spec.padding(ext, p);
    shapes.insert(spec.padded_shape(ext, p));
    for (int t = 0; t < R; ++t) {
      long long padding = 0;
      held[p][t] = model_indices(m, s, p, t, shape[t], &padding);
      const list& l = held[p][t];
      REQUIRE(local[t] == static_cast<long long>(l.size()));
      CHECK(offset[t] == (l.empty() ? shape[t] : l[0]));
      CHECK(pad[t] == padding);
      for (std::size_t i = 0; i < l.size(); ++i) CHECK(spec.global_index(ext, p, t, static_cast<long long>(i)) == l[i]);
    }
  }
  CHECK(spec.is_even(ext) == (shapes.size() <= 1));
  const auto counts = spec.template local_sizes<Counted>(ext, member);
  const auto group = mesh.template group<Counted>(member);
  for (int i = 0; i < counts.size(); ++i) {
    long long expected = 1;
    for (int t = 0; t < R; ++t) expected *= static_cast<long long>(held[group[i]][t].size());
    CHECK(counts[i] == expected);
  }
  check_elements<R>(mesh, m, s, spec, ext, shape, held, positions, member);
  check_as_data<R>(mesh, spec, shape, held, positions);
  if (s.rule != dm::chunking::padded) check_shared_runs<R>(mesh, m, overlaps, spec, ext, shape, held, positions);
}

std::vector<std::vector<bool>> overlaps_of(const model_mesh& m) {
  const std::size_t n = m.dims.size();
  std::vector<std::vector<bool>> o(n, std::vector<bool>(n, false));
  for (std::size_t d = 0; d < n; ++d)
    for (std::size_t e = 0; e < n; ++e)
      for (int a : m.dims[d]) o[d][e] = o[d][e] || std::count(m.dims[e].begin(), m.dims[e].end(), a) > 0;
  return o;
}

template <dm::fixed_string Counted, class Mesh>
void check_ranks(const Mesh& mesh, const model_mesh& m) {
  const auto o = overlaps_of(m);
  check_case<Counted, 0>(mesh, m, o);
  check_case<Counted, 1>(mesh, m, o);
  check_case<Counted, 2>(mesh, m, o);
  check_case<Counted, 3>(mesh, m, o);
}

int cases() {
  const char* c = std::getenv("DEVMESH_PROPERTY_CASES");
  return c ? std::atoi(c) : 400;
}

using mesh1 = dm::mesh<dm::dim<"a">>;
using mesh2 = dm::mesh<dm::dim<"a">, dm::dim<"b">>;
using mesh3 = dm::mesh<dm::dim<"a">, dm::dim<"b">, dm::dim<"c">>;

}  // namespace

TEST_SUITE("sharding_property") {
  TEST_CASE("root meshes of 1, 2 and 3 dims") {
    for (int i = 0; i < cases(); ++i) {
      const int a = pick(1, 8), b = pick(1, 4), c = pick(1, 3);
      check_ranks<"a">(mesh1(a), {{a}, {{0}}, {"a"}, {0}, {}});
      check_ranks<"b">(mesh2(a, b), {{a, b}, {{0}, {1}}, {"a", "b"}, {0, 1}, {}});
      check_ranks<"c">(mesh3(a, b, c), {{a, b, c}, {{0}, {1}, {2}}, {"a", "b", "c"}, {0, 1, 2}, {}});
    }
  }
  TEST_CASE("aliases: a flattened pair applies where its most significant dim is") {
    for (int i = 0; i < cases(); ++i) {
      const int a = pick(1, 4), b = pick(1, 3), c = pick(1, 3);
      const mesh3 m(a, b, c);
      check_ranks<"ac">(m.flatten<"ac", "a", "c">(),
                        {{a, b, c}, {{0}, {1}, {2}, {0, 2}}, {"a", "b", "c", "ac"}, {0, 3, 1, 2}, {}});
      check_ranks<"ca">(m.flatten<"ca", "c", "a">(),
                        {{a, b, c}, {{0}, {1}, {2}, {2, 0}}, {"a", "b", "c", "ca"}, {0, 1, 2, 3}, {}});
      check_ranks<"a">(mesh2(a, b).flatten<"x">(), {{a, b}, {{0, 1}, {0}, {1}}, {"x", "a", "b"}, {0, 1, 2}, {}});
    }
  }
  TEST_CASE("a transposed slice: positions of the root, placements in the slice's order") {
    for (int i = 0; i < cases(); ++i) {
      const int a = pick(1, 4), b = pick(1, 3), c = pick(1, 4);
      check_ranks<"a">(mesh3(a, b, c).slice<"c", "a">(), {{a, b, c}, {{2}, {0}}, {"c", "a"}, {0, 1}, {1}});
    }
  }
}
