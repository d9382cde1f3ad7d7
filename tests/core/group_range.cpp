// rank_group as a range: membership, index_of, iterators, equality, against brute force.
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
}
