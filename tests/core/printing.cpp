// Printing: the PyTorch-like repr, the rank table of mesh_notes_zh.md, group tables.
#include <doctest/doctest.h>

#include <devmesh/devmesh.hpp>

#include <sstream>
#include <string>

namespace dm = devmesh;
using namespace dm::literals;

namespace {
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

template <class M>
std::string streamed(const M& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}
}  // namespace

TEST_SUITE("printing") {
TEST_CASE("repr of root meshes, static and dynamic") {
  constexpr mesh3d m{};
  CHECK(streamed(m) == "mesh((dp=2, cp=2, tp=2), stride=(4, 2, 1))");
  CHECK(dm::to_string(m) == streamed(m));
  using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;
  CHECK(dm::to_string(hsdp::for_world(8)) == "mesh((replicate=2, shard=4), stride=(4, 1))");
  CHECK(dm::to_string(dm::mesh<dm::dim<"world">>(16)) == "mesh((world=16,), stride=(1,))");
}

TEST_CASE("repr of slices, aliases, flattened and unflattened dims") {
  constexpr mesh3d m{};
  CHECK(dm::to_string(m.slice<"dp", "cp">()) == "mesh((dp=2, cp=2), stride=(4, 2))");
  CHECK(dm::to_string(m.slice<"tp", "dp">()) == "mesh((tp=2, dp=2), stride=(1, 4))");
  CHECK(dm::to_string(m["cp"_dim]) == "mesh((cp=2,), stride=(2,))");
  CHECK(dm::to_string(m.flatten<"dp_cp", "dp", "cp">()) ==
        "mesh((dp=2, cp=2, tp=2), stride=(4, 2, 1), aliases=(dp_cp=4))");
  // A flattened dim lists the strides of its parts; its former dims stay as aliases.
  CHECK(dm::to_string(m.slice<"dp", "cp">().flatten<"dp_cp">()) ==
        "mesh((dp_cp=4,), stride=((4, 2),), aliases=(dp=2, cp=2))");
  CHECK(dm::to_string(m.flatten<"dp_tp", "dp", "tp">().slice<"dp_tp", "cp">()) ==
        "mesh((dp_tp=4, cp=2), stride=((4, 1), 2), aliases=(dp=2, tp=2))");
  using mesh2d = dm::mesh<dm::dim<"dp", 4>, dm::dim<"tp", 2>>;
  CHECK(dm::to_string(mesh2d{}.unflatten<"dp", dm::dim<"rep", 2>, dm::dim<"shard", 2>>()) ==
        "mesh((rep=2, shard=2, tp=2), stride=(4, 2, 1))");
  // A size-1 dim cut from a flattened dim owns no digit: stride 1, no parentheses; nor does
  // a dim whose other modes have size 1 (q keeps b's size-1 mode).
  using mesh61 = dm::mesh<dm::dim<"a", 6>, dm::dim<"b", 1>>;
  CHECK(dm::to_string(mesh61{}.flatten<"all">().unflatten<"all", dm::dim<"p", 2>, dm::dim<"one", 1>, dm::dim<"q", 3>>()) ==
        "mesh((p=2, one=1, q=3), stride=(3, 1, 1), aliases=(a=6, b=1))");
  // Dynamic sizes print their run-time values.
  const dm::mesh<dm::dim<"dp">, dm::dim<"tp">> d(3, 5);
  CHECK(dm::to_string(d.slice<"tp", "dp">()) == "mesh((tp=5, dp=3), stride=(1, 5))");
}

TEST_CASE("rank_table reproduces the (2, 2, 2) table of mesh_notes_zh.md") {
  using mesh_rst = dm::mesh<dm::dim<"replicate", 2>, dm::dim<"shard", 2>, dm::dim<"tp", 2>>;
  const std::string want =
      "| replicate (dim 0) | shard (dim 1) | tp (dim 2) | global rank |\n"
      "| --- | --- | --- | --- |\n"
      "| 0 | 0 | 0 | 0 |\n"
      "| 0 | 0 | 1 | 1 |\n"
      "| 0 | 1 | 0 | 2 |\n"
      "| 0 | 1 | 1 | 3 |\n"
      "| 1 | 0 | 0 | 4 |\n"
      "| 1 | 0 | 1 | 5 |\n"
      "| 1 | 1 | 0 | 6 |\n"
      "| 1 | 1 | 1 | 7 |\n";
  CHECK(dm::rank_table(mesh_rst{}) == want);
  CHECK(dm::rank_table(dm::mesh<dm::dim<"replicate">, dm::dim<"shard">, dm::dim<"tp">>(2, 2, 2)) == want);
  // A submesh's table is the one containing the given rank (README item 1: [[1, 3], [5, 7]]).
  CHECK(dm::rank_table(mesh_rst{}.slice<"replicate", "shard">(), 3) ==
        "| replicate (dim 0) | shard (dim 1) | global rank |\n"
        "| --- | --- | --- |\n"
        "| 0 | 0 | 1 |\n"
        "| 0 | 1 | 3 |\n"
        "| 1 | 0 | 5 |\n"
        "| 1 | 1 | 7 |\n");
}

TEST_CASE("group tables") {
  constexpr mesh3d m{};
  CHECK(dm::group_table<"tp">(m) == "tp: [0, 1] [2, 3] [4, 5] [6, 7]");
  CHECK(dm::group_table<"dp", "cp">(m) == "dp+cp: [0, 2, 4, 6] [1, 3, 5, 7]");
  CHECK(dm::group_table<"cp", "dp">(m) == "cp+dp: [0, 4, 2, 6] [1, 5, 3, 7]");
  using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;
  const auto h = hsdp::for_world(8);
  CHECK(dm::group_table<"shard">(h) == "shard: [0, 1, 2, 3] [4, 5, 6, 7]");
  CHECK(dm::group_table<"replicate">(h) == "replicate: [0, 4] [1, 5] [2, 6] [3, 7]");
  // Within a submesh: only the groups of the submesh containing `member`.
  CHECK(dm::group_table<"dp">(m.slice<"dp", "tp">(), 2) == "dp: [2, 6] [3, 7]");
}

TEST_CASE("rank_nested and rank_grid: PyTorch's mesh tensor and the tutorials' grid") {
  using hsdp = dm::mesh<dm::dim<"replicate", 2>, dm::dim<"shard", 4>>;
  constexpr hsdp m{};
  // PyTorch: init_device_mesh("cpu", (2, 4)).mesh is tensor([[0, 1, 2, 3], [4, 5, 6, 7]]).
  CHECK(dm::rank_nested(m) == "[[0, 1, 2, 3], [4, 5, 6, 7]]");
  CHECK(dm::rank_nested(m["shard"_dim], 5) == "[4, 5, 6, 7]");
  CHECK(dm::rank_nested(m["replicate"_dim], 6) == "[2, 6]");
  CHECK(dm::rank_nested(m.slice<"shard", "replicate">()) == "[[0, 4], [1, 5], [2, 6], [3, 7]]");
  CHECK(dm::rank_nested(mesh3d{}) == "[[[0, 1], [2, 3]], [[4, 5], [6, 7]]]");
  CHECK(dm::rank_nested(mesh3d{}.slice<"dp", "tp">(), 3) == "[[2, 3], [6, 7]]");  // cp = 1
  CHECK(dm::rank_nested(dm::mesh<dm::dim<"world">>(3)) == "[0, 1, 2]");
  CHECK(dm::rank_nested(dm::mesh<dm::dim<"dp">, dm::dim<"tp">>(3, 1)) == "[[0], [1], [2]]");

  CHECK(dm::rank_grid(m) ==
        "             shard=0  shard=1  shard=2  shard=3\n"
        "replicate=0        0        1        2        3\n"
        "replicate=1        4        5        6        7\n");
  CHECK(dm::rank_grid(m.slice<"shard", "replicate">(), 0, "  ") ==
        "           replicate=0  replicate=1\n"
        "  shard=0            0            4\n"
        "  shard=1            1            5\n"
        "  shard=2            2            6\n"
        "  shard=3            3            7\n");
  CHECK(dm::rank_grid(mesh3d{}) ==
        "dp=0:\n"
        "      tp=0  tp=1\n"
        "cp=0     0     1\n"
        "cp=1     2     3\n"
        "dp=1:\n"
        "      tp=0  tp=1\n"
        "cp=0     4     5\n"
        "cp=1     6     7\n");
  CHECK(dm::rank_grid(dm::mesh<dm::dim<"tp", 4>>{}) == "  tp=0  tp=1  tp=2  tp=3\n     0     1     2     3\n");
  // Wide ranks widen every column: a 1-D slice of a 64 x 2 mesh, from position 101.
  const auto wide = dm::rank_grid(dm::mesh<dm::dim<"dp", 64>, dm::dim<"tp", 2>>{}["dp"_dim], 101);
  CHECK(wide.starts_with("   dp=0   dp=1"));
  CHECK(wide.ends_with("    123    125    127\n"));
}
}
