// The run-time half of the sharding checks: a dynamic spec (built as a parser would) and
// dynamic extents or mesh sizes throw mesh_error naming the dims, for each misuse a static
// spec rejects at compile time (tests/sharding/compile_fail); and a dynamic spec answers as
// the static spec with the same placements.
#include <doctest/doctest.h>

#include <devmesh/sharding.hpp>

#include "messages.hpp"

#include <array>
#include <string>

namespace dm = devmesh;

namespace {
using mesh2d = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;
using static2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

using sharding_test::contains;
using sharding_test::message_of;
}  // namespace

TEST_SUITE("sharding_dynamic") {
  TEST_CASE("a placement on a dim the mesh does not have lists the mesh's dims") {
    const auto m = mesh2d(2, 4).flatten<"dp_tp", "dp", "tp">();
    dm::dynamic_sharding<std::remove_const_t<decltype(m)>> s(m);
    const auto what = message_of([&] { s.place("pp", dm::placement::sharded(0)); });
    CHECK(contains(what, DEVMESH_MSG_PLACEMENT_UNKNOWN_DIM));
    CHECK(contains(what, "'pp' (dims: dp, tp; aliases: dp_tp)"));
    CHECK(contains(message_of([&] { s.place(7, dm::placement::replicated()); }), "(dims: dp, tp; aliases: dp_tp)"));
    CHECK(contains(message_of([&] { s.order(0, {"tp", "pp"}); }), "'pp' (dims: dp, tp; aliases: dp_tp)"));
  }
  TEST_CASE("two placements for one mesh dim: named twice, or an alias with one of its own dims") {
    const auto m = mesh2d(2, 4).flatten<"dp_tp", "dp", "tp">();
    dm::dynamic_sharding<std::remove_const_t<decltype(m)>> s(m);
    s.place("tp", dm::placement::replicated());
    CHECK(contains(message_of([&] { s.place("tp", dm::placement::sharded(0)); }), "'tp' and 'tp'"));
    const auto what = message_of([&] { s.place("dp_tp", dm::placement::sharded(0)); });
    CHECK(contains(what, DEVMESH_MSG_PLACED_TWICE));
    CHECK(contains(what, "'dp_tp' and 'tp'"));
  }
  TEST_CASE("an explicit order that names a dim twice, or a tensor dim sharded outside its order") {
    dm::dynamic_sharding<mesh2d> s(mesh2d(2, 4));
    const auto what = message_of([&] { s.order(0, {"tp", "dp", "tp"}); });
    CHECK(contains(what, DEVMESH_MSG_ORDER_REPEATS));
    CHECK(contains(what, "'tp' in the order of tensor dim 0"));
    s.place("dp", dm::placement::sharded(1));
    CHECK(contains(message_of([&] { s.order(1, {"tp"}); }), DEVMESH_MSG_ORDER_NOT_EXCLUSIVE));
    dm::dynamic_sharding<mesh2d> t(mesh2d(2, 4));
    t.order(0, {"tp"});
    CHECK(contains(message_of([&] { t.place("dp", dm::placement::sharded(0)); }), "'dp' and tensor dim 0"));
  }
  TEST_CASE("Partial placements of different reductions, as PyTorch refuses them") {
    dm::dynamic_sharding<mesh2d> s(mesh2d(2, 4));
    s.place("dp", dm::placement::partial_of(dm::reduction::sum));
    const auto what = message_of([&] { s.place("tp", dm::placement::partial_of(dm::reduction::max)); });
    CHECK(contains(what, DEVMESH_MSG_PARTIALS_DIFFER));
    CHECK(contains(what, "'tp' and 'dp'"));
    s.place("tp", dm::placement::partial_of(dm::reduction::sum));  // the same reduction: fine
    CHECK(s.placement_of(1).is_partial());
  }
  TEST_CASE("a tensor dim out of range, at the first query") {
    dm::dynamic_sharding<mesh2d> s(mesh2d(2, 4));
    s.place("tp", dm::placement::sharded(2));
    const auto what = message_of([&] { (void)s.local_shape(dm::dextents<2>(4, 4), 0); });
    CHECK(contains(what, DEVMESH_MSG_TENSOR_DIM_RANGE));
    CHECK(contains(what, "dim 'tp' shards tensor dim 2 of a tensor of rank 2"));
    CHECK(s.local_shape(dm::dextents<3>(4, 4, 8), 1) == std::array<dm::tensor_index, 3>{4, 4, 2});
  }
  TEST_CASE("chunking::even whose dynamic extent or mesh size does not divide") {
    using spec = dm::sharding<static2d, dm::chunks<dm::chunking::even>, dm::on<"tp", dm::shard<0>>>;
    const auto what = message_of([&] { (void)spec{}.global_offset(dm::dextents<1>(13), 1); });
    CHECK(contains(what, DEVMESH_MSG_NOT_DIVISIBLE));
    CHECK(contains(what, "tensor dim 0 has extent 13, not a multiple of its 4 shards"));
    CHECK(spec{}.global_offset(dm::dextents<1>(12), 1)[0] == 3);
    const auto on_dynamic = dm::make_sharding<dm::chunks<dm::chunking::even>, dm::on<"tp", dm::shard<0>>>(mesh2d(2, 3));
    CHECK(contains(message_of([&] { (void)on_dynamic.is_even(dm::extents<16>{}); }), "not a multiple of its 3 shards"));
    dm::dynamic_sharding<mesh2d> s(mesh2d(2, 4));
    s.chunk(dm::chunking::even).place("dp", dm::placement::sharded(0)).place("tp", dm::placement::sharded(0));
    CHECK(contains(message_of([&] { (void)s.local_size(dm::extents<12>{}, 0); }),
                   "extent 12, not a multiple of its 8 shards"));
  }
  TEST_CASE("global_index and held run the even-chunking check, as every query does") {
    using spec = dm::sharding<static2d, dm::chunks<dm::chunking::even>, dm::on<"tp", dm::shard<0>>>;
    const char* uneven = "tensor dim 0 has extent 13, not a multiple of its 4 shards";
    CHECK(contains(message_of([&] { (void)spec{}.global_index(dm::dextents<1>(13), 1, 0, 0); }), uneven));
    CHECK(contains(message_of([&] { (void)spec{}.held(dm::dextents<1>(13), 1, 0); }), uneven));
    dm::dynamic_sharding<mesh2d> s(mesh2d(2, 4));
    s.chunk(dm::chunking::even).place("tp", dm::placement::sharded(0));
    CHECK(contains(message_of([&] { (void)s.global_index(dm::dextents<1>(13), 1, 0, 0); }), uneven));
    CHECK(contains(message_of([&] { (void)s.held(dm::dextents<1>(13), 1, 0); }), uneven));
    // An extent that divides: the same answers as before the check.
    CHECK(spec{}.global_index(dm::dextents<1>(12), 1, 0, 2) == 5);
    CHECK(s.held(dm::dextents<1>(12), 3, 0).global_index(0) == 9);
  }
  TEST_CASE("placement_of and split_factor check their dim index") {
    const auto m = mesh2d(2, 4).flatten<"dp_tp", "dp", "tp">();
    dm::dynamic_sharding<std::remove_const_t<decltype(m)>> s(m);
    s.place("tp", dm::placement::sharded(0));
    CHECK(contains(message_of([&] { (void)s.placement_of(3); }), "placement_of: mesh dim 3 is not in [0, 3)"));
    CHECK(contains(message_of([&] { (void)s.placement_of(-1); }), "placement_of: mesh dim -1 is not in [0, 3)"));
    CHECK(contains(message_of([&] { (void)s.split_factor(3); }), "split_factor: mesh dim 3 is not in [0, 3)"));
    CHECK(contains(message_of([&] { (void)s.split_factor(-1); }), "split_factor: mesh dim -1 is not in [0, 3)"));
    CHECK(s.placement_of(1).is_shard());  // in range: as before (the alias, index 2, is replicated)
    CHECK(!s.placement_of(2).is_shard());
    using spec = dm::sharding<static2d, dm::on<"tp", dm::shard<0>>>;
    CHECK(contains(message_of([&] { (void)spec{}.placement_of(2); }), "placement_of: mesh dim 2 is not in [0, 2)"));
    CHECK(contains(message_of([&] { (void)spec{}.split_factor(2); }), "split_factor: mesh dim 2 is not in [0, 2)"));
  }
  TEST_CASE("positions, local and global indices out of range") {
    using spec = dm::sharding<static2d, dm::on<"tp", dm::shard<0>>>;
    CHECK(contains(message_of([&] { (void)spec{}.local_shape(dm::extents<13>{}, 8); }), "position 8 is not in [0, 8)"));
    CHECK(contains(message_of([&] { (void)spec{}.global_index(dm::extents<13>{}, 3, 0, 1); }),
                   "local index 1 is not in [0, 1)"));
    CHECK(contains(message_of([&] { (void)spec{}.owners(dm::extents<13>{}, {13}); }),
                   "global index 13 is not in [0, 13)"));
    CHECK(contains(message_of([&] { (void)dm::dextents<2>(3, -1); }), "extent -1 of tensor dim 1 is negative"));
    CHECK(contains(message_of([&] { (void)dm::extents<dm::dynamic_size, 4>(3, 5); }),
                   "5 given for tensor dim 1, whose static extent is 4"));
  }
  TEST_CASE("a dynamic spec answers as the static one with the same placements") {
    using good = dm::sharding<static2d, dm::shard_order<0, "tp", "dp">>;
    dm::dynamic_sharding<static2d> dyn;
    dyn.order(0, {"tp", "dp"});
    const dm::dynamic_sharding<static2d> converted = good{};
    CHECK(dyn.table() == good{}.table());
    CHECK(converted.table() == dyn.table());
    const dm::dextents<2> ext(13, 5);
    for (int r = 0; r < 8; ++r) {
      CHECK(dyn.local_shape(ext, r) == good{}.local_shape(dm::extents<13, 5>{}, r));
      CHECK(dyn.global_offset(ext, r) == good{}.global_offset(dm::extents<13, 5>{}, r));
      CHECK(dyn.split_factor(0) == 4);
    }
  }
}
