// Sizes that cannot overflow (issue 41, item 4): a tensor whose element count does not fit in
// std::int64_t is a mesh_error naming its extents (a static_assert for static extents:
// compile_fail/sharding_extents_overflow.cpp); extents up to INT64_MAX shard, index, overlap and
// cost right where the arithmetic used to wrap (ceil_div's a + b - 1, an all_reduce's
// 2 (n - 1) N bytes before the division); a cost that does not fit is a mesh_error, never a
// negative number. Run under UBSan by scripts/sanitize (sharding.overflow).
#include <doctest/doctest.h>

#include <devmesh/sharding.hpp>

#include "messages.hpp"

#include <cstdint>
#include <limits>
#include <string>

namespace dm = devmesh;

namespace {
using sharding_test::contains;
using sharding_test::message_of;

constexpr dm::tensor_index max64 = std::numeric_limits<dm::tensor_index>::max();
constexpr dm::tensor_index p2(int k) { return dm::tensor_index{1} << k; }

using mesh8 = dm::mesh<dm::dim<"dp", 8>>;
using mesh24 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
using rows8 = dm::sharding<mesh8, dm::on<"dp", dm::shard<0>>>;
using repl8 = dm::sharding<mesh8>;
using partial8 = dm::sharding<mesh8, dm::on<"dp", dm::partial<dm::reduction::sum>>>;
}  // namespace

TEST_SUITE("sharding_overflow") {
  TEST_CASE("a (2^62+1) x 4 tensor is a mesh_error naming its extents, whichever extents are dynamic") {
    const auto what = message_of([] { (void)dm::dextents<2>(p2(62) + 1, 4); });
    CHECK(contains(what, "devmesh: extents: the tensor's element count does not fit in std::int64_t"));
    CHECK(contains(what, "extents (4611686018427387905, 4)"));
    CHECK(contains(message_of([] { (void)dm::extents<dm::dynamic_size, 4>(p2(62) + 1); }),
                   "extents (4611686018427387905, 4)"));
    CHECK(contains(message_of([] { (void)dm::extents<4, dm::dynamic_size>(4, p2(62) + 1); }),
                   "extents (4, 4611686018427387905)"));
    CHECK(contains(message_of([] { (void)dm::dextents<3>(p2(32), p2(32), p2(31)); }), "does not fit"));
    // A zero extent does not make the others' product (the strides) fit.
    CHECK(contains(message_of([] { (void)dm::dextents<3>(p2(62) + 1, 0, 4); }), "extents (4611686018427387905, 0, 4)"));
    // The largest counts fit.
    CHECK(dm::dextents<1>(max64).size() == max64);
    CHECK(dm::dextents<2>(p2(61), 3).size() == 3 * p2(61));
    CHECK(dm::dextents<3>(p2(31), p2(31), 0).size() == 0);
    CHECK(dm::dextents<2>(p2(31), p2(31)).size() == p2(62));
  }

  TEST_CASE("the checked helper names what overflowed; a constant expression cannot overflow") {
    CHECK(dm::detail::checked_mul(p2(31), p2(31), "x") == p2(62));
    CHECK(dm::detail::checked_add(max64 - 1, 1, "x") == max64);
    const auto what = message_of([] { (void)dm::detail::checked_mul(p2(62) + 1, 4, "the test's product"); });
    CHECK(what == "devmesh: size overflow in the test's product: 4611686018427387905 * 4 does not fit in "
                  "std::int64_t (a tensor's element and byte counts must)");
    CHECK(contains(message_of([] { (void)dm::detail::checked_add(max64, 1, "a sum"); }), "9223372036854775807 + 1"));
    CHECK(contains(message_of([] { (void)dm::detail::checked_mul(-p2(62), 4, "a product"); }), "does not fit"));
  }

  TEST_CASE("an extent of INT64_MAX shards, indexes and overlaps right on 8 ranks") {
    const auto ext = dm::dextents<1>(max64);
    constexpr rows8 rows{};
    // torch.chunk: chunks of ceil((2^63 - 1) / 8) = 2^60, the last one 2^60 - 1.
    CHECK(rows.local_shape(ext, 0)[0] == p2(60));
    CHECK(rows.local_shape(ext, 7)[0] == p2(60) - 1);
    CHECK(rows.global_offset(ext, 7)[0] == 7 * p2(60));
    CHECK(rows.global_index(ext, 7, 0, p2(60) - 2) == max64 - 1);
    dm::tensor_index total = 0;
    for (int r = 0; r < 8; ++r) total += rows.local_size(ext, r);
    CHECK(total == max64);
    // The owner of the last index, and what two blocks share: one run, at its offsets.
    CHECK(rows.holds(ext, 7, {max64 - 1}));
    CHECK_FALSE(rows.holds(ext, 6, {max64 - 1}));
    dm::tensor_index runs = 0, first = -1, length = 0;
    const auto n = dm::for_each_shared_run(rows, 7, repl8{}, 0, ext, [&](dm::tensor_index a, dm::tensor_index b,
                                                                           dm::tensor_index len) {
      ++runs, first = b, length = len;
      CHECK(a == 0);
    });
    CHECK(runs == 1);
    CHECK(n == p2(60) - 1);
    CHECK(first == 7 * p2(60));
    CHECK(length == p2(60) - 1);
  }

  TEST_CASE("an explicit shard order and padded chunks on an extent near INT64_MAX") {
    const auto ext = dm::dextents<1>(max64 - 2);
    using strided = dm::sharding<mesh24, dm::shard_order<0, "tp", "dp">>;
    using padded = dm::sharding<mesh24, dm::chunks<dm::chunking::padded>, dm::on<"dp", dm::shard<0>>,
                                dm::on<"tp", dm::shard<0>>>;
    dm::tensor_index strided_total = 0, padded_total = 0;
    for (int r = 0; r < 8; ++r) {
      strided_total += strided{}.local_size(ext, r);
      padded_total += padded{}.local_size(ext, r);
      // The last local index maps back into the tensor, and is held there.
      const auto len = strided{}.local_shape(ext, r)[0];
      const auto g = strided{}.global_index(ext, r, 0, len - 1);
      CHECK(g >= 0);
      CHECK(g < max64 - 2);
      CHECK(strided{}.holds(ext, r, {g}));
    }
    CHECK(strided_total == max64 - 2);
    CHECK(padded_total == max64 - 2);
    CHECK(padded{}.global_offset(ext, 7)[0] == 7 * ((max64 - 2) / 8 + 1));
  }

  TEST_CASE("a plan's cost: exact where 2 (n - 1) N bytes would overflow, a mesh_error where the bytes do not fit") {
    // all_reduce of 2^60 four-byte elements over 8 ranks: 2 x 7 / 8 x 2^62 bytes = 7 x 2^60 (fits),
    // where 2 x 7 x 2^60 x 4 does not.
    const auto ext = dm::dextents<1>(p2(60));
    const auto reduce = dm::plan_redistribute(partial8{}, repl8{});
    REQUIRE(reduce.count == 1);
    REQUIRE(reduce[0].kind == dm::step_kind::all_reduce);
    CHECK(dm::bytes_sent(mesh8{}, reduce, ext, 0, 4) == 7 * p2(60));
    // And the same model on a small tensor (issue 20's numbers): 2 x 7 / 8 x 64 x 8 B.
    CHECK(dm::bytes_sent(mesh8{}, reduce, dm::extents<64>{}, 0, 8) == 896);
    // all_gather of 2^61 eight-byte elements: 7 x 2^58 elements pass through a rank, 7 x 2^61
    // bytes: more than INT64_MAX.
    const auto gather = dm::plan_redistribute(rows8{}, repl8{});
    REQUIRE(gather.count == 1);
    REQUIRE(gather[0].kind == dm::step_kind::all_gather);
    const auto big = dm::dextents<1>(p2(61));
    const auto what = message_of([&] { (void)dm::bytes_sent(mesh8{}, gather, big, 0, 8); });
    CHECK(contains(what, "devmesh: size overflow in a plan's cost (bytes sent): 2017612633061982208 * 8"));
    CHECK(dm::bytes_sent(mesh8{}, gather, big, 0, 1) == 7 * p2(58));
  }
}
