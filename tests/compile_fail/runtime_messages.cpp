// The run-time half of docs/errors.md: every mesh_error the core layout throws, with the
// exact what() the doc quotes. (The compile-time half is the cases/ directory.)
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <devmesh/devmesh.hpp>

#include <string>

namespace dm = devmesh;

namespace {
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;
using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;
using two = dm::mesh<dm::dim<"a">, dm::dim<"b">>;

template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const dm::mesh_error& e) {
    return e.what();
  }
  return "(no exception)";
}

// Run-time values, so that the static mesh's checks run at run time, not at compile time.
volatile int eight = 8, minus_one = -1, two_v = 2, three = 3;
}  // namespace

TEST_CASE("rank out of range") {
  const mesh3d m{};
  CHECK(message_of([&] { (void)m.coordinate(eight); }) == "devmesh: rank out of range: rank 8 is not in [0, 8)");
  CHECK(message_of([&] { (void)m.group<"tp">(minus_one); }) ==
        "devmesh: rank out of range: rank -1 is not in [0, 8)");
  CHECK(message_of([&] { (void)m.local_rank<"cp">(eight); }) == "devmesh: rank out of range: rank 8 is not in [0, 8)");
  CHECK(message_of([&] { (void)m.comm_split<"dp">(eight); }) == "devmesh: rank out of range: rank 8 is not in [0, 8)");
}

TEST_CASE("coordinate and dim index out of range") {
  const mesh3d m{};
  CHECK(message_of([&] { (void)m.rank_at({0, two_v, 0}); }) ==
        "devmesh: coordinate out of range: coordinate 2 along dim 'cp' is not in [0, 2)");
  CHECK(message_of([&] { (void)m.size(three); }) == "devmesh: dim index 3 is not in [0, 3) (dims: dp, cp, tp)");
  // Aliases are dims too (after the mesh's own): index 3 is dp_cp, 4 is out of range.
  const auto f = m.flatten<"dp_cp", "dp", "cp">();
  CHECK(f.size(three) == 4);
  CHECK(message_of([&] { (void)f.size(three + 1); }) ==
        "devmesh: dim index 4 is not in [0, 4) (dims: dp, cp, tp; aliases: dp_cp)");
}

TEST_CASE("conversion to a static mesh type") {
  using dynamic3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;
  CHECK(message_of([] { (void)mesh3d(dynamic3(2, 3, 2)); }) ==
        std::string(DEVMESH_MSG_CONVERSION) + ": dim 'cp' has size 3, the target type needs 2");
  // A slice of another root: its one dim agrees, its root does not.
  using slice_of_8 = decltype(mesh3d{}.slice<"tp">());
  CHECK(message_of([] { (void)slice_of_8(dynamic3(3, 2, 2).slice<"tp">()); }) ==
        std::string(DEVMESH_MSG_CONVERSION) + ": the root has 12 ranks, the target type needs 8");
}

TEST_CASE("dynamic sizes") {
  CHECK(message_of([] { (void)hsdp(0); }) ==
        std::string(DEVMESH_MSG_NON_POSITIVE) + ": got 0 for dim 'replicate'");
  CHECK(message_of([] { (void)hsdp(-2); }) ==
        std::string(DEVMESH_MSG_NON_POSITIVE) + ": got -2 for dim 'replicate'");
  CHECK(message_of([] { (void)hsdp(2, 8); }) ==
        "devmesh: a size given for a static dim differs from its static size: dim 'shard' is 4, got 8");
  CHECK(message_of([] { (void)two(65536, 65536); }) ==
        std::string(DEVMESH_MSG_OVERFLOW) + ": the sizes (a=65536, b=65536) multiply to more than 2147483647");
  CHECK(message_of([] { (void)two(4294967298LL, 2); }) ==
        "devmesh: a dim size does not fit in an int (ranks are int, as in MPI and NCCL): got 4294967298 for dim 'a'");
  CHECK(message_of([] { (void)mesh3d(2, 3, 2); }) ==
        "devmesh: a size given for a static dim differs from its static size: dim 'cp' is 2, got 3");
}

TEST_CASE("for_world") {
  CHECK(message_of([] { (void)hsdp::for_world(6); }) ==
        "devmesh: the mesh does not fit the world size: world size 6 is not a positive multiple of the static "
        "dims' product 4 (dynamic dim 'replicate' cannot be inferred)");
  CHECK(message_of([] { (void)hsdp::for_world(0); }) ==
        "devmesh: the mesh does not fit the world size: world size 0 is not a positive multiple of the static "
        "dims' product 4 (dynamic dim 'replicate' cannot be inferred)");
  CHECK(message_of([] { (void)mesh3d::for_world(16); }) ==
        "devmesh: the mesh does not fit the world size: world size 16 differs from the mesh size 8");
  CHECK(hsdp::for_world(8).size<"replicate">() == 2);
}

TEST_CASE("unflatten of a dynamic dim") {
  const hsdp h(3);
  // One dynamic new dim: inferred, so the static ones must divide the dim.
  CHECK(message_of([&] { (void)h.unflatten<"replicate", dm::dim<"a", 2>, dm::dim<"b">>(); }) ==
        std::string(DEVMESH_MSG_UNFLATTEN_PRODUCT) +
            ": dim 'replicate' has size 3, not divisible by the static new sizes' product 2");
  // All new dims static: their product must equal the dim's run-time size.
  CHECK(message_of([&] { (void)h.unflatten<"replicate", dm::dim<"a", 2>, dm::dim<"b", 2>>(); }) ==
        std::string(DEVMESH_MSG_UNFLATTEN_PRODUCT) + ": dim 'replicate' has size 3, the new dims multiply to 4");
  CHECK(message_of([&] { (void)h.unflatten<"replicate", dm::dim<"a", 3>, dm::dim<"b", 2>>(); }) ==
        std::string(DEVMESH_MSG_UNFLATTEN_PRODUCT) + ": dim 'replicate' has size 3, the new dims multiply to 6");
  CHECK(h.unflatten<"replicate", dm::dim<"a", 3>, dm::dim<"b", 1>>().size<"a">() == 3);
  CHECK(h.unflatten<"replicate", dm::dim<"a", 3>, dm::dim<"b">>().size<"b">() == 1);
}

TEST_CASE("unflatten with run-time sizes, and slices by run-time names") {
  using dm::dim;
  const dm::mesh<dim<"world">> w(24);
  const auto cut = [&](int pp, int dp, int tp) { (void)w.unflatten<"world", dim<"pp", 2>, dim<"dp">, dim<"tp">>(pp, dp, tp); };
  CHECK(message_of([&] { cut(3, 4, 2); }) == std::string(DEVMESH_MSG_STATIC_SIZE_MISMATCH) +
                                                ": new dim 'pp' of dim 'world' is 2, got 3 (pp=3, dp=4, tp=2)");
  CHECK(message_of([&] { cut(2, 5, 3); }) ==
        std::string(DEVMESH_MSG_UNFLATTEN_PRODUCT) + ": dim 'world' has size 24, the new dims multiply to 30 (pp=2, dp=5, tp=3)");
  CHECK(message_of([&] { cut(2, dm::dynamic_size, 5); }) ==
        std::string(DEVMESH_MSG_UNFLATTEN_PRODUCT) +
            ": dim 'world' has size 24, not divisible by the other new sizes' product 10 (pp=2, dp inferred, tp=5)");
  CHECK(message_of([&] { cut(2, 0, 12); }) ==
        std::string(DEVMESH_MSG_NON_POSITIVE) + ": got 0 for new dim 'dp' (dm::dynamic_size: inferred)");
  const dm::mesh<dim<"a">, dim<"c">, dim<"b">> acb(4, 2, 3);
  CHECK(message_of([&] { (void)acb.flatten<"ab", "a", "b">().slice<"ab">().unflatten<"ab", dim<"x">, dim<"y">>(3, 4); }) ==
        std::string(DEVMESH_MSG_UNFLATTEN_SPLIT) +
            ": new dim 'y' of size 4 ends inside dim 'a' (size 4) of 'ab' (layout (4, 3):(6, 1)); with the new dims "
            "after it as they are (1 rank), sizes of 'y' that can be cut: 1, 3, 6, 12");
  const dm::mesh<dim<"dp">, dim<"cp">, dim<"tp">> m(2, 2, 2);
  const auto f = m.flatten<"dp_cp", "dp", "cp">();
  CHECK(message_of([&] { (void)f.slice({"dp", "pp"}); }) ==
        std::string(DEVMESH_MSG_UNKNOWN_DIM) + ": 'pp': the dims are dp, cp, tp (aliases: dp_cp)");
  CHECK(message_of([&] { (void)f.slice({"dp_cp", "cp"}); }) ==
        std::string(DEVMESH_MSG_SLICE_OVERLAP) + ": 'dp_cp' and 'cp' share ranks");
}

TEST_CASE("every message starts with devmesh:") {
  for (const std::string m : {DEVMESH_MSG_RANK_RANGE, DEVMESH_MSG_COORD_RANGE, DEVMESH_MSG_NON_POSITIVE,
                              DEVMESH_MSG_STATIC_SIZE_MISMATCH, DEVMESH_MSG_OVERFLOW, DEVMESH_MSG_WORLD_MISMATCH,
                              DEVMESH_MSG_UNFLATTEN_PRODUCT, DEVMESH_MSG_SIZE_RANGE, DEVMESH_MSG_CONVERSION,
                              DEVMESH_MSG_UNFLATTEN_SPLIT, DEVMESH_MSG_UNKNOWN_DIM, DEVMESH_MSG_SLICE_OVERLAP})
    CHECK(m.rfind("devmesh: ", 0) == 0);
}
