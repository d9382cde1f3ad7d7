// unflatten as PyTorch 2.15 cuts a dim (core/cut.hpp): a flattened dim's layout coalesced, then
// cut where the new sizes end; static sizes checked at compile time, run-time sizes at run
// time. Every accepted cut's groups are checked against a brute-force reading of the rule
// itself (new dim j's coordinate is digit j of the old dim's coordinate, row-major), and the
// recorded PyTorch answers (recorded.cpp) say which cuts PyTorch takes.
#include <doctest/doctest.h>

#include <devmesh/devmesh.hpp>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace dm = devmesh;
using dm::dim;

namespace {

/// The group of new dim j (of sizes `sizes`, cutting dim `old` of mesh m) that holds
/// position p, by brute force: the positions of p's block of m whose coordinate along every
/// other dim of m is p's, and whose digits of `old` (row-major over `sizes`) are p's but for
/// digit j, in the order of digit j.
template <class M>
std::vector<int> reshaped_group(const M& m, int old, const std::vector<int>& sizes, int j, int p) {
  const auto digits = [&](int position) {
    std::vector<int> d(sizes.size());
    int c = m.coordinate_unchecked(position, old);
    for (int k = static_cast<int>(sizes.size()) - 1; k >= 0; --k) d[k] = c % sizes[k], c /= sizes[k];
    return d;
  };
  std::vector<int> out(sizes[j], -1);
  const auto mine = digits(p);
  for (int q : m.group(p)) {
    bool same = true;
    for (int e = 0; e < M::ndim; ++e) same = same && (e == old || m.coordinate_unchecked(q, e) == m.coordinate_unchecked(p, e));
    const auto theirs = digits(q);
    for (int k = 0; k < static_cast<int>(sizes.size()); ++k) same = same && (k == j || theirs[k] == mine[k]);
    if (same) out[theirs[j]] = q;
  }
  return out;
}

template <class G>
std::vector<int> members(const G& g) {
  return {g.begin(), g.end()};
}

}  // namespace

TEST_SUITE("unflatten") {
TEST_CASE("a contiguous flattened dim is cut as one mode, where its old dims' boundaries are not") {
  // Megatron: dense (pp, dp, cp, tp) = (2, 4, 3, 2); expert (pp, edp, ep, etp) = (2, 6, 4, 1)
  // cuts dp_cp_tp = (24:1) at 4: ep straddles cp and tp. devmesh refused it before.
  constexpr dm::mesh<dim<"pp", 2>, dim<"dp", 4>, dim<"cp", 3>, dim<"tp", 2>> dense;
  constexpr auto flat = dense.flatten<"dp_cp_tp", "dp", "cp", "tp">().slice<"pp", "dp_cp_tp">();
  constexpr auto expert = flat.unflatten<"dp_cp_tp", dim<"edp", 6>, dim<"ep", 4>, dim<"etp", 1>>();
  static_assert(std::ranges::equal(expert.group<"ep">(5), std::array{4, 5, 6, 7}));
  static_assert(std::ranges::equal(expert.group<"edp">(5), std::array{1, 5, 9, 13, 17, 21}));
  static_assert(std::ranges::equal(expert.group<"pp">(5), std::array{5, 29}));
  // dp, cp and tp stay aliases of flat, but the cut crosses them: the expert view has none.
  static_assert(decltype(flat)::ndim_with_aliases == 5 && decltype(expert)::ndim_with_aliases == 4);
  // The same with run-time sizes (edp inferred), on the static and on a dynamic mesh.
  const auto at_run_time = flat.unflatten<"dp_cp_tp", dim<"edp">, dim<"ep">, dim<"etp">>(dm::dynamic_size, 4, 1);
  CHECK(at_run_time == expert);
  CHECK(at_run_time.size<"edp">() == 6);
  const dm::mesh<dim<"pp">, dim<"dp">, dim<"cp">, dim<"tp">> sized(2, 4, 3, 2);
  const auto from_sized = sized.flatten<"dp_cp_tp", "dp", "cp", "tp">().slice<"pp", "dp_cp_tp">().unflatten<
      "dp_cp_tp", dim<"edp">, dim<"ep", 4>, dim<"etp">>(dm::dynamic_size, 1);  // sizes of the dynamic new dims
  CHECK(from_sized == expert);
  // Static sizes on a dynamic mesh: cut at run time too.
  const auto static_sizes = sized.flatten<"dp_cp_tp", "dp", "cp", "tp">().slice<"pp", "dp_cp_tp">().unflatten<
      "dp_cp_tp", dim<"edp", 6>, dim<"ep", 4>, dim<"etp", 1>>();
  CHECK(static_sizes == expert);
}

TEST_CASE("where the new dims' ends agree with every old boundary, the old dims are cut and kept") {
  constexpr dm::mesh<dim<"dp", 4>, dim<"cp", 3>, dim<"tp", 2>> m;
  constexpr auto u = m.flatten<"all">().unflatten<"all", dim<"a", 2>, dim<"b", 12>>();  // a cuts dp in two
  static_assert(decltype(u)::ndim_with_aliases == 5);                             // dp, cp, tp stay
  static_assert(u.size<"dp">() == 4 && std::ranges::equal(u.group<"dp">(0), std::array{0, 6, 12, 18}));
  // ... and where they do not (b = 8 ends inside cp), dp, cp and tp go.
  constexpr auto v = m.flatten<"all">().unflatten<"all", dim<"a", 3>, dim<"b", 8>>();
  static_assert(decltype(v)::ndim_with_aliases == 2);
  static_assert(std::ranges::equal(v.group<"a">(1), std::array{1, 9, 17}));
  // Only the runs of modes the cut crosses merge: tp (not contiguous with dp, cp) stays.
  constexpr dm::mesh<dim<"dp", 2>, dim<"cp", 3>, dim<"x", 5>, dim<"tp", 2>> n;
  constexpr auto w = n.flatten<"f", "dp", "cp", "tp">().slice<"f", "x">().unflatten<"f", dim<"a", 3>, dim<"b", 4>>();
  static_assert(w.dim_index<"tp">() >= 0 && decltype(w)::ndim_with_aliases == 4);  // a, b, x; tp
  static_assert(std::ranges::equal(w.group<"b">(0), std::array{0, 1, 10, 11}));
}

TEST_CASE("every cut PyTorch's rule takes gives the reshaped groups, static and at run time") {
  // Flattened dims of (6, 2, 4): contiguous (d0 d1 d2, d1 d2), mixed-stride (d0 d2), and
  // every split of their size into two dims; the run-time path checked against brute force.
  const dm::mesh<dim<"d0">, dim<"d1">, dim<"d2">> m(6, 2, 4);
  int accepted = 0, refused = 0;
  const auto check_all = [&](const auto& flat, int n) {
    for (int a = 1; a <= n; ++a) {
      if (n % a) continue;
      const std::vector<int> sizes{a, n / a};
      try {
        const auto u = flat.template unflatten<"f", dim<"x">, dim<"y">>(a, n / a);
        ++accepted;
        for (int p = 0; p < m.root_size(); ++p) {
          CHECK(members(u.template group<"x">(p)) == reshaped_group(flat, 0, sizes, 0, p));
          CHECK(members(u.template group<"y">(p)) == reshaped_group(flat, 0, sizes, 1, p));
        }
      } catch (const dm::mesh_error&) {
        ++refused;
      }
    }
  };
  check_all(m.flatten<"f", "d0", "d1", "d2">().slice<"f">(), 48);
  check_all(m.flatten<"f", "d0", "d2">().slice<"f">(), 24);
  check_all(m.flatten<"f", "d2", "d0">().slice<"f">(), 24);  // transposed: (4:1)(6:8)
  CHECK(accepted > 15);
  CHECK(refused > 0);
  // Static sizes give the same groups. The static cut (its ends divide d0's) keeps d0 and d2,
  // cut, as aliases; one at run time keeps none (which survive depends on the sizes).
  constexpr dm::mesh<dim<"d0", 6>, dim<"d1", 2>, dim<"d2", 4>> s;
  constexpr auto st = s.flatten<"f", "d0", "d2">().slice<"f">().unflatten<"f", dim<"x", 3>, dim<"y", 8>>();
  const auto rt = m.flatten<"f", "d0", "d2">().slice<"f">().unflatten<"f", dim<"x">, dim<"y">>(3, 8);
  static_assert(decltype(st)::is_static && decltype(st)::ndim_with_aliases == 4);
  static_assert(decltype(rt)::ndim_with_aliases == 2);
  CHECK(st.dim_layout(0).coalesce() == rt.dim_layout(0).coalesce());
  CHECK(st.dim_layout(1).coalesce() == rt.dim_layout(1).coalesce());
}

TEST_CASE("run-time sizes: what is given, and every error names the dims") {
  const dm::mesh<dim<"world">> w(24);
  // One size per dynamic new dim, or one per new dim; dm::dynamic_size is inferred.
  const auto a = w.unflatten<"world", dim<"pp", 2>, dim<"dp">, dim<"tp">>(dm::dynamic_size, 3);
  CHECK(a.shape() == std::array{2, 4, 3});
  const auto b = w.unflatten<"world", dim<"pp", 2>, dim<"dp">, dim<"tp">>(2, 4, 3);
  CHECK(a == b);
  const auto what = [](auto f) -> std::string {
    try {
      f();
    } catch (const dm::mesh_error& e) {
      return e.what();
    }
    return "no error";
  };
  const auto cut = [&](int pp, int dp, int tp) { (void)w.unflatten<"world", dim<"pp", 2>, dim<"dp">, dim<"tp">>(pp, dp, tp); };
  CHECK(what([&] { cut(3, 4, 2); }).find("new dim 'pp' of dim 'world' is 2, got 3") != std::string::npos);
  CHECK(what([&] { cut(2, 5, 3); }).find("dim 'world' has size 24, the new dims multiply to 30") != std::string::npos);
  CHECK(what([&] { cut(2, dm::dynamic_size, 5); }).find("not divisible by the other new sizes' product 10") !=
        std::string::npos);
  CHECK(what([&] { cut(2, dm::dynamic_size, dm::dynamic_size); }).find("at most one new dim") != std::string::npos);
  CHECK(what([&] { cut(2, 0, 12); }).find("got 0 for new dim 'dp'") != std::string::npos);
  CHECK(what([&] { (void)w.unflatten<"world", dim<"a">, dim<"b">>(3000000000LL, 1); })
            .find("got 3000000000 for new dim 'a'") != std::string::npos);
  // A cut PyTorch refuses: the new dim, its size, the dim it ends inside, the sizes that work.
  const dm::mesh<dim<"a">, dim<"c">, dim<"b">> acb(4, 2, 3);
  const auto ab = acb.flatten<"ab", "a", "b">().slice<"ab">();
  const auto refused = what([&] { (void)ab.unflatten<"ab", dim<"x">, dim<"y">>(3, 4); });
  CHECK(refused.find("new dim 'y' of size 4 ends inside dim 'a' (size 4) of 'ab' (layout (4, 3):(6, 1))") !=
        std::string::npos);
  CHECK(refused.find("sizes of 'y' that can be cut: 1, 3, 6, 12") != std::string::npos);
  // The same cut with static sizes on a dynamic mesh is refused at run time alike.
  CHECK(what([&] { (void)ab.unflatten<"ab", dim<"x", 3>, dim<"y", 4>>(); }) == refused);
}

TEST_CASE("a one-mode dim cut at run time keeps the aliases that share it") {
  constexpr dm::mesh<dim<"dp", 4>, dim<"tp", 2>> m;
  constexpr auto f = m.flatten<"dp_tp", "dp", "tp">();
  const auto u = f.unflatten<"dp", dim<"rep">, dim<"shard">>(2, 2);  // dp cut in place; dp_tp keeps its digits
  CHECK(members(u.group<"dp_tp">(3)) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(members(u.group<"shard">(3)) == std::vector<int>{1, 3});
  CHECK(u == f.unflatten<"dp", dim<"rep", 2>, dim<"shard", 2>>());
  CHECK(dm::to_string(u) == "mesh((rep=2, shard=2, tp=2), stride=(4, 2, 1), aliases=(dp_tp=8))");
}

TEST_CASE("an in-place alias whose cut keeps its mesh dims whole is cut with them") {
  constexpr dm::mesh<dim<"dp", 2>, dim<"cp", 3>> m;
  constexpr auto u = m.flatten<"dp_cp", "dp", "cp">().unflatten<"dp_cp", dim<"x", 2>, dim<"y", 3>>();
  static_assert(decltype(u)::ndim == 2 && std::ranges::equal(u.group<"y">(4), std::array{3, 4, 5}));
}

TEST_CASE("the free forms take run-time sizes") {
  const dm::mesh<dim<"world">> w(12);
  const auto u = dm::unflatten<"world", dim<"dp">, dim<"tp", 2>>(w, dm::dynamic_size, 2);
  CHECK(u.shape() == std::array{6, 2});
}
}
