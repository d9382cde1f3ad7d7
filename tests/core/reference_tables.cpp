// The reference docs' rank tables on dynamic meshes (sizes known at run time): the same
// checks as reference_static.cpp's static_asserts, through the run-time code paths.
#include <doctest/doctest.h>

#include "reference_tables.hpp"

#include <iterator>
#include <vector>

namespace dm = devmesh;

TEST_SUITE("reference") {
TEST_CASE("device_mesh.py docstrings on dynamic meshes") {
  using mesh_dp_tp = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;
  const mesh_dp_tp m2(2, 4);
  CHECK(reference::local_rank_2x4(m2));
  CHECK(reference::getitem_2x4(m2));
  CHECK(reference::getitem_2x4(dm::mesh<dm::dim<"dp">, dm::dim<"tp", 4>>::for_world(8)));
  CHECK_FALSE(reference::getitem_2x4(mesh_dp_tp(4, 2)));  // not vacuous

  using mesh_dp_pp_cp = dm::mesh<dm::dim<"dp">, dm::dim<"pp">, dm::dim<"cp">>;
  CHECK(reference::getitem_2x2x2(mesh_dp_pp_cp(2, 2, 2)));

  const dm::mesh<dm::dim<"dp">, dm::dim<"cp", 2>, dm::dim<"tp">> m3(2, 2);  // sizes of dp and tp
  CHECK(reference::flatten_dp_cp(m3));
  CHECK(reference::flatten_dp_tp(m3));
  CHECK(reference::slice_alias_with_tp(m3));
}

TEST_CASE("mesh_notes_zh.md and the tutorial on dynamic meshes") {
  using mesh_rst = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 2>, dm::dim<"tp", 2>>;
  const auto m = mesh_rst::for_world(8);
  CHECK(m.size<"replicate">() == 2);
  CHECK(reference::notes_table_2x2x2(m));
  CHECK(reference::notes_hsdp_slice(m));

  using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;
  const auto h = hsdp::for_world(8);
  CHECK(h.shape() == std::array{2, 4});
  CHECK(reference::tutorial_hsdp(h));
  CHECK(reference::tutorial_hsdp(hsdp(2)));
  CHECK(reference::tutorial_hsdp(hsdp(2, 4)));  // all sizes, the static one checked
  CHECK_FALSE(reference::tutorial_hsdp(dm::mesh<dm::dim<"replicate">, dm::dim<"shard">>(4, 2)));
}

TEST_CASE("the tutorial's groups, listed as its manual setup computes them") {
  // shard_rank_lists = range(0, n/2), range(n/2, n); replicate = range(i, n, shard_factor).
  using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;
  const auto h = hsdp::for_world(8);
  const auto lists = [](const auto& groups) {  // all_groups computes its groups: list them
    std::vector<std::vector<int>> out;
    for (const auto& g : groups) out.emplace_back(g.begin(), g.end());
    CHECK(static_cast<int>(out.size()) == groups.size());
    return out;
  };
  CHECK(lists(dm::all_groups<"shard">(h)) == std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK(lists(dm::all_groups<"replicate">(h)) == std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  static_assert(std::forward_iterator<decltype(dm::all_groups<"shard">(h).begin())>);
  // ... in constant expressions too: the third tp group of a static (2, 2, 2) mesh.
  constexpr dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>> m;
  static_assert(dm::all_groups<"tp">(m).size() == 4);
  static_assert((*std::next(dm::all_groups<"tp">(m).begin(), 2)).front() == 4);
  static_assert(dm::all_groups<"cp", "dp">(m).size() == 2 && dm::block_groups<"cp", "dp">(m, 1).size() == 2);
}
}
