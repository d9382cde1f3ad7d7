// Randomized property test: devmesh's layouts against a brute-force model of PyTorch's
// DeviceMesh written independently here.
//
// The model materializes the rank array as a tensor of shape [G, f1, ..., fn]: G submeshes
// (one per row, as PyTorch's create_sub_mesh builds one DeviceMesh per row of its permuted
// tensor) of fine axes f1..fn. A dim is an ordered list of fine axes. Slicing permutes the
// tensor (remaining axes first, then the sliced ones, in the order given) and reshapes the
// remaining axes into G; flattening names a list of axes; unflattening reshapes axes
// (splitting one axis of a row-major tensor never moves data). Every query is answered by
// walking the tensor: a group over some axes is the set of entries that agree with r on
// every other index.
//
// Random shapes (1..6 dims, dynamic sizes) go through a fixed menu of slices, flattens and
// unflattens; static mesh types get the same menu plus unflattens of flattened dims.
// DEVMESH_PROPERTY_SEED and DEVMESH_PROPERTY_CASES override the seed and case count.
#include <doctest/doctest.h>

#include <devmesh/devmesh.hpp>

#include "property_model.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace dm = devmesh;

namespace {

// ---- the brute-force model (property_model.hpp) -----------------------------------------

using property_model::model;
using property_model::model_dim;
using property_model::new_dim;
using property_model::tensor;

// ---- comparing a devmesh mesh with the model ---------------------------------------------

struct failures {
  int count = 0;
  std::vector<std::string> first;
  std::string context;
  template <class... T>
  void add(const T&... what) {
    ++count;
    if (first.size() < 10) {
      std::ostringstream os;
      os << context << ": ";
      (os << ... << what);
      first.push_back(os.str());
    }
  }
};

std::string str(const std::vector<int>& v) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  return os.str() + ']';
}

template <class Names, std::size_t I>
struct nth_name;
template <class... N, std::size_t I>
struct nth_name<dm::names<N...>, I> {
  using type = std::tuple_element_t<I, std::tuple<N...>>;
};
/// name<'t','p'> back to a fixed_string, to name a dim in a template argument.
template <class N>
inline constexpr dm::fixed_string<N::view.size() + 1> as_fixed{N::chars};
template <class M, std::size_t I>
inline constexpr auto dim_name_v = as_fixed<typename nth_name<typename M::names_type, I>::type>;

template <class G>
std::vector<int> to_vec(const G& g) {
  return std::vector<int>(g.begin(), g.end());
}

/// Named queries (group<N>, comm_split<N>, local_rank<N>) for every dim of M, aliases too.
template <class M, std::size_t... I>
void check_named(const M& m, const model& md, int r, int flat, const std::vector<std::vector<int>>& groups,
                 failures& f, std::index_sequence<I...>) {
  (
      [&] {
        constexpr auto n = dim_name_v<M, I>;
        const auto& axes = md.dims[I].axes;
        const auto& want = groups[I];
        const auto got = to_vec(dm::group<n>(m, r));
        if (got != want) f.add("group<", n.view(), ">(", r, ") = ", str(got), ", model ", str(want));
        if (dm::comm_split<n>(m, r) != m.comm_split(r, static_cast<int>(I)))
          f.add("comm_split<", n.view(), "> differs from comm_split(r, ", I, ") at rank ", r);
        if (dm::local_rank<n>(m, r) != md.coordinate_at(flat, axes))
          f.add("local_rank<", n.view(), ">(", r, ") = ", dm::local_rank<n>(m, r));
      }(),
      ...);
}

template <class M>
void check(const M& m, const model& md, failures& f) {
  constexpr int nd = M::ndim, na = M::ndim_with_aliases;
  if (nd != md.nprimary || na != static_cast<int>(md.dims.size())) {
    f.add("dims: ndim ", nd, " with aliases ", na, ", model ", md.nprimary, " with aliases ", md.dims.size());
    return;
  }
  for (int d = 0; d < na; ++d) {
    if (M::name(d) != md.dims[d].name) f.add("dim ", d, " is named ", M::name(d), ", model ", md.dims[d].name);
    if (m.dim_size(d) != md.size_of(md.dims[d].axes))
      f.add("dim ", md.dims[d].name, " has size ", m.dim_size(d), ", model ", md.size_of(md.dims[d].axes));
  }
  if (f.count) return;  // the rest would only repeat the mismatch
  const auto prim = md.primary_axes();
  if (m.size() != md.size_of(prim)) f.add("size() = ", m.size());
  if (m.root_size() != md.world) f.add("root_size() = ", m.root_size(), ", world ", md.world);
  for (int d = 0; d < nd; ++d)
    if (m.shape()[d] != m.size(d) || m.size(d) != m.dim_size(d)) f.add("shape()/size(d) disagree at ", d);

  std::vector<int> position(md.world);  // where each rank sits in the model's tensor
  for (int i = 0; i < md.world; ++i) position[md.t.data[i]] = i;
  const auto first_mesh = md.group_at(position[0], prim);
  // Per dim: the model's group of each rank, to check that colors split exactly like it.
  std::vector<std::map<int, std::vector<int>>> color_group(na);
  std::vector<std::map<std::vector<int>, int>> group_color(na);
  for (int r = 0; r < md.world; ++r) {
    const int flat = position[r];
    const auto c = m.coordinate(r);
    std::vector<std::vector<int>> groups(na);
    for (int d = 0; d < na; ++d) {
      const int want = md.coordinate_at(flat, md.dims[d].axes);
      if (d < nd && c[d] != want) f.add("coordinate(", r, ")[", d, "] = ", c[d], ", model ", want);
      if (m.coordinate_unchecked(r, d) != want) f.add("coordinate_unchecked(", r, ", ", d, ")");
      // comm_split: key = index in the group, same color <=> same group.
      const auto& g = groups[d] = md.group_at(flat, md.dims[d].axes);
      const auto split = m.comm_split(r, d);
      const int idx = static_cast<int>(std::find(g.begin(), g.end(), r) - g.begin());
      if (split.key != idx) f.add("comm_split(", r, ", ", d, ").key = ", split.key, ", index ", idx, " in ", str(g));
      auto [ci, new_color] = color_group[d].emplace(split.color, g);
      if (!new_color && ci->second != g)
        f.add("color ", split.color, " of dim ", d, " joins ", str(ci->second), " and ", str(g));
      auto [gi, new_group] = group_color[d].emplace(g, split.color);
      if (!new_group && gi->second != split.color)
        f.add("group ", str(g), " of dim ", d, " has colors ", gi->second, " and ", split.color);
    }
    // The (sub)mesh of r, in the mesh's order, and coordinates back to ranks.
    const auto mine = md.group_at(flat, prim);
    const auto got = to_vec(m.group(r));
    if (got != mine) f.add("group(", r, ") = ", str(got), ", model ", str(mine));
    if (m.rank_at(c, r) != r) f.add("rank_at(coordinate(", r, "), ", r, ") = ", m.rank_at(c, r));
    int pos = 0;
    for (int d = 0; d < nd; ++d) pos = pos * m.size(d) + c[d];
    if (m.rank_at(c) != first_mesh[pos]) f.add("rank_at(coordinate(", r, ")) = ", m.rank_at(c), ", model ", first_mesh[pos]);
    if (m.group(r).index_of(r) != pos || !m.group(r).contains(r)) f.add("group(", r, ").index_of(", r, ")");
    check_named(m, md, r, flat, groups, f, std::make_index_sequence<na>{});
    if constexpr (nd >= 2) {  // named groups over two dims, both orders
      constexpr auto n0 = dim_name_v<M, 0>;
      constexpr auto n1 = dim_name_v<M, 1>;
      auto axes = md.dims[1].axes;
      axes.insert(axes.end(), md.dims[0].axes.begin(), md.dims[0].axes.end());
      const auto want10 = md.group_at(flat, axes);
      if (to_vec(dm::group<n1, n0>(m, r)) != want10) f.add("group<", n1.view(), ", ", n0.view(), ">(", r, ")");
      const auto split = dm::comm_split<n1, n0>(m, r);
      if (split.color != want10.front() || want10[split.key] != r)
        f.add("comm_split<", n1.view(), ", ", n0.view(), ">(", r, ")");
      axes = md.dims[0].axes;
      axes.insert(axes.end(), md.dims[1].axes.begin(), md.dims[1].axes.end());
      if (to_vec(dm::group<n0, n1>(m, r)) != md.group_at(flat, axes))
        f.add("group<", n0.view(), ", ", n1.view(), ">(", r, ")");
    }
  }
}

// ---- the menu of operations --------------------------------------------------------------

inline constexpr dm::fixed_string<2> nm[6] = {"a", "b", "c", "d", "e", "f"};
std::string sn(int i) { return std::string(nm[i].view()); }

/// Runs `op` (devmesh) and `mop` (model); both must succeed or both must fail.
template <class Op, class ModelOp>
void run(Op op, ModelOp mop, failures& f) {
  std::optional<model> want = mop();
  try {
    auto got = op();
    if (!want)
      f.add("devmesh accepted what the model rejects");
    else
      check(got, *want, f);
  } catch (const dm::mesh_error& e) {
    if (want)
      f.add("devmesh threw ", e.what());
    else if (std::string(e.what()).rfind(DEVMESH_MSG_UNFLATTEN_PRODUCT, 0) != 0)
      f.add("wrong message: ", e.what());
  }
}

inline constexpr int menu_size = 21;

/// Operation `op` of the menu on mesh m (N dims named a, b, ...) and its model. Returns
/// false if the operation needs more dims than N.
template <int N, class M>
bool apply(int op, const M& m, const model& md, failures& f) {
  using P = dm::dim<"p">;
  constexpr int L = N - 1;
  auto same = [](const model& x) { return std::optional<model>(x); };
  switch (op) {
    case 0:
      run([&] { return m; }, [&] { return same(md); }, f);
      return true;
    case 1:
      run([&] { return dm::slice<nm[L]>(m); }, [&] { return same(md.slice({sn(L)})); }, f);
      return true;
    case 2:
      run([&] { return m[dm::dim_name<nm[0]>{}]; }, [&] { return same(md.slice({sn(0)})); }, f);
      return true;
    case 3:
      run([&] { return dm::flatten<"all">(m); }, [&] { return same(md.flatten_all("all")); }, f);
      return true;
    case 4:
      run([&] { return dm::unflatten<nm[0], dm::dim<"p", 2>, dm::dim<"q">>(m); },
          [&] { return md.unflatten(sn(0), {{"p", 2}, {"q", -1}}); }, f);
      return true;
    case 5:
      run([&] { return m.template unflatten<nm[L], P, dm::dim<"q", 1>, dm::dim<"r", 3>>().template slice<"r", "p">(); },
          [&]() -> std::optional<model> {
            auto u = md.unflatten(sn(L), {{"p", -1}, {"q", 1}, {"r", 3}});
            if (!u) return u;
            return u->slice({"r", "p"});
          },
          f);
      return true;
    case 20:  // an alias of one dim, split: the dim's atom is cut, the alias's parts stay aliases
      run([&] { return m.template flatten<"x", nm[0]>().template unflatten<"x", P, dm::dim<"q", 2>>().template slice<"q", "p">(); },
          [&]() -> std::optional<model> {
            auto u = md.flatten_alias("x", {sn(0)}).unflatten("x", {{"p", -1}, {"q", 2}});
            if (!u) return u;
            return u->slice({"q", "p"});
          },
          f);
      return true;
    default:
      break;
  }
  if constexpr (N >= 2) {
    switch (op) {
      case 6:
        run([&] { return dm::slice<nm[L], nm[0]>(m); }, [&] { return same(md.slice({sn(L), sn(0)})); }, f);
        return true;
      case 7:
        run([&] { return dm::flatten<"x", nm[0], nm[L]>(m); },
            [&] { return same(md.flatten_alias("x", {sn(0), sn(L)})); }, f);
        return true;
      case 8:
        run([&] { return m.template flatten<"all">().template slice<nm[1], nm[0]>(); },
            [&] { return same(md.flatten_all("all").slice({sn(1), sn(0)})); }, f);
        return true;
      case 9:
        run([&] { return m.template slice<nm[L], nm[0]>().template flatten<"z">(); },
            [&] { return same(md.slice({sn(L), sn(0)}).flatten_all("z")); }, f);
        return true;
      case 10:
        run([&] { return m.template slice<nm[1], nm[0]>().template unflatten<nm[0], P, dm::dim<"q", 2>>(); },
            [&]() -> std::optional<model> { return md.slice({sn(1), sn(0)}).unflatten(sn(0), {{"p", -1}, {"q", 2}}); },
            f);
        return true;
      case 11:
        run([&] { return dm::unflatten<nm[1], dm::dim<nm[1]>, dm::dim<"p", 2>>(m); },
            [&] { return md.unflatten(sn(1), {{sn(1), -1}, {"p", 2}}); }, f);
        return true;
      case 12:
        run([&] { return m.template flatten<"x", nm[1], nm[0]>().template slice<"x">(); },
            [&] { return same(md.flatten_alias("x", {sn(1), sn(0)}).slice({"x"})); }, f);
        return true;
      case 13:
        run([&] { return m.template flatten<"x", nm[L], nm[0]>().template slice<"x">().template flatten<"y", nm[0], nm[L]>(); },
            [&] { return same(md.flatten_alias("x", {sn(L), sn(0)}).slice({"x"}).flatten_alias("y", {sn(0), sn(L)})); }, f);
        return true;
      default:
        break;
    }
  }
  if constexpr (N >= 3) {
    switch (op) {
      case 14:
        run([&] { return dm::slice<nm[2], nm[0]>(m); }, [&] { return same(md.slice({sn(2), sn(0)})); }, f);
        return true;
      case 15:
        run([&] { return m.template flatten<"x", nm[L], nm[0]>().template slice<"x", nm[1]>(); },
            [&] { return same(md.flatten_alias("x", {sn(L), sn(0)}).slice({"x", sn(1)})); }, f);
        return true;
      case 16:
        run([&] { return m.template slice<nm[L], nm[0], nm[1]>().template slice<nm[1], nm[L]>(); },
            [&] { return same(md.slice({sn(L), sn(0), sn(1)}).slice({sn(1), sn(L)})); }, f);
        return true;
      case 17:
        run([&] { return m.template flatten<"x", nm[2], nm[0]>().template slice<nm[1], "x">().template flatten<"all">(); },
            [&] { return same(md.flatten_alias("x", {sn(2), sn(0)}).slice({sn(1), "x"}).flatten_all("all")); }, f);
        return true;
      case 18:
        run([&] {
              return m.template unflatten<nm[1], dm::dim<"p", 2>, dm::dim<"q">>()
                  .template flatten<"x", "q", nm[0]>()
                  .template slice<"p", "x">();
            },
            [&]() -> std::optional<model> {
              auto u = md.unflatten(sn(1), {{"p", 2}, {"q", -1}});
              if (!u) return u;
              return u->flatten_alias("x", {"q", sn(0)}).slice({"p", "x"});
            },
            f);
        return true;
      default:
        break;
    }
  }
  if constexpr (N >= 4) {
    if (op == 19) {
      run([&] { return m.template slice<nm[3], nm[1], nm[0]>().template slice<nm[0], nm[3]>(); },
          [&] { return same(md.slice({sn(3), sn(1), sn(0)}).slice({sn(0), sn(3)})); }, f);
      return true;
    }
  }
  return false;
}

template <int N, std::size_t... I>
auto dynamic_mesh_type(std::index_sequence<I...>) -> dm::mesh<dm::dim<nm[I]>...>;
template <int N>
using dynamic_mesh = decltype(dynamic_mesh_type<N>(std::make_index_sequence<N>{}));

template <int N, std::size_t... I>
dynamic_mesh<N> make_dynamic(const std::vector<int>& s, std::index_sequence<I...>) {
  return dynamic_mesh<N>(s[I]...);
}

std::vector<std::string> first_names(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back(sn(i));
  return v;
}

template <int N>
bool run_dynamic(int op, const std::vector<int>& sizes, failures& f) {
  const auto m = make_dynamic<N>(sizes, std::make_index_sequence<N>{});
  return apply<N>(op, m, model::root(first_names(N), sizes), f);
}

bool run_dynamic(int n, int op, const std::vector<int>& sizes, failures& f) {
  switch (n) {
    case 1: return run_dynamic<1>(op, sizes, f);
    case 2: return run_dynamic<2>(op, sizes, f);
    case 3: return run_dynamic<3>(op, sizes, f);
    case 4: return run_dynamic<4>(op, sizes, f);
    case 5: return run_dynamic<5>(op, sizes, f);
    default: return run_dynamic<6>(op, sizes, f);
  }
}

unsigned env_or(const char* name, unsigned fallback) {
  const char* v = std::getenv(name);
  return v && *v ? static_cast<unsigned>(std::strtoul(v, nullptr, 10)) : fallback;
}

void report(const failures& f) {
  for (const auto& msg : f.first) FAIL_CHECK(msg);
  CHECK(f.count == 0);
}

// ---- static meshes -----------------------------------------------------------------------

template <class M>
void run_static_menu(const std::vector<int>& sizes, failures& f, int& cases) {
  constexpr int n = M::ndim;
  const M m{};
  for (int op = 0; op < menu_size; ++op) {
    f.context = "static " + dm::to_string(m) + " op " + std::to_string(op);
    cases += apply<n>(op, m, model::root(first_names(n), sizes), f) ? 1 : 0;
  }
}

}  // namespace

TEST_SUITE("property") {
TEST_CASE("random dynamic meshes under slices, flattens and unflattens match the brute-force model") {
  const unsigned seed = env_or("DEVMESH_PROPERTY_SEED", 20261122u);
  const int cases = static_cast<int>(env_or("DEVMESH_PROPERTY_CASES", 10000u));
  MESSAGE("property seed " << seed << " (set DEVMESH_PROPERTY_SEED to replay), " << cases << " cases");
  std::mt19937 rng(seed);
  // Sizes: mostly small, some 1s (degenerate dims), the world at most 256 ranks.
  const int size_menu[] = {1, 2, 2, 2, 3, 3, 4, 4, 5, 6};
  failures f;
  int done = 0, tries = 0;
  std::map<int, int> per_op;
  while (done < cases && f.count == 0) {
    ++tries;
    const int n = std::uniform_int_distribution<int>(1, 6)(rng);
    std::vector<int> sizes(n);
    long long world = 1;
    do {
      world = 1;
      for (auto& s : sizes) world *= (s = size_menu[std::uniform_int_distribution<int>(0, 9)(rng)]);
    } while (world > 256);
    const int op = std::uniform_int_distribution<int>(0, menu_size - 1)(rng);
    f.context = "case " + std::to_string(done) + ": shape " + str(sizes) + " op " + std::to_string(op);
    if (run_dynamic(n, op, sizes, f)) {
      ++done;
      ++per_op[op];
    }
  }
  report(f);
  CHECK(done == cases);
  for (int op = 0; op < menu_size; ++op) CHECK_MESSAGE(per_op[op] > 0, "operation " << op << " never ran");
}

TEST_CASE("static meshes under the same menu match the model") {
  failures f;
  int cases = 0;
  using namespace dm;
  run_static_menu<mesh<dim<"a", 2>, dim<"b", 3>, dim<"c", 4>>>({2, 3, 4}, f, cases);
  run_static_menu<mesh<dim<"a", 2>, dim<"b", 2>, dim<"c", 2>, dim<"d", 2>>>({2, 2, 2, 2}, f, cases);
  run_static_menu<mesh<dim<"a", 1>, dim<"b", 3>, dim<"c", 2>>>({1, 3, 2}, f, cases);
  run_static_menu<mesh<dim<"a", 6>, dim<"b", 4>>>({6, 4}, f, cases);
  run_static_menu<mesh<dim<"a", 6>>>({6}, f, cases);
  run_static_menu<mesh<dim<"a", 2>, dim<"b", 1>, dim<"c", 2>, dim<"d", 3>, dim<"e", 1>, dim<"f", 2>>>({2, 1, 2, 3, 1, 2}, f,
                                                                                                   cases);
  report(f);
  CHECK(cases > 60);
}

TEST_CASE("unflattening flattened (multi-mode) static dims matches the model") {
  using namespace dm;
  failures f;
  {
    f.context = "(x=4, y=2) flattened, then (hi=2, lo=4)";
    using M = mesh<dim<"x", 4>, dim<"y", 2>>;
    const auto md = model::root({"x", "y"}, {4, 2});
    check(M{}.flatten<"xy">().unflatten<"xy", dim<"hi", 2>, dim<"lo", 4>>(),
          *md.flatten_all("xy").unflatten("xy", {{"hi", 2}, {"lo", 4}}), f);
  }
  {
    f.context = "(dp, cp, tp) non-adjacent dp_tp sliced, then (a=2, b=2)";
    using M = mesh<dim<"dp", 2>, dim<"cp", 2>, dim<"tp", 2>>;
    const auto md = model::root({"dp", "cp", "tp"}, {2, 2, 2});
    check(M{}.flatten<"dp_tp", "dp", "tp">().slice<"dp_tp">().unflatten<"dp_tp", dim<"a", 2>, dim<"b", 2>>(),
          *md.flatten_alias("dp_tp", {"dp", "tp"}).slice({"dp_tp"}).unflatten("dp_tp", {{"a", 2}, {"b", 2}}), f);
  }
  {
    f.context = "(a=6, b=4) flattened, then (p=3, q=8): cuts a into 3 x 2";
    using M = mesh<dim<"a", 6>, dim<"b", 4>>;
    const auto md = model::root({"a", "b"}, {6, 4});
    const auto u = M{}.flatten<"all">().unflatten<"all", dim<"p", 3>, dim<"q", 8>>();
    const auto mu = *md.flatten_all("all").unflatten("all", {{"p", 3}, {"q", 8}});
    check(u, mu, f);
    check(u.slice<"q", "p">(), mu.slice({"q", "p"}), f);
    check(u.flatten<"bp", "b", "p">(), mu.flatten_alias("bp", {"b", "p"}), f);
  }
  {
    f.context = "(c, a) of (a=2, b=3, c=2) transposed-flattened in place, then (u=4, v=1), then sliced with b";
    using M = mesh<dim<"a", 2>, dim<"b", 3>, dim<"c", 2>>;
    const auto md = model::root({"a", "b", "c"}, {2, 3, 2});
    const auto u = M{}.flatten<"ca", "c", "a">().unflatten<"ca", dim<"u", 4>, dim<"v", 1>>();
    const auto mu = *md.flatten_alias("ca", {"c", "a"}).unflatten("ca", {{"u", 4}, {"v", 1}});
    check(u, mu, f);
    check(u.slice<"b", "u">(), mu.slice({"b", "u"}), f);
  }
  {
    f.context = "(a=2, b=3, c=4) flattened, then (p=6, q=2, r=2): cuts c";
    using M = mesh<dim<"a", 2>, dim<"b", 3>, dim<"c", 4>>;
    const auto md = model::root({"a", "b", "c"}, {2, 3, 4});
    const auto u = M{}.flatten<"all">().unflatten<"all", dim<"p", 6>, dim<"q", 2>, dim<"r", 2>>();
    const auto mu = *md.flatten_all("all").unflatten("all", {{"p", 6}, {"q", 2}, {"r", 2}});
    check(u, mu, f);
    check(u.slice<"r", "p">().flatten<"rp">(), mu.slice({"r", "p"}).flatten_all("rp"), f);
  }
  {
    f.context = "(a=6, b=1) flattened, then (p=2, one=1, q=3): size-1 dims on a cut";
    using M = mesh<dim<"a", 6>, dim<"b", 1>>;
    const auto md = model::root({"a", "b"}, {6, 1});
    const auto u = M{}.flatten<"all">().unflatten<"all", dim<"p", 2>, dim<"one", 1>, dim<"q", 3>>();
    const auto mu = *md.flatten_all("all").unflatten("all", {{"p", 2}, {"one", 1}, {"q", 3}});
    check(u, mu, f);
    check(u.slice<"p", "one">(), mu.slice({"p", "one"}), f);  // was a bogus overlap error
    check(u.slice<"q", "one", "p">(), mu.slice({"q", "one", "p"}), f);
  }
  {
    f.context = "(a=2, b=1, c=3) flattened, then (p=2, q=3): a size-1 mode on a boundary";
    using M = mesh<dim<"a", 2>, dim<"b", 1>, dim<"c", 3>>;
    const auto md = model::root({"a", "b", "c"}, {2, 1, 3});
    const auto u = M{}.flatten<"all">().unflatten<"all", dim<"p", 2>, dim<"q", 3>>();
    const auto mu = *md.flatten_all("all").unflatten("all", {{"p", 2}, {"q", 3}});
    check(u, mu, f);
    check(u.slice<"q", "p">(), mu.slice({"q", "p"}), f);  // was a bogus overlap error
  }
  report(f);
}
}
