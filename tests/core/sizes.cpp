// The one size resolver (core/sizes.hpp): its rules at compile time, and its callers (the
// constructor, for_world, parse_mesh, unflatten) agreeing with it and with each other.
#include <doctest/doctest.h>

#include <devmesh/devmesh.hpp>

#include <climits>
#include <string>

namespace dm = devmesh;

namespace {
using dm::detail::no_total;
using dm::detail::resolve_sizes;
using dm::detail::size_fault;
constexpr int dyn = dm::dynamic_size;

// Known sizes multiply; an unknown one is inferred from a total, or stays unknown without.
constexpr int two_four[] = {2, 4};
static_assert(resolve_sizes({.given = two_four, .n = 2}).ok() && resolve_sizes({.given = two_four, .n = 2}).known == 8);
constexpr int any_four[] = {dyn, 4};
constexpr auto inferred = resolve_sizes({.given = any_four, .n = 2, .total = 8});
static_assert(inferred.ok() && inferred.inferred == 0 && inferred.inferred_size == 2 && inferred.known == 4);
constexpr auto open_ended = resolve_sizes({.given = any_four, .n = 2});
static_assert(open_ended.ok() && open_ended.inferred == 0 && open_ended.inferred_size == 0);
// At most `unknowns` unknown sizes (default one); with none allowed, dynamic_size is a bad size.
constexpr int two_unknown[] = {dyn, 4, dyn};
constexpr auto too_many = resolve_sizes({.given = two_unknown, .n = 3, .total = 8});
static_assert(too_many.fault == size_fault::too_many_unknown && too_many.inferred == 0 && too_many.dim == 2);
static_assert(resolve_sizes({.given = two_unknown, .n = 3, .unknowns = 3}).ok());
static_assert(resolve_sizes({.given = any_four, .n = 2, .unknowns = 0}).fault == size_fault::non_positive);
// Every size positive; static sizes must match, inferred ones too.
constexpr int zero[] = {2, 0};
static_assert(resolve_sizes({.given = zero, .n = 2}).fault == size_fault::non_positive &&
              resolve_sizes({.given = zero, .n = 2}).dim == 1);
constexpr int two_eight[] = {2, 8};
constexpr int any_fixed_four[] = {dyn, 4};
static_assert(resolve_sizes({.given = two_eight, .n = 2, .fixed = any_fixed_four}).fault == size_fault::static_mismatch);
static_assert(resolve_sizes({.given = two_eight, .n = 2, .fixed = any_fixed_four}).dim == 1);
constexpr int fixed_two_four[] = {2, 4};
static_assert(resolve_sizes({.given = any_four, .n = 2, .fixed = fixed_two_four, .total = 12}).fault ==
              size_fault::inferred_mismatch);
static_assert(resolve_sizes({.given = any_four, .n = 2, .fixed = fixed_two_four, .total = 8}).ok());
// The product fits an int (saturated, never overflowing itself); per-dim faults come first.
constexpr int big[] = {65536, 65536};
static_assert(resolve_sizes({.given = big, .n = 2}).fault == size_fault::overflow &&
              resolve_sizes({.given = big, .n = 2}).known == INT_MAX + 1LL);
constexpr int big_and_zero[] = {65536, 65536, 0};
static_assert(resolve_sizes({.given = big_and_zero, .n = 3}).fault == size_fault::non_positive);
constexpr int widest[] = {32768, 65535, dyn};
static_assert(resolve_sizes({.given = widest, .n = 3}).ok() && resolve_sizes({.given = widest, .n = 3}).known == 2147450880);
// The total: without an unknown size the product must be it; with one, a positive multiple.
static_assert(resolve_sizes({.given = two_four, .n = 2, .total = 16}).fault == size_fault::total_mismatch);
static_assert(resolve_sizes({.given = any_four, .n = 2, .total = 6}).fault == size_fault::not_multiple);
static_assert(resolve_sizes({.given = any_four, .n = 2, .total = 0}).fault == size_fault::not_multiple);
static_assert(resolve_sizes({.given = any_four, .n = 2, .total = -8}).fault == size_fault::not_multiple);
static_assert(resolve_sizes({.given = two_four, .n = 2, .total = no_total}).ok());

using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;

template <class F>
bool throws(F&& f) {
  try {
    (void)f();
  } catch (const dm::mesh_error&) {
    return true;
  }
  return false;
}
}  // namespace

TEST_SUITE("sizes") {
  TEST_CASE("for_world, parse_mesh and the resolver agree on every world") {
    const int fixed[] = {dyn, 4};
    for (int world = -3; world <= 40; ++world) {
      CAPTURE(world);
      const int given[] = {dyn, 4};
      const auto r = resolve_sizes({.given = given, .n = 2, .fixed = fixed, .total = world});
      CHECK(throws([&] { return hsdp::for_world(world); }) == !r.ok());
      if (world >= 0) CHECK(throws([&] { return dm::parse_mesh<hsdp>("replicate=*,shard=4", world); }) == !r.ok());
      if (r.ok()) {
        CHECK(hsdp::for_world(world).size<"replicate">() == r.inferred_size);
        CHECK(dm::parse_mesh<hsdp>("replicate=auto,shard=4", world) == hsdp::for_world(world));
      }
    }
  }

  TEST_CASE("the constructor, parse_mesh and the resolver agree on every size") {
    const int fixed[] = {dyn, 4};
    for (int replicate = -2; replicate <= 6; ++replicate)
      for (int shard : {1, 4, 8}) {
        CAPTURE(replicate);
        CAPTURE(shard);
        const int given[] = {replicate, shard};
        const bool ok = resolve_sizes({.given = given, .n = 2, .fixed = fixed, .unknowns = 0}).ok();
        CHECK(throws([&] { return hsdp(replicate, shard); }) == !ok);
        if (replicate > 0)
          CHECK(throws([&] {
                  return dm::parse_mesh<hsdp>("replicate=" + std::to_string(replicate) + ",shard=" + std::to_string(shard));
                }) == !ok);
      }
  }

  TEST_CASE("unflatten infers a size as the resolver does") {
    for (int n = 1; n <= 24; ++n) {
      CAPTURE(n);
      const hsdp h(n);
      const int given[] = {3, dyn};
      const auto r = resolve_sizes({.given = given, .n = 2, .total = n});
      CHECK(throws([&] { return h.unflatten<"replicate", dm::dim<"a", 3>, dm::dim<"b">>(); }) == !r.ok());
      if (r.ok()) CHECK(h.unflatten<"replicate", dm::dim<"a", 3>, dm::dim<"b">>().size<"b">() == r.inferred_size);
    }
  }
}
