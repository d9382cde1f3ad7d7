// Specs in PyTorch's spelling (sharding/text.hpp): parse_sharding and to_string, both forms,
// every placement, round trips, the errors, and hostile input (only mesh_error, never a crash).
#include <doctest/doctest.h>

#include <devmesh/sharding.hpp>

#include "messages.hpp"

#include <random>
#include <string>

namespace dm = devmesh;

namespace {
using mesh2d = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

using sharding_test::contains;
using sharding_test::message_of;
}  // namespace

TEST_SUITE("sharding_text") {
  TEST_CASE("every placement, positional and named, read back by to_string") {
    const mesh2d m(2, 4);
    CHECK(dm::to_string(dm::parse_sharding("S(0),R", m)) == "S(0),R");
    CHECK(dm::to_string(dm::parse_sharding("R,S(1)", m)) == "R,S(1)");
    CHECK(dm::to_string(dm::parse_sharding(" P(sum) , P(sum) ", m)) == "P(sum),P(sum)");
    CHECK(dm::to_string(dm::parse_sharding("P(avg),S(0)", m)) == "P(avg),S(0)");
    CHECK(dm::to_string(dm::parse_sharding("tp=S(1)", m)) == "R,S(1)");  // dims not named: R
    CHECK(dm::to_string(dm::parse_sharding("tp=P(min),dp=S(0)", m)) == "S(0),P(min)");
    const auto fsdp_tp = dm::parse_sharding("_S(0,4),S(0)", m);  // FSDP over TP: tp splits first
    CHECK(dm::to_string(fsdp_tp) == "_S(0,4),S(0)");
    CHECK(fsdp_tp.split_factor(0) == 4);
    // A shard order prints as PyTorch encodes it, and reads back to the same answers.
    dm::dynamic_sharding<mesh2d> ordered(m);
    ordered.order(0, {"tp", "dp"});
    CHECK(dm::to_string(ordered) == "_S(0,4),S(0)");
    const dm::dextents<2> ext(13, 6);
    for (int r = 0; r < 8; ++r) {
      CHECK(ordered.local_shape(ext, r) == fsdp_tp.local_shape(ext, r));
      for (dm::tensor_index i = 0; i < ordered.local_shape(ext, r)[0]; ++i)
        CHECK(ordered.global_index(ext, r, 0, i) == fsdp_tp.global_index(ext, r, 0, i));
    }
  }
  TEST_CASE("the placements' meaning: the parsed spec answers as the typed one") {
    constexpr mesh3d m{};
    const auto parsed = dm::parse_sharding("S(0),R,S(1)", m);
    using typed = dm::sharding<mesh3d, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<1>>>;
    const dm::dextents<2> ext(13, 5);
    for (int r = 0; r < 8; ++r) {
      CHECK(parsed.local_shape(ext, r) == typed{}.local_shape(ext, r));
      CHECK(parsed.global_offset(ext, r) == typed{}.global_offset(ext, r));
    }
  }
  TEST_CASE("aliases by name; the named form where an alias is placed") {
    const auto f = mesh2d(2, 4).flatten<"dp_tp", "dp", "tp">();
    const auto s = dm::parse_sharding("dp_tp=S(0)", f);
    CHECK(dm::to_string(s) == "dp_tp=S(0)");
    CHECK(dm::to_string(dm::parse_sharding(dm::to_string(s), f)) == "dp_tp=S(0)");
    CHECK(s.local_shape(dm::dextents<1>(16), 5)[0] == 2);
    CHECK(s.global_offset(dm::dextents<1>(16), 5)[0] == 10);
  }
  TEST_CASE("errors quote the spec and name the entry or the dims") {
    const mesh2d m(2, 4);
    CHECK(contains(message_of([&] { (void)dm::parse_sharding("S(0)", m); }), "1 placements for a mesh of 2 dims"));
    CHECK(contains(message_of([&] { (void)dm::parse_sharding("S(0),R,R", m); }), "more than 2 entries"));
    CHECK(contains(message_of([&] { (void)dm::parse_sharding("dp=S(0),S(1)", m); }), "mixes named entries"));
    CHECK(contains(message_of([&] { (void)dm::parse_sharding("Q(1),R", m); }), "entry 1 'Q(1)': expected R, S(d)"));
    CHECK(contains(message_of([&] { (void)dm::parse_sharding("R,P(prod)", m); }), "entry 2 'P(prod)'"));
    CHECK(contains(message_of([&] { (void)dm::parse_sharding("S(-1),R", m); }), "entry 1"));
    CHECK(contains(message_of([&] { (void)dm::parse_sharding("S(99999999999),R", m); }), "entry 1"));
    CHECK(contains(message_of([&] { (void)dm::parse_sharding("_S(0,0),R", m); }), "entry 1"));
    CHECK(contains(message_of([&] { (void)dm::parse_sharding("R),R", m); }), "a ')' without its '('"));
    const auto unknown = message_of([&] { (void)dm::parse_sharding("pp=R", m); });
    CHECK(contains(unknown, DEVMESH_MSG_PLACEMENT_UNKNOWN_DIM));
    CHECK(contains(unknown, "'pp' in sharding spec 'pp=R' (dims: dp, tp)"));
    CHECK(contains(message_of([&] { (void)dm::parse_sharding("dp=R,dp=S(0)", m); }), DEVMESH_MSG_PLACED_TWICE));
    CHECK(contains(message_of([&] { (void)dm::parse_sharding("P(sum),P(max)", m); }), DEVMESH_MSG_PARTIALS_DIFFER));
    CHECK(contains(message_of([&] { (void)dm::parse_sharding("R,\x01", m); }), "'R,\\x01'"));
    // A tensor dim past the tensor's rank is the spec's check, at the first query.
    const auto s = dm::parse_sharding("S(2),R", m);
    CHECK(contains(message_of([&] { (void)s.local_shape(dm::dextents<2>(4, 4), 0); }), DEVMESH_MSG_TENSOR_DIM_RANGE));
  }
  TEST_CASE("hostile input: random bytes and mutations of valid specs give a spec or a mesh_error") {
    const mesh2d m(2, 4);
    std::mt19937 rng(20261125);
    const std::string alphabet = "RSP_()=,0123456789 sumavgminxdpt\x01\xff";
    const std::string seeds[] = {"S(0),R", "dp=_S(0,4),tp=S(0)", "P(sum),P(sum)", "R,S(1)"};
    int parsed = 0, refused = 0;
    for (int k = 0; k < 20000; ++k) {
      std::string s = seeds[static_cast<std::size_t>(k) % 4];
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e) {
        const std::size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
        const char c = alphabet[rng() % alphabet.size()];
        switch (rng() % 3) {
          case 0: s.insert(at, 1, c); break;
          case 1: if (at < s.size()) s.erase(at, 1); break;
          default: if (at < s.size()) s[at] = c; break;
        }
      }
      try {
        const auto spec = dm::parse_sharding(s, m);
        ++parsed;
        CHECK(dm::to_string(dm::parse_sharding(dm::to_string(spec), m)) == dm::to_string(spec));
      } catch (const dm::mesh_error& e) {
        ++refused;
        CHECK(std::string(e.what()).starts_with("devmesh: "));
      }
    }
    CHECK(parsed > 100);
    CHECK(refused > 100);
    CHECK(contains(message_of([&] { (void)dm::parse_sharding(std::string(5000, 'R'), m); }), "longer than 4096"));
  }
}
