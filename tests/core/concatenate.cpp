// concatenate (PyTorch's DeviceMesh._concatenate): the dims of meshes of one root as one
// mesh. Checked against slices of the same dims (whose groups the property test checks against
// a tensor model), and the digit-overlap test against brute force over a mixed-radix root.
#include <doctest/doctest.h>

#include <devmesh/devmesh.hpp>

#include <string>
#include <type_traits>
#include <vector>

namespace dm = devmesh;
using namespace dm::literals;

namespace {

/// Every rank's group and coordinate in m, as lists (m and w must have the same root).
template <class M>
std::vector<std::vector<int>> groups_and_coordinates(const M& m) {
  std::vector<std::vector<int>> out;
  for (int r = 0; r < m.root_size(); ++r) {
    const auto g = m.group(r);
    out.emplace_back(g.begin(), g.end());
    const auto c = m.coordinate(r);
    out.emplace_back(c.begin(), c.end());
  }
  return out;
}

std::string error_of(auto&& f) {
  try {
    (void)f();
  } catch (const dm::mesh_error& e) {
    return e.what();
  }
  return "did not throw";
}

}  // namespace

TEST_SUITE("concatenate") {
TEST_CASE("static: dims of one root are the slice of those dims, same type") {
  constexpr dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 3>, dm::dim<"tp", 4>> m;
  constexpr auto c = dm::concatenate(m["tp"_dim], m["dp"_dim]);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(c)>, std::remove_cvref_t<decltype(m.slice<"tp", "dp">())>>);
  static_assert(c == m.slice<"tp", "dp">());
  static_assert(dm::concatenate(m["dp"_dim], m["cp"_dim], m["tp"_dim]) == m);
  static_assert(dm::concatenate(m.slice<"dp", "tp">(), m["cp"_dim]) == m.slice<"dp", "tp", "cp">());
}

TEST_CASE("a flattened alias and an unflattened piece, from other derived meshes") {
  constexpr dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 3>, dm::dim<"tp", 4>> m;
  constexpr auto f = m.flatten<"cp_tp", "cp", "tp">();
  const auto c = dm::concatenate(f["cp_tp"_dim], m["dp"_dim]);
  CHECK(groups_and_coordinates(c) == groups_and_coordinates(f.slice<"cp_tp", "dp">()));
  constexpr auto u = m.unflatten<"tp", dm::dim<"t1", 2>, dm::dim<"t2", 2>>();
  const auto d = dm::concatenate(u["t2"_dim], m["cp"_dim], u["t1"_dim]);
  CHECK(groups_and_coordinates(d) == groups_and_coordinates(u.slice<"t2", "cp", "t1">()));
}

TEST_CASE("dynamic: the same; shared digits and other roots throw, naming the dims") {
  const dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">> m(2, 3, 4);
  const auto c = dm::concatenate(m["tp"_dim], m["dp"_dim]);
  CHECK(groups_and_coordinates(c) == groups_and_coordinates(m.slice<"tp", "dp">()));
  const auto f = m.flatten<"dp_cp", "dp", "cp">();
  CHECK(error_of([&] { return dm::concatenate(m["dp"_dim], f["dp_cp"_dim]); }).find("dims 'dp' and 'dp_cp'") !=
        std::string::npos);
  const auto u = m.unflatten<"tp", dm::dim<"t1", 2>, dm::dim<"t2">>();  // t2 is part of tp
  CHECK(error_of([&] { return dm::concatenate(u["t2"_dim], m["tp"_dim]); }).find("dims 't2' and 'tp'") !=
        std::string::npos);
  CHECK(error_of([&] { return dm::concatenate(u["t1"_dim], m.slice<"dp", "cp">()); }) == "did not throw");
  const dm::mesh<dm::dim<"a">> four(4);
  const dm::mesh<dm::dim<"b">> eight(8);
  CHECK(error_of([&] { return dm::concatenate(four, eight); }).find("4 and 8 ranks") != std::string::npos);
}

TEST_CASE("modes_overlap is shared digits, by brute force over a mixed-radix root") {
  const std::vector<int> radix = {2, 3, 1, 2, 5};  // most significant first
  const int n = static_cast<int>(radix.size());
  struct mode {
    int shape, stride, lo, hi;  // digits [lo, hi] of the root
  };
  std::vector<mode> modes;
  for (int lo = 0; lo < n; ++lo)
    for (int hi = lo; hi < n; ++hi) {
      int shape = 1, stride = 1;
      for (int k = lo; k <= hi; ++k) shape *= radix[static_cast<std::size_t>(k)];
      for (int k = hi + 1; k < n; ++k) stride *= radix[static_cast<std::size_t>(k)];
      modes.push_back({shape, stride, lo, hi});
    }
  for (const auto& a : modes)
    for (const auto& b : modes) {
      bool shared = false;  // a digit of size > 1 in both
      for (int k = 0; k < n; ++k)
        shared = shared || (radix[static_cast<std::size_t>(k)] > 1 && a.lo <= k && k <= a.hi && b.lo <= k && k <= b.hi);
      CHECK(dm::detail::modes_overlap(a.shape, a.stride, b.shape, b.stride) == shared);
    }
}

TEST_CASE("modes cut from different runs of digits may interleave: not one mesh") {
  // Megatron's dense (pp, dp, cp, tp) = (1, 4, 3, 2) and its expert view (edp, ep, etp) =
  // (6, 4, 1): ep = (4 : 1) misses dp = (4 : 6) but interleaves with it (6 is no multiple of
  // 4), so (ep, dp) would not be a mesh; ep and pp, edp and tp are.
  CHECK(dm::detail::modes_overlap(4, 1, 4, 6));
  CHECK(dm::detail::modes_overlap(4, 6, 4, 1));
  CHECK_FALSE(dm::detail::modes_overlap(6, 4, 2, 1));
  CHECK_FALSE(dm::detail::modes_overlap(4, 1, 2, 24));
  const dm::mesh<dm::dim<"pp">, dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">> dense(2, 4, 3, 2);
  const auto expert = dense.flatten<"dp_cp_tp", "dp", "cp", "tp">().slice<"pp", "dp_cp_tp">().unflatten<
      "dp_cp_tp", dm::dim<"edp">, dm::dim<"ep">, dm::dim<"etp">>(dm::dynamic_size, 4, 1);
  CHECK(error_of([&] { return dm::concatenate(expert.slice<"ep">(), dense.slice<"dp">()); })
            .find("devmesh: concatenate: a dim of one mesh shares ranks") == 0);
  const auto ok = dm::concatenate(expert.slice<"edp">(), dense.slice<"tp">());
  CHECK(ok.size() == 12);
  CHECK(ok.group(1).size() == 12);
}
}
