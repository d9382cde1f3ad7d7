// Static <-> dynamic mesh conversion, as std::extents: a mesh converts to another type with
// the same names and layout structure. Implicit when every static value of the target is
// static and equal in the mesh; explicit and checked at run time otherwise (a mesh_error
// naming the dim and both values); a compile error naming the dim when both are static
// (tests/compile_fail/cases/convert_*).
#include <doctest/doctest.h>

#include <devmesh/devmesh.hpp>

#include <array>
#include <string>
#include <type_traits>

namespace dm = devmesh;

namespace {
using static24 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
using half24 = dm::mesh<dm::dim<"dp">, dm::dim<"tp", 4>>;
using dynamic24 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;

// The example, and the direction rules.
constexpr dynamic24 from_static = static24{};
static_assert(from_static.shape() == static24{}.shape() && from_static.root_size() == 8);
static_assert(std::is_convertible_v<static24, dynamic24> && std::is_convertible_v<static24, half24>);
static_assert(std::is_convertible_v<half24, dynamic24>);  // half24's static tp is dynamic there
static_assert(!std::is_convertible_v<dynamic24, static24> && std::is_constructible_v<static24, dynamic24>);
static_assert(!std::is_convertible_v<dynamic24, half24> && std::is_constructible_v<half24, dynamic24>);
static_assert(!std::is_convertible_v<half24, static24> && std::is_constructible_v<static24, half24>);
// Dynamic to static, in a constant expression.
constexpr static24 back(dynamic24(2, 4));
static_assert(back == static24{});
// Not between other names or another structure.
static_assert(!std::is_constructible_v<dynamic24, dm::mesh<dm::dim<"dp", 2>, dm::dim<"pp", 4>>>);
static_assert(!std::is_constructible_v<dynamic24, dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 2>, dm::dim<"x", 2>>>);
static_assert(!std::is_constructible_v<dynamic24, decltype(static24{}.slice<"tp", "dp">())>);  // transposed: other names' order
// A root's own layout (a slice of all its dims in order) is the root type, implicitly.
static_assert(std::is_convertible_v<decltype(static24{}.slice<"dp", "tp">()), static24>);

// Derived meshes: an unflattened dynamic mesh to the static type of the same derivation.
using unflat_static = decltype(static24{}.unflatten<"tp", dm::dim<"a", 2>, dm::dim<"b", 2>>());
using unflat_dynamic = decltype(dynamic24(2, 4).unflatten<"tp", dm::dim<"a">, dm::dim<"b", 2>>());
static_assert(std::is_convertible_v<unflat_static, unflat_dynamic>);
static_assert(unflat_static(dynamic24(2, 4).unflatten<"tp", dm::dim<"a">, dm::dim<"b", 2>>()) ==
              static24{}.unflatten<"tp", dm::dim<"a", 2>, dm::dim<"b", 2>>());

template <class F>
std::string error_of(F&& f) {
  try {
    (void)f();
  } catch (const dm::mesh_error& e) {
    return e.what();
  }
  return "did not throw";
}
}  // namespace

TEST_SUITE("conversion") {
  TEST_CASE("values survive the round trip, for roots and derived meshes") {
    const dynamic24 d(3, 4);
    const half24 h(d);  // explicit: tp is checked against 4
    CHECK(h.shape() == std::array{3, 4});
    CHECK(dynamic24(h) == d);  // implicit the other way
    const auto f = d.flatten<"dp_tp", "tp", "dp">();
    using half_flat = decltype(h.flatten<"dp_tp", "tp", "dp">());
    const half_flat hf(f);
    CHECK(hf == f);
    CHECK(hf.size<"dp_tp">() == 12);
    for (int r = 0; r < 12; ++r) {
      CHECK(hf.group<"dp_tp">(r) == f.group<"dp_tp">(r));
      CHECK(hf.coordinate(r) == f.coordinate(r));
    }
  }

  TEST_CASE("a static value that differs throws, naming the dim and both values") {
    CHECK(error_of([] { return static24(dynamic24(2, 8)); }) ==
          std::string(DEVMESH_MSG_CONVERSION) + ": dim 'tp' has size 8, the target type needs 4");
    CHECK(error_of([] { return static24(dynamic24(3, 4)); }) ==
          std::string(DEVMESH_MSG_CONVERSION) + ": dim 'dp' has size 3, the target type needs 2");
    CHECK(error_of([] { return half24(dynamic24(2, 2)); }) ==
          std::string(DEVMESH_MSG_CONVERSION) + ": dim 'tp' has size 2, the target type needs 4");
    // A flattened dim of several modes: one mode differs.
    using flat_static = decltype(static24{}.flatten<"all">());
    CHECK(error_of([] { return flat_static(dynamic24(2, 2).flatten<"all">()); }) ==
          std::string(DEVMESH_MSG_CONVERSION) + ": dim 'all' has a mode of size 2, the target type needs 4");
    // A slice: its dim agrees, its stride does not (a slice of another root).
    using tp_of_static = decltype(dm::mesh<dm::dim<"tp", 4>, dm::dim<"x", 2>>{}.slice<"tp">());
    using tp_of_dynamic = decltype(dm::mesh<dm::dim<"tp">, dm::dim<"x">>(4, 3).slice<"tp">());
    CHECK(error_of([] { return tp_of_static(tp_of_dynamic(dm::mesh<dm::dim<"tp">, dm::dim<"x">>(4, 3).slice<"tp">())); }) ==
          std::string(DEVMESH_MSG_CONVERSION) + ": dim 'tp' has stride 3, the target type needs 2");
  }

  TEST_CASE("a dynamic type that shares a value checks it where the mesh has two") {
    // dynamic24's dp stride is its tp size: one slot. A mesh whose dp stride and tp size are
    // different values (a slice of a bigger root) converts only if they agree.
    using three = dm::mesh<dm::dim<"dp">, dm::dim<"x">, dm::dim<"tp">>;
    const auto s = three(2, 3, 4).slice<"dp", "tp">();  // dp stride 12, tp size 4
    using target = decltype(dynamic24(2, 4).slice<"dp", "tp">());
    static_assert(!std::is_convertible_v<decltype(s), target> && std::is_constructible_v<target, decltype(s)>);
    CHECK(error_of([&] { return target(s); }) ==
          std::string(DEVMESH_MSG_CONVERSION) + ": dim 'dp' has stride 12, the target type needs 4");
    const auto ok = three(2, 1, 4).slice<"dp", "tp">();
    CHECK(target(ok).shape() == std::array{2, 4});
  }

  TEST_CASE("converted meshes are equal and hash alike") {
    const dynamic24 d = static24{};
    CHECK(d == static24{});
    CHECK(std::hash<dynamic24>{}(d) == std::hash<static24>{}(static24{}));
    const static24 s(d);
    CHECK(s == d);
    CHECK(half24(dynamic24(5, 4)).size<"dp">() == 5);
    CHECK(dynamic24(half24(7)).shape() == std::array{7, 4});
  }
}
