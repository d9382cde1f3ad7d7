// libFuzzer target for the dynamic layout functions, checked against brute force.
// Input: bytes 0..3 are the sizes (1..4) of a 4-D mesh with dynamic dims a, b, c, d;
// bytes 4..7 a hostile rank (any int). The model enumerates the ranks row-major with an
// odometer (no division), and every group by bucketing all ranks by coordinates: the opposite of
// devmesh's O(ndim) digit arithmetic. Checked for every rank: coordinate / rank_at /
// local_rank round-trip, group membership and order for direct, transposed and
// non-adjacent dim lists, index_of / contains, comm_split (both forms), and the groups of
// a slice, a flatten and an unflatten. Out-of-range ranks must throw mesh_error.
#include <devmesh/devmesh.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <algorithm>
#include <vector>

namespace dm = devmesh;
using mesh4 = dm::mesh<dm::dim<"a">, dm::dim<"b">, dm::dim<"c">, dm::dim<"d">>;
using coord = std::array<int, 4>;

namespace {

[[noreturn]] void finding(const char* what, const mesh4& m, int r) {
  std::fprintf(stderr, "devmesh fuzz_layout: %s on %s at rank %d\n", what, dm::to_string(m).c_str(), r);
  std::abort();
}

struct model {
  std::vector<coord> coords;  // coords[r], row-major
  explicit model(const coord& shape) {
    coord c{};
    const int n = shape[0] * shape[1] * shape[2] * shape[3];
    for (int r = 0; r < n; ++r) {
      coords.push_back(c);
      for (int d = 3; d >= 0; --d) {  // odometer step
        if (++c[d] < shape[d]) break;
        c[d] = 0;
      }
    }
  }
  // The groups over dims `dims` (given order), as a rank -> group table: ranks that agree
  // on every other dim form a group, ordered by their coordinates along `dims` compared
  // lexicographically (std::map of coordinate vectors: no strides, no digit arithmetic).
  // `key` maps a coordinate to the digits used (identity except for the unflatten check).
  template <class Key>
  std::vector<std::vector<int>> groups(const std::vector<int>& dims, Key key) const {
    std::map<std::vector<int>, std::map<std::vector<int>, int>> by_outside;
    for (int q = 0; q < static_cast<int>(coords.size()); ++q) {
      const auto k = key(coords[static_cast<std::size_t>(q)]);
      std::vector<int> inside, outside;
      for (int x : dims) inside.push_back(k[static_cast<std::size_t>(x)]);
      for (int d = 0; d < static_cast<int>(k.size()); ++d)
        if (std::find(dims.begin(), dims.end(), d) == dims.end()) outside.push_back(k[static_cast<std::size_t>(d)]);
      by_outside[outside][inside] = q;
    }
    std::vector<std::vector<int>> of_rank(coords.size());
    for (const auto& [outside, members] : by_outside) {
      std::vector<int> g;
      for (const auto& [inside, q] : members) g.push_back(q);
      for (int q : g) of_rank[static_cast<std::size_t>(q)] = g;
    }
    return of_rank;
  }
  std::vector<std::vector<int>> groups(const std::vector<int>& dims) const {
    return groups(dims, [](const coord& c) { return c; });
  }
};

template <class G>
void check_group(const G& got, const std::vector<int>& want, int r, dm::split_args split, const mesh4& m,
                 const char* what) {
  if (got.size() != static_cast<int>(want.size())) finding(what, m, r);
  for (int i = 0; i < got.size(); ++i)
    if (got[i] != want[static_cast<std::size_t>(i)]) finding(what, m, r);
  int idx = -1;
  for (int i = 0; i < static_cast<int>(want.size()); ++i)
    if (want[static_cast<std::size_t>(i)] == r) idx = i;
  if (idx < 0 || got.index_of(r) != idx || !got.contains(r)) finding(what, m, r);
  if (split != dm::split_args{want.front(), idx}) finding(what, m, r);
  if (idx != 0) return;  // membership of every rank: once per group
  for (int q = 0; q < m.size(); ++q) {
    bool member = false;
    for (int x : want) member = member || x == q;
    if (got.contains(q) != member) finding(what, m, r);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const coord shape{data[0] % 4 + 1, data[1] % 4 + 1, data[2] % 4 + 1, data[3] % 4 + 1};
  int hostile = 0;
  if (size >= 8) std::memcpy(&hostile, data + 4, sizeof hostile);

  const mesh4 m(shape[0], shape[1], shape[2], shape[3]);
  const model ref(shape);
  if (m.size() != static_cast<int>(ref.coords.size()) || m.shape() != shape) finding("size/shape", m, 0);

  // A hostile rank: in range it must agree with the model, out of range it must throw.
  if (hostile >= 0 && hostile < m.size()) {
    if (m.coordinate(hostile) != ref.coords[static_cast<std::size_t>(hostile)]) finding("coordinate", m, hostile);
  } else {
    bool threw = false;
    try {
      (void)m.coordinate(hostile);
    } catch (const dm::mesh_error&) {
      threw = true;
    }
    if (!threw) finding("out-of-range rank accepted", m, hostile);
  }

  const auto g_a = ref.groups({0}), g_b = ref.groups({1}), g_c = ref.groups({2}), g_d = ref.groups({3});
  const auto g_bd = ref.groups({1, 3}), g_db = ref.groups({3, 1}), g_cad = ref.groups({2, 0, 3});
  const auto g_dcba = ref.groups({3, 2, 1, 0}), g_all = ref.groups({0, 1, 2, 3}), g_abd = ref.groups({0, 1, 3});
  const std::vector<std::vector<int>>* g_dim[] = {&g_a, &g_b, &g_c, &g_d};
  const auto flat = m.flatten<"bd", "b", "d">();
  const auto sliced = m.slice<"d", "b">();
  for (int r = 0; r < m.size(); ++r) {
    const auto ur = static_cast<std::size_t>(r);
    const coord& c = ref.coords[ur];
    if (m.coordinate(r) != c || m.rank_at(c) != r || m.local_rank<"b">(r) != c[1] || m.local_rank<"d">(r) != c[3])
      finding("coordinate/rank_at round-trip", m, r);
    check_group(m.group<"a">(r), g_a[ur], r, m.comm_split<"a">(r), m, "group<a>");
    check_group(m.group<"d">(r), g_d[ur], r, m.comm_split<"d">(r), m, "group<d>");
    check_group(m.group<"b", "d">(r), g_bd[ur], r, m.comm_split<"b", "d">(r), m, "group<b,d>");
    check_group(m.group<"d", "b">(r), g_db[ur], r, m.comm_split<"d", "b">(r), m, "group<d,b>");
    check_group(m.group<"c", "a", "d">(r), g_cad[ur], r, m.comm_split<"c", "a", "d">(r), m,
                "group<c,a,d>");
    check_group(m.group<"d", "c", "b", "a">(r), g_dcba[ur], r, m.comm_split<"d", "c", "b", "a">(r),
                m, "group<d,c,b,a>");
    check_group(m.group(r), g_all[ur], r, m.comm_split<"a", "b", "c", "d">(r), m, "group()");
    for (int d = 0; d < 4; ++d)
      if (m.comm_split(r, d) != dm::split_args{(*g_dim[d])[ur].front(), c[static_cast<std::size_t>(d)]})
        finding("comm_split(r, d)", m, r);
    // Derived meshes keep the root's groups.
    check_group(flat.group<"bd">(r), g_bd[ur], r, flat.comm_split<"bd">(r), m, "flatten<bd>");
    check_group(flat.group<"a", "bd">(r), g_abd[ur], r, flat.comm_split<"a", "bd">(r), m,
                "flatten group<a,bd>");
    check_group(sliced.group(r), g_db[ur], r, sliced.comm_split<"d", "b">(r), m, "slice<d,b>");
    if (sliced.coordinate(r) != std::array{c[3], c[1]}) finding("slice coordinate", m, r);
  }

  // Unflatten a into (a1 = 2, a2 = a / 2) when a is even: a2's groups split a's.
  if (shape[0] % 2 == 0) {
    const auto u = m.unflatten<"a", dm::dim<"a1", 2>, dm::dim<"a2">>();
    const int half = shape[0] / 2;
    const auto key = [half](const coord& c) { return std::array{c[0] / half, c[0] % half, c[1], c[2], c[3]}; };
    const auto g_a2 = ref.groups({1}, key), g_a2a1 = ref.groups({1, 0}, key);
    for (int r = 0; r < m.size(); ++r) {
      const auto ur = static_cast<std::size_t>(r);
      check_group(u.group<"a2">(r), g_a2[ur], r, u.comm_split<"a2">(r), m, "unflatten group<a2>");
      check_group(u.group<"a2", "a1">(r), g_a2a1[ur], r, u.comm_split<"a2", "a1">(r), m,
                  "unflatten group<a2,a1>");
    }
  }
  return 0;
}
