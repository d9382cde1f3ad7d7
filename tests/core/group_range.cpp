// rank_group as a range: membership, index_of, iterators, equality, against brute force; and
// all_groups, every group of some dims over the root, whatever mesh it is asked of.
#include <doctest/doctest.h>

#include <devmesh/devmesh.hpp>

#include <algorithm>
#include <iterator>
#include <ranges>
#include <vector>

namespace dm = devmesh;

namespace {
/// For every rank r of m and every rank q: g(r).contains(q) and index_of(q) agree with the
/// listed members; the iterators walk the same members forwards, backwards and by jumps.
template <class M, class G>
void check_groups(const M& m, G group_of) {
  const int world = m.root_size();
  for (int r = 0; r < world; ++r) {
    const auto g = group_of(r);
    const std::vector<int> members(g.begin(), g.end());
    REQUIRE(static_cast<int>(members.size()) == g.size());
    REQUIRE(std::ranges::count(members, r) == 1);
    CHECK(g.front() == members.front());
    CHECK(g.back() == members.back());
    CHECK(g.end() - g.begin() == g.size());
    std::vector<int> backwards(std::make_reverse_iterator(g.end()), std::make_reverse_iterator(g.begin()));
    std::ranges::reverse(backwards);
    CHECK(backwards == members);
    for (int i = 0; i < g.size(); ++i) {
      CHECK(g.begin()[i] == members[i]);
      CHECK(*(g.begin() + i) == members[i]);
    }
    for (int q = -2; q < world + 2; ++q) {
      const auto it = std::ranges::find(members, q);
      const int want = it == members.end() ? -1 : static_cast<int>(it - members.begin());
      if (g.index_of(q) != want || g.contains(q) != (want >= 0)) {
        FAIL_CHECK("rank " << r << ": index_of(" << q << ") = " << g.index_of(q) << ", want " << want);
        return;
      }
    }
    // Groups are equal exactly when their members are (same order).
    const auto other = group_of(members.back());
    CHECK((other == g) == (std::vector<int>(other.begin(), other.end()) == members));
  }
}

/// Groups as lists (all_groups' answer), checking its size() against the walk.
template <class Groups>
std::vector<std::vector<int>> listed(const Groups& gs) {
  std::vector<std::vector<int>> out;
  for (const auto& g : gs) out.emplace_back(g.begin(), g.end());
  CHECK(static_cast<int>(out.size()) == gs.size());
  return out;
}
using lists = std::vector<std::vector<int>>;

/// Every group of `group_of` over positions [0, world), by brute force: one per distinct
/// group, in ascending order of first position.
template <class F>
lists brute_force(int world, F group_of) {
  lists out;
  for (int p = 0; p < world; ++p) {
    const auto g = group_of(p);
    if (g.front() == p) out.emplace_back(g.begin(), g.end());
  }
  return out;
}
}  // namespace

TEST_SUITE("group") {
TEST_CASE("rank_group is a random-access range of int") {
  using G = decltype(dm::mesh<dm::dim<"a", 2>, dm::dim<"b", 3>>{}.group<"b", "a">(0));
  static_assert(std::ranges::random_access_range<G>);
  static_assert(std::ranges::sized_range<G>);
  static_assert(std::same_as<std::ranges::range_value_t<G>, int>);
  static_assert(std::random_access_iterator<G::iterator>);
  // C++17's traits: an input iterator (its ranks are values), as std::views::iota's; the
  // algorithms and constructors over iterator pairs still work.
  static_assert(std::same_as<std::iterator_traits<G::iterator>::iterator_category, std::input_iterator_tag>);
  const G g = dm::mesh<dm::dim<"a", 2>, dm::dim<"b", 3>>{}.group<"b", "a">(4);
  CHECK(std::vector<int>(g.begin(), g.end()) == std::vector<int>{0, 3, 1, 4, 2, 5});  // b major, then a
  CHECK(std::distance(g.begin(), g.end()) == 6);
  CHECK(std::ranges::distance(g) == 6);
}

TEST_CASE("membership and order of groups on static and dynamic meshes") {
  using m3 = dm::mesh<dm::dim<"a", 2>, dm::dim<"b", 3>, dm::dim<"c", 4>>;
  constexpr m3 m{};
  check_groups(m, [&](int r) { return m.group<"b">(r); });
  check_groups(m, [&](int r) { return m.group<"c", "a">(r); });
  check_groups(m, [&](int r) { return m.group(r); });
  const auto f = m.flatten<"ca", "c", "a">();
  check_groups(f, [&](int r) { return f.group<"ca">(r); });
  check_groups(f, [&](int r) { return f.group<"b", "ca">(r); });
  const dm::mesh<dm::dim<"x">, dm::dim<"y">, dm::dim<"z">> d(3, 1, 5);
  check_groups(d, [&](int r) { return d.group<"y">(r); });  // size-1 groups: {r}
  check_groups(d, [&](int r) { return d.group<"z", "x">(r); });
  check_groups(d, [&](int r) { return d.slice<"z", "y">().group(r); });
  const auto u = d.unflatten<"z", dm::dim<"z0">, dm::dim<"z1", 1>>().flatten<"xz", "x", "z0">();
  check_groups(u, [&](int r) { return u.group<"xz">(r); });
}

TEST_CASE("a group is its first position and its dims' layout, and index_of is the layout's inverse") {
  const dm::mesh<dm::dim<"x">, dm::dim<"y">, dm::dim<"z">> d(3, 4, 5);
  const auto f = d.flatten<"zx", "z", "x">();
  for (int r = 0; r < d.root_size(); ++r) {
    const auto g = f.group<"zx">(r);
    const auto l = f.dim_layout(f.dim_index<"zx">());
    CHECK(g.layout() == l);  // a one-dim group's layout is the dim's
    CHECK(g.size() == l.size());
    for (int i = 0; i < g.size(); ++i) {
      CHECK(g[i] == g.front() + l(i));
      CHECK(l.index_of(l(i)) == i);
    }
    // Offsets off the layout's image have no index.
    for (int offset = -1; offset <= d.root_size(); ++offset) {
      const auto it = std::ranges::find(g, g.front() + offset);
      CHECK(l.index_of(offset) == (it == g.end() ? -1 : static_cast<int>(it - g.begin())));
    }
  }
}

TEST_CASE("all_groups on a slice, a flattened and an unflattened mesh: every group over the root") {
  constexpr dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>> m;
  // Before, on a derived mesh it walked the block holding position 0: one group of 4 here.
  CHECK(listed(dm::all_groups<"dp", "cp">(m.slice<"dp", "cp">())) == lists{{0, 2, 4, 6}, {1, 3, 5, 7}});
  CHECK(listed(dm::all_groups<"tp">(m.slice<"dp", "tp">())) == lists{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  const auto loss = m.slice<"dp", "cp">().flatten<"loss">();
  CHECK(listed(dm::all_groups<"loss">(loss)) == lists{{0, 2, 4, 6}, {1, 3, 5, 7}});
  static_assert(dm::all_groups<"loss">(m.slice<"dp", "cp">().flatten<"loss">()).size() == 2);
  // Several dims: each group in the order the dims are named.
  CHECK(listed(dm::all_groups<"tp", "dp">(m)) == lists{{0, 4, 1, 5}, {2, 6, 3, 7}});
  // The block of one position, explicitly.
  CHECK(listed(dm::block_groups<"dp">(m.slice<"dp", "tp">(), 2)) == lists{{2, 6}, {3, 7}});
  CHECK(listed(dm::block_groups<"dp">(m.slice<"tp", "dp">(), 2)) == lists{{2, 6}, {3, 7}});
  CHECK(dm::group_table<"dp">(m.slice<"dp">()) == "dp: [0, 4] [1, 5] [2, 6] [3, 7]");
  // Against brute force on a dynamic mesh: a mixed-stride flatten, then a cut of it.
  const dm::mesh<dm::dim<"a">, dm::dim<"b">, dm::dim<"c">> n(4, 3, 2);
  const auto f = n.flatten<"ac", "a", "c">().slice<"ac", "b">();
  CHECK(listed(dm::all_groups<"ac">(f)) == brute_force(24, [&](int p) { return f.group<"ac">(p); }));
  const auto u = f.unflatten<"ac", dm::dim<"x">, dm::dim<"y">>(2, 4);
  CHECK(listed(dm::all_groups<"y", "b">(u)) == brute_force(24, [&](int p) { return u.group<"y", "b">(p); }));
  CHECK(listed(dm::all_groups<"x">(u)) == brute_force(24, [&](int p) { return u.group<"x">(p); }));
}
}
