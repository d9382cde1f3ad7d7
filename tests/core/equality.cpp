// Mesh equality and std::hash: equal meshes have the same dims (names, aliases included), the
// same root size and the same groups in the same order; the types may differ (static and
// dynamic sizes), and equal meshes hash alike.
#include <doctest/doctest.h>

#include <devmesh/devmesh.hpp>

#include <type_traits>
#include <unordered_set>

namespace dm = devmesh;

namespace {
using static24 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
using dynamic24 = dm::mesh<dm::dim<"dp">, dm::dim<"tp", 4>>;

// At compile time, for static meshes.
static_assert(static24{} == static24{});
static_assert(static24{} == static24{}.slice<"dp", "tp">());
static_assert(static24{} != static24{}.slice<"tp", "dp">());                   // transposed: other rank order
static_assert(static24{}.slice<"tp">() != static24{}.slice<"dp">());             // other names
static_assert(static24{} != dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 2>>{});     // other sizes
static_assert(static24{} != dm::mesh<dm::dim<"dp", 2>, dm::dim<"pp", 4>>{});     // other names
static_assert(static24{} != static24{}.flatten<"all", "dp", "tp">());            // an alias more
static_assert(static24{}.slice<"tp">() != dm::mesh<dm::dim<"tp", 4>>{});         // other root size
// Same dims and groups reached two ways: an unflattened 8 equals the 2x4 root.
using mesh8 = dm::mesh<dm::dim<"x", 8>>;
static_assert(mesh8{}.unflatten<"x", dm::dim<"a", 2>, dm::dim<"b", 4>>() == dm::mesh<dm::dim<"a", 2>, dm::dim<"b", 4>>{});
static_assert(mesh8{}.unflatten<"x", dm::dim<"a", 4>, dm::dim<"b", 2>>() != dm::mesh<dm::dim<"a", 2>, dm::dim<"b", 4>>{});
}  // namespace

TEST_SUITE("equality") {
  TEST_CASE("a dynamic mesh equals the static mesh of the same sizes, and hashes alike") {
    const dynamic24 two(2), three(3);
    CHECK(two == static24{});
    CHECK(static24{} == two);
    CHECK(two != three);
    CHECK(two.slice<"tp">() == static24{}.slice<"tp">());
    CHECK(two.slice<"tp">() != three.slice<"tp">());  // same group shape, other root size
    CHECK(std::hash<dynamic24>{}(two) == std::hash<static24>{}(static24{}));
    CHECK(std::hash<dynamic24>{}(two) != std::hash<dynamic24>{}(three));
  }

  TEST_CASE("meshes as keys of an unordered set") {
    std::unordered_set<dynamic24> set{dynamic24(2), dynamic24(3), dynamic24(2), dynamic24(6)};
    CHECK(set.size() == 3);
    CHECK(set.count(dynamic24(3)) == 1);
    CHECK(set.count(dynamic24(4)) == 0);
    using sliced = std::remove_const_t<decltype(dynamic24(2).slice<"dp">())>;
    std::unordered_set<sliced> slices{dynamic24(2).slice<"dp">(), dynamic24(2).slice<"dp">(), dynamic24(4).slice<"dp">()};
    CHECK(slices.size() == 2);
  }
}
