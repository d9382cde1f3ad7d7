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

  TEST_CASE("coalesced layouts key groups: equal keys, equal groups; hash across capacities") {
    // The runtime's communicator cache: one key per group function, whatever the dim's name,
    // capacity or history (a flattened alias of adjacent dims is the dims' group function).
    using m3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;
    const m3 m(2, 3, 4);
    const auto f = m.flatten<"cp_tp", "cp", "tp">().flatten<"tp_cp", "tp", "cp">();
    std::unordered_set<dm::coalesced_layout> keys;
    for (int d = 0; d < decltype(f)::ndim_with_aliases; ++d) keys.insert(f.dim_layout(d).coalesce());
    CHECK(keys.size() == 5);  // dp, cp, tp, cp_tp, tp_cp: all different groups
    CHECK(keys.count(m.slice<"cp", "tp">().flatten<"x">().dim_layout(0).coalesce()) == 1);  // = cp_tp
    CHECK(keys.count(dm::mesh<dm::dim<"a">>(4).dim_layout(0).coalesce()) == 1);              // (4 : 1) = tp
    // Equal layouts hash alike whatever their capacity, and coalescing keeps a coalesced one.
    const auto cp_tp = f.dim_layout(f.dim_index<"cp_tp">());
    CHECK(std::hash<dm::coalesced_layout>{}(cp_tp.coalesce()) == std::hash<dm::dim_layout<1>>{}(dm::dim_layout<1>{1, {12}, {1}}));
    CHECK(cp_tp.coalesce() == dm::dim_layout<1>{1, {12}, {1}});
    CHECK(cp_tp.coalesce().coalesce() == cp_tp.coalesce());
  }

  TEST_CASE("coalesce refuses more modes than an int's ranks allow") {
    // 31 modes of size 2 that do not merge: no dim of a mesh (their sizes would multiply past
    // INT_MAX), and more than coalesced_layout holds.
    dm::dim_layout<31> bad{31};
    for (int i = 0; i < 31; ++i) {
      bad.shape[i] = 2;
      bad.stride[i] = 1;
    }
    CHECK_THROWS_AS((void)bad.coalesce(), dm::mesh_error);
    bad.count = 30;
    CHECK(bad.coalesce().count == 30);
  }

  TEST_CASE("same_modes: the same mesh as written, without coalescing") {
    const dynamic24 two(2), other_two(2), three(3);
    CHECK(two.same_modes(other_two));
    CHECK(!two.same_modes(three));
    using m3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;
    const auto a = m3(2, 3, 4).slice<"dp", "tp">(), b = m3(2, 3, 4).slice<"dp", "tp">();
    const auto c = m3(2, 1, 4).slice<"dp", "tp">();
    CHECK(a.same_modes(b));
    CHECK(!a.same_modes(c));  // the same groups' shape, another root size and strides
    CHECK(a == b);            // same modes: equal
    static_assert(static24{}.same_modes(static24{}));
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
