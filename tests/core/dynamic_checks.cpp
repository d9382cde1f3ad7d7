// Run-time checks of dynamic sizes, ranks and coordinates: each misuse throws
// devmesh::mesh_error whose message starts with the same DEVMESH_MSG_* text the
// compile-time diagnostic uses, followed by the values involved.
#include <doctest/doctest.h>

#include <devmesh/devmesh.hpp>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>

namespace dm = devmesh;

namespace {

/// Runs f, which must throw mesh_error; returns its message ("" if it did not throw).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const dm::mesh_error& e) {
    return e.what();
  }
  return "";
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;
using dyn2 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

}  // namespace

TEST_SUITE("dynamic_checks") {
TEST_CASE("mesh_error is what every run-time check throws") {
  static_assert(std::is_base_of_v<std::invalid_argument, dm::mesh_error>);
  CHECK_THROWS_AS(hsdp(0), dm::mesh_error);
}

TEST_CASE("non-positive dynamic sizes") {
  for (int bad : {0, -1, -4, INT_MIN}) {
    CAPTURE(bad);
    const auto msg = error_of([&] { (void)hsdp(bad); });
    CHECK(starts_with(msg, DEVMESH_MSG_NON_POSITIVE));
    CHECK(has(msg, "'replicate'"));
    CHECK(has(msg, std::to_string(bad).c_str()));
    CHECK(starts_with(error_of([&] { (void)dyn2(2, bad); }), DEVMESH_MSG_NON_POSITIVE));
    CHECK(has(error_of([&] { (void)dyn2(2, bad); }), "'tp'"));
  }
  CHECK_NOTHROW((void)dyn2(1, 1));  // size 1 is a valid (degenerate) dim
}

TEST_CASE("a size given for a static dim must match it") {
  const auto msg = error_of([] { (void)hsdp(2, 3); });
  CHECK(starts_with(msg, DEVMESH_MSG_STATIC_SIZE_MISMATCH));
  CHECK(has(msg, "'shard'"));
  CHECK(has(msg, "4"));
  CHECK(has(msg, "3"));
  CHECK(hsdp(2, 4).size() == 8);
}

TEST_CASE("sizes out of int range: an error quoting the value as given, never a silent cast") {
  auto msg = error_of([] { (void)dyn2(4294967298LL, 2); });  // a cast would make it 2
  CHECK(starts_with(msg, DEVMESH_MSG_SIZE_RANGE));
  CHECK(has(msg, "got 4294967298 for dim 'dp'"));
  msg = error_of([] { (void)dyn2(2, -4294967298LL); });  // a cast would make it -2
  CHECK(starts_with(msg, DEVMESH_MSG_SIZE_RANGE));
  CHECK(has(msg, "got -4294967298 for dim 'tp'"));
  msg = error_of([] { (void)dyn2(std::uint64_t{1} << 63, 2u); });
  CHECK(has(msg, "got 9223372036854775808 for dim 'dp'"));
  CHECK(has(error_of([] { (void)dyn2(2u, 2147483648u); }), "got 2147483648 for dim 'tp'"));
  // One size per dynamic dim, or one per dim: the message names the dim the size was for.
  CHECK(has(error_of([] { (void)hsdp(1LL << 40); }), "got 1099511627776 for dim 'replicate'"));
  CHECK(has(error_of([] { (void)hsdp(2, 4294967300LL); }), "got 4294967300 for dim 'shard'"));
  // In range: any integer type, the bounds included.
  CHECK(dyn2(std::size_t{3}, short{2}).shape() == std::array{3, 2});
  CHECK(dyn2(static_cast<long long>(INT_MAX), std::uint8_t{1}).size() == INT_MAX);
  CHECK(hsdp(2L, 4ULL).size() == 8);
  CHECK(starts_with(error_of([] { (void)dyn2(static_cast<long long>(INT_MIN), 1); }), DEVMESH_MSG_NON_POSITIVE));
}

TEST_CASE("a mesh is copied, not taken as a size") {
  hsdp a(2);
  hsdp b(a);  // a non-const lvalue: the copy constructor, not the sizes constructor
  const hsdp c(b);
  hsdp d = c;
  CHECK(d.size<"replicate">() == 2);
}

TEST_CASE("a fully static mesh takes every dim's size, checked") {
  CHECK(mesh3d(2, 2, 2).size() == 8);
  CHECK(mesh3d(2L, 2u, std::size_t{2}).shape() == std::array{2, 2, 2});
  auto msg = error_of([] { (void)mesh3d(2, 3, 2); });
  CHECK(starts_with(msg, DEVMESH_MSG_STATIC_SIZE_MISMATCH));
  CHECK(has(msg, "dim 'cp' is 2, got 3"));
  CHECK(starts_with(error_of([] { (void)mesh3d(2, 2, 0); }), DEVMESH_MSG_NON_POSITIVE));
  CHECK(has(error_of([] { (void)mesh3d(2, 2, 4294967298LL); }), "got 4294967298 for dim 'tp'"));
  // In a constant expression too (a mismatch there is the compile-fail case
  // static_size_mismatch_constexpr).
  constexpr mesh3d m(2, 2, 2);
  static_assert(m.size() == 8);
}

TEST_CASE("sizes whose product overflows int") {
  const auto msg = error_of([] { (void)dyn2(65536, 65536); });
  CHECK(starts_with(msg, DEVMESH_MSG_OVERFLOW));
  CHECK(has(msg, std::to_string(INT_MAX).c_str()));
  CHECK(has(msg, "the sizes (dp=65536, tp=65536) multiply to more than"));  // the sizes as given
  CHECK(starts_with(error_of([] { (void)hsdp(INT_MAX / 4 + 1); }), DEVMESH_MSG_OVERFLOW));
  CHECK(hsdp(INT_MAX / 4).size() == INT_MAX / 4 * 4);  // the largest that fits
}

TEST_CASE("for_world: the static dims must divide the world, a static mesh must equal it") {
  for (int world : {6, 7, 2, 0, -8}) {
    CAPTURE(world);
    const auto msg = error_of([&] { (void)hsdp::for_world(world); });
    CHECK(starts_with(msg, DEVMESH_MSG_WORLD_MISMATCH));
    CHECK(has(msg, ("world size " + std::to_string(world)).c_str()));
    CHECK(has(msg, "'replicate'"));
  }
  CHECK(hsdp::for_world(4).size<"replicate">() == 1);
  CHECK(hsdp::for_world(32).size<"replicate">() == 8);
  const auto msg = error_of([] { (void)mesh3d::for_world(16); });
  CHECK(starts_with(msg, DEVMESH_MSG_WORLD_MISMATCH));
  CHECK(has(msg, "16"));
  CHECK(has(msg, "8"));
  CHECK(mesh3d::for_world(8).size() == 8);
  // A dynamic dim in the middle is inferred the same way.
  using mid = dm::mesh<dm::dim<"pp", 2>, dm::dim<"dp">, dm::dim<"tp", 2>>;
  CHECK(mid::for_world(24).shape() == std::array{2, 6, 2});
  CHECK(starts_with(error_of([] { (void)mid::for_world(10); }), DEVMESH_MSG_WORLD_MISMATCH));
}

TEST_CASE("unflatten of a dynamic dim: the new sizes must multiply to it") {
  const dyn2 m(6, 2);
  // One inferred size: the static ones must divide the dim.
  auto msg = error_of([&] { (void)m.unflatten<"dp", dm::dim<"a", 4>, dm::dim<"b">>(); });
  CHECK(starts_with(msg, DEVMESH_MSG_UNFLATTEN_PRODUCT));
  CHECK(has(msg, "'dp'"));
  CHECK(has(msg, "6"));
  CHECK(has(msg, "4"));
  // All sizes static: their product must equal the dim's run-time size.
  msg = error_of([&] { (void)m.unflatten<"dp", dm::dim<"a", 2>, dm::dim<"b", 2>>(); });
  CHECK(starts_with(msg, DEVMESH_MSG_UNFLATTEN_PRODUCT));
  CHECK(has(msg, "'dp'"));
  CHECK(starts_with(error_of([&] { (void)m.unflatten<"tp", dm::dim<"x", 3>>(); }), DEVMESH_MSG_UNFLATTEN_PRODUCT));
  // And the good cases.
  const auto u = m.unflatten<"dp", dm::dim<"a", 3>, dm::dim<"b">>();
  CHECK(u.shape() == std::array{3, 2, 2});
  CHECK(m.unflatten<"dp", dm::dim<"a", 2>, dm::dim<"b", 3>>().shape() == std::array{2, 3, 2});
  // Large static new sizes (their product fits in an int): an error, not a division by 0.
  msg = error_of([&] { (void)m.unflatten<"dp", dm::dim<"a", 65536>, dm::dim<"b", 16384>, dm::dim<"c">>(); });
  CHECK(starts_with(msg, DEVMESH_MSG_UNFLATTEN_PRODUCT));
  CHECK(has(msg, "1073741824"));
  // (Static new sizes that multiply to more than INT_MAX are the compile-fail case
  // unflatten_overflow: they could never fit, whatever the dim's run-time size.)
  // A static dim split into an inferred part checks at run time too.
  CHECK(starts_with(error_of([] { (void)mesh3d{}.unflatten<"dp", dm::dim<"x", 4>, dm::dim<"y">>(); }),
                    DEVMESH_MSG_UNFLATTEN_PRODUCT));
}

TEST_CASE("ranks out of range") {
  const hsdp h(2);
  constexpr mesh3d s{};
  for (int r : {-1, 8, 9, INT_MIN, INT_MAX}) {
    CAPTURE(r);
    const auto msg = error_of([&] { (void)h.coordinate(r); });
    CHECK(starts_with(msg, DEVMESH_MSG_RANK_RANGE));
    CHECK(has(msg, ("rank " + std::to_string(r)).c_str()));
    CHECK(has(msg, "[0, 8)"));
    CHECK(starts_with(error_of([&] { (void)h.local_rank<"shard">(r); }), DEVMESH_MSG_RANK_RANGE));
    CHECK(starts_with(error_of([&] { (void)h.group<"shard">(r); }), DEVMESH_MSG_RANK_RANGE));
    CHECK(starts_with(error_of([&] { (void)h.group(r); }), DEVMESH_MSG_RANK_RANGE));
    CHECK(starts_with(error_of([&] { (void)h.comm_split<"replicate">(r); }), DEVMESH_MSG_RANK_RANGE));
    CHECK(starts_with(error_of([&] { (void)h.comm_split(r, 0); }), DEVMESH_MSG_RANK_RANGE));
    CHECK(starts_with(error_of([&] { (void)h.rank_at({0, 0}, r); }), DEVMESH_MSG_RANK_RANGE));
    // A static mesh used at run time checks the same way.
    CHECK(starts_with(error_of([&] { (void)s.coordinate(r); }), DEVMESH_MSG_RANK_RANGE));
    CHECK(starts_with(error_of([&] { (void)s.group<"dp", "tp">(r); }), DEVMESH_MSG_RANK_RANGE));
    // A submesh still lives in the root's rank space: ranks of other submeshes are fine.
    CHECK(starts_with(error_of([&] { (void)s.slice<"tp">().group(r); }), DEVMESH_MSG_RANK_RANGE));
  }
  CHECK(s.slice<"tp">().group(7).front() == 6);
}

TEST_CASE("coordinates out of range name the dim") {
  const hsdp h(2);
  auto msg = error_of([&] { (void)h.rank_at({2, 0}); });
  CHECK(starts_with(msg, DEVMESH_MSG_COORD_RANGE));
  CHECK(has(msg, "'replicate'"));
  CHECK(has(msg, "[0, 2)"));
  msg = error_of([&] { (void)h.rank_at({0, -1}); });
  CHECK(starts_with(msg, DEVMESH_MSG_COORD_RANGE));
  CHECK(has(msg, "'shard'"));
  CHECK(starts_with(error_of([] { (void)mesh3d{}.slice<"tp", "dp">().rank_at({0, 2}); }), DEVMESH_MSG_COORD_RANGE));
  CHECK(has(error_of([] { (void)mesh3d{}.slice<"tp", "dp">().rank_at({0, 2}); }), "'dp'"));
}

TEST_CASE("dim indices out of range") {
  const hsdp h(2);
  CHECK(starts_with(error_of([&] { (void)h.size(2); }), "devmesh: dim index 2"));
  CHECK(starts_with(error_of([&] { (void)h.size(-1); }), "devmesh: dim index -1"));
  CHECK(h.size(1) == 4);
}

TEST_CASE("one index domain: every query by dim index takes the aliases, after the mesh's dims") {
  const hsdp h(2);
  const auto f = h.flatten<"all">();  // dim 0: all; aliases 1: replicate, 2: shard
  CHECK(decltype(f)::ndim == 1);
  for (int d = 0; d < decltype(f)::ndim_with_aliases; ++d) {
    CAPTURE(d);
    CHECK(f.size(d) == f.dim_size(d));
    CHECK(f.dim_layout(d).size() == f.size(d));
    for (int r = 0; r < 8; ++r) CHECK(f.comm_split(r, d).key == f.coordinate_unchecked(r, d));
  }
  CHECK(f.size(f.dim_index<"shard">()) == 4);
  CHECK(decltype(f)::name(2) == "shard");
  // Out of range, each query names every dim, aliases included.
  for (int d : {-1, 3}) {
    CAPTURE(d);
    const std::string tail = " is not in [0, 3) (dims: all; aliases: replicate, shard)";
    CHECK(error_of([&] { (void)f.size(d); }) == "devmesh: dim index " + std::to_string(d) + tail);
    CHECK(error_of([&] { (void)f.dim_size(d); }) == "devmesh: dim index " + std::to_string(d) + tail);
    CHECK(error_of([&] { (void)f.dim_layout(d); }) == "devmesh: dim index " + std::to_string(d) + tail);
    CHECK(error_of([&] { (void)f.comm_split(0, d); }) == "devmesh: dim index " + std::to_string(d) + tail);
    CHECK(error_of([&] { (void)decltype(f)::name(d); }) == "devmesh: dim index " + std::to_string(d) + tail);
  }
}
}
