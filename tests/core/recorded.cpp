// Conformance against the references themselves (tests/core/data, recorded by
// scripts/pytorch-reference/record_*.py): every group PyTorch 2.15's _unflatten, Megatron-Core's
// generators and TorchTitan's ParallelDims.build_mesh() made, rebuilt with devmesh's layout
// queries on one root (flatten, unflatten, slices by compile-time and run-time names), members
// and order exactly. Sizes are run-time values throughout (the recorded configurations); the
// issue's configurations are checked again with static sizes.
#include <doctest/doctest.h>

#include <devmesh/devmesh.hpp>

#include "recorded_groups.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace dm = devmesh;

namespace {

using recorded::config;
using recorded::first_difference;
using recorded::listed;

std::vector<std::string> split(const std::string& s, char by) {
  std::vector<std::string> out;
  std::string part;
  for (char c : s) {
    if (c == by) {
      out.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  out.push_back(part);
  return out;
}
std::vector<int> ints(const std::string& s, char by) {
  std::vector<int> out;
  for (const auto& p : split(s, by)) out.push_back(std::stoi(p));
  return out;
}

// ---- PyTorch 2.15 _unflatten -----------------------------------------------------------------

using root2 = dm::mesh<dm::dim<"d0">, dm::dim<"d1">>;
using root3 = dm::mesh<dm::dim<"d0">, dm::dim<"d1">, dm::dim<"d2">>;
using root4 = dm::mesh<dm::dim<"d0">, dm::dim<"d1">, dm::dim<"d2">, dm::dim<"d3">>;

/// The groups of every new dim of `flat` cut into `sizes` at run time, as PyTorch records
/// them; or, where PyTorch refused, that devmesh refuses too (mesh_error). Counts failures.
template <class Flat>
void check_cut(const Flat& flat, const config& c, const std::vector<int>& sizes, int& failures) {
  std::vector<recorded::groups> got;
  try {
    if (sizes.size() == 2) {
      const auto u = flat.template unflatten<"f", dm::dim<"x">, dm::dim<"y">>(sizes[0], sizes[1]);
      got = {listed(dm::all_groups<"x">(u)), listed(dm::all_groups<"y">(u))};
    } else {
      const auto u = flat.template unflatten<"f", dm::dim<"x">, dm::dim<"y">, dm::dim<"z">>(sizes[0], sizes[1], sizes[2]);
      got = {listed(dm::all_groups<"x">(u)), listed(dm::all_groups<"y">(u)), listed(dm::all_groups<"z">(u))};
    }
  } catch (const dm::mesh_error& e) {
    if (c.refused.empty()) {
      ++failures;
      FAIL_CHECK(c.id << ": devmesh refuses what PyTorch accepts: " << std::string(e.what()));
    }
    return;
  }
  if (!c.refused.empty()) {
    ++failures;
    FAIL_CHECK(c.id << ": devmesh accepts what PyTorch refuses (" << c.refused << ")");
    return;
  }
  for (std::size_t j = 0; j < got.size(); ++j) {
    const auto diff = first_difference(c.lists[j].second, got[j]);
    if (!diff.empty()) {
      ++failures;
      FAIL_CHECK(c.id << ": new dim " << c.lists[j].first << ": " << diff);
    }
  }
}

/// root[dims]._flatten() of a run-time root: the flattened dims' 1-D mesh, named "f".
template <class F>
void with_flattened(const std::vector<int>& shape, const std::vector<int>& sel, F&& f) {
  int mask = 0;
  for (int d : sel) mask |= 1 << d;
#define DEVMESH_FLAT(M, ...) \
  case M:                    \
    return f(r.template flatten<"f", __VA_ARGS__>().template slice<"f">())
  if (shape.size() == 2) {
    const root2 r(shape[0], shape[1]);
    switch (mask) { DEVMESH_FLAT(3, "d0", "d1"); }
  } else if (shape.size() == 3) {
    const root3 r(shape[0], shape[1], shape[2]);
    switch (mask) {
      DEVMESH_FLAT(3, "d0", "d1");
      DEVMESH_FLAT(5, "d0", "d2");
      DEVMESH_FLAT(6, "d1", "d2");
      DEVMESH_FLAT(7, "d0", "d1", "d2");
    }
  } else if (shape.size() == 4) {
    const root4 r(shape[0], shape[1], shape[2], shape[3]);
    switch (mask) {
      DEVMESH_FLAT(3, "d0", "d1");
      DEVMESH_FLAT(5, "d0", "d2");
      DEVMESH_FLAT(6, "d1", "d2");
      DEVMESH_FLAT(9, "d0", "d3");
      DEVMESH_FLAT(10, "d1", "d3");
      DEVMESH_FLAT(12, "d2", "d3");
      DEVMESH_FLAT(7, "d0", "d1", "d2");
      DEVMESH_FLAT(11, "d0", "d1", "d3");
      DEVMESH_FLAT(13, "d0", "d2", "d3");
      DEVMESH_FLAT(14, "d1", "d2", "d3");
      DEVMESH_FLAT(15, "d0", "d1", "d2", "d3");
    }
  }
#undef DEVMESH_FLAT
  FAIL("no devmesh flatten for this selection");
}

// ---- Megatron-Core ------------------------------------------------------------------------------

// Megatron's order string lists the fastest dim first; a mesh lists the slowest first. Its
// default order, tp-cp-ep-dp-pp, is the mesh (pp, dp, cp, tp); tp-cp-ep-pp-dp is (dp, pp, cp, tp).
using dense_pp_last = dm::mesh<dm::dim<"pp">, dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;
using dense_dp_last = dm::mesh<dm::dim<"dp">, dm::dim<"pp">, dm::dim<"cp">, dm::dim<"tp">>;

/// A Megatron token ("tp-dp-cp") as the dims of a mesh, in the mesh's order (a token's group
/// runs over its dims in the order string's order, fastest last read row-major: mesh order).
/// `rename` maps Megatron's names to the view's (the expert view's tp is etp, dp is edp).
template <class Mesh>
std::vector<std::string> token_dims(const std::string& token, const std::vector<std::pair<std::string, std::string>>& rename) {
  std::vector<std::string> dims;
  for (auto name : split(token, '-')) {
    for (const auto& [from, to] : rename)
      if (name == from) name = to;
    dims.push_back(name);
  }
  std::sort(dims.begin(), dims.end(), [](const std::string& a, const std::string& b) {
    return Mesh::dim_index(a) < Mesh::dim_index(b);
  });
  return dims;
}

/// The recorded groups of every token of one view, against all_groups of the view sliced by
/// the token's dims at run time.
template <class View>
void check_tokens(const View& view, const config& c, std::string_view prefix,
                  const std::vector<std::pair<std::string, std::string>>& rename, int& failures, int& lists) {
  for (const auto& [label, want] : c.lists) {
    if (label.rfind(prefix, 0) != 0) continue;
    const auto token = label.substr(prefix.size());
    const auto dims = token_dims<View>(token, rename);
    const auto diff = first_difference(want, listed(dm::all_groups(view.slice(dims))));
    ++lists;
    if (!diff.empty()) {
      ++failures;
      FAIL_CHECK(c.id << " " << label << ": " << diff);
    }
  }
}

// ---- TorchTitan ------------------------------------------------------------------------------------

/// One root for every TorchTitan view: (pp, dp_replicate, dp_shard, cp, tp) cut from the world
/// at run time (dp_shard inferred), with its flattened dims as aliases.
auto titan_root(const config& c) {
  const dm::mesh<dm::dim<"world">> world(c.number("world"));
  return world
      .unflatten<"world", dm::dim<"pp">, dm::dim<"dp_replicate">, dm::dim<"dp_shard">, dm::dim<"cp">, dm::dim<"tp">>(
          c.number("pp"), c.number("dp_replicate"), dm::dynamic_size, c.number("cp"), c.number("tp"))
      .flatten<"batch", "dp_replicate", "dp_shard">()
      .flatten<"loss", "dp_replicate", "dp_shard", "cp">()
      .flatten<"fsdp", "dp_shard", "cp">()
      .flatten<"world", "pp", "dp_replicate", "dp_shard", "cp", "tp">();
}

}  // namespace

TEST_SUITE("recorded") {
TEST_CASE("PyTorch 2.15 _unflatten: every recorded cut, at run time") {
  const auto cases = recorded::load("pytorch_2.15_unflatten.txt");
  REQUIRE(cases.size() > 1000);
  int failures = 0, refused = 0;
  for (const auto& c : cases) {
    const auto parts = split(c.id, ':');
    const auto shape = ints(parts[0], 'x'), sel = ints(parts[1], ','), sizes = ints(parts[2], ',');
    refused += !c.refused.empty();
    with_flattened(shape, sel, [&](const auto& flat) { check_cut(flat, c, sizes, failures); });
  }
  CHECK(failures == 0);
  CHECK(refused > 50);  // the file holds refusals to check as well
}

TEST_CASE("PyTorch 2.15 _unflatten: the issue's TorchTitan cuts, with static sizes") {
  const auto cases = recorded::load("pytorch_2.15_unflatten.txt");
  const auto want = [&](const std::string& id, int j) {
    for (const auto& c : cases)
      if (c.id == id) return c.lists.at(j).second;
    FAIL("no recorded case " << id);
    return recorded::groups{};
  };
  using dm::dim;
  // (dp_shard, cp, tp) = (4, 3, 2) -> (efsdp, ep) = (6, 4): ep straddles cp and tp.
  constexpr auto a = dm::mesh<dim<"d0", 4>, dim<"d1", 3>, dim<"d2", 2>>{}.flatten<"f">();
  constexpr auto a2 = a.unflatten<"f", dim<"x", 6>, dim<"y", 4>>();
  static_assert(decltype(a2)::is_static && decltype(a2)::ndim == 2);
  static_assert(decltype(a2)::ndim_with_aliases == 2);  // d0, d1, d2 are cut across: dropped
  CHECK(listed(dm::all_groups<"x">(a2)) == want("4x3x2:0,1,2:6,4", 0));
  CHECK(listed(dm::all_groups<"y">(a2)) == want("4x3x2:0,1,2:6,4", 1));
  constexpr auto a3 = a.unflatten<"f", dim<"x", 6>, dim<"y", 4>, dim<"z", 1>>();
  CHECK(listed(dm::all_groups<"y">(a3)) == want("4x3x2:0,1,2:6,4,1", 1));
  CHECK(listed(dm::all_groups<"z">(a3)) == want("4x3x2:0,1,2:6,4,1", 2));
  // (3, 1, 2) -> (2, 3) and (2, 3, 2) -> (4, 3).
  constexpr auto b = dm::mesh<dim<"d0", 3>, dim<"d1", 1>, dim<"d2", 2>>{}.flatten<"f">().unflatten<"f", dim<"x", 2>, dim<"y", 3>>();
  CHECK(listed(dm::all_groups<"y">(b)) == want("3x1x2:0,1,2:2,3", 1));
  constexpr auto c = dm::mesh<dim<"d0", 2>, dim<"d1", 3>, dim<"d2", 2>>{}.flatten<"f">().unflatten<"f", dim<"x", 4>, dim<"y", 3>>();
  CHECK(listed(dm::all_groups<"x">(c)) == want("2x3x2:0,1,2:4,3", 0));
  CHECK(listed(dm::all_groups<"y">(c)) == want("2x3x2:0,1,2:4,3", 1));
  // A mixed-stride (non-contiguous) flatten, d0 and d2 of (6, 2, 4), cut at 3 inside d0.
  constexpr auto d = dm::mesh<dim<"d0", 6>, dim<"d1", 2>, dim<"d2", 4>>{}.flatten<"f", "d0", "d2">().slice<"f">();
  constexpr auto d2 = d.unflatten<"f", dim<"x", 2>, dim<"y", 12>>();
  CHECK(listed(dm::all_groups<"x">(d2)) == want("6x2x4:0,2:2,12", 0));
  CHECK(listed(dm::all_groups<"y">(d2)) == want("6x2x4:0,2:2,12", 1));
}

TEST_CASE("Megatron-Core 0.16.1: the dense and expert groups of every configuration, from one world") {
  const auto cases = recorded::load("megatron_core_0.16.1_groups.txt");
  int failures = 0, lists = 0, configs = 0;
  const std::vector<std::pair<std::string, std::string>> expert_names = {{"tp", "etp"}, {"dp", "edp"}};
  for (const auto& c : cases) {
    if (c.id.rfind("grid-", 0) == 0) continue;
    ++configs;
    const int world = c.number("world"), pp = c.number("pp"), cp = c.number("cp"), tp = c.number("tp");
    const int ep = c.number("ep"), etp = c.number("etp");
    const dm::mesh<dm::dim<"world">> w(world);
    if (c.fields.at("order") == "tp-cp-ep-dp-pp") {
      // Sizes from the command line: dp inferred, as Megatron does. The expert view cuts the
      // dense view's dp, cp, tp (flattened, in mesh order) into edp, ep, etp (edp inferred):
      // Megatron's two generators as one mesh's unflatten, sharing pp.
      const auto dense = w.unflatten<"world", dm::dim<"pp">, dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>(
          pp, dm::dynamic_size, cp, tp);
      CHECK(dense.size<"dp">() == c.number("dp"));
      const auto expert = dense.flatten<"dp_cp_tp", "dp", "cp", "tp">()
                              .slice<"pp", "dp_cp_tp">()
                              .unflatten<"dp_cp_tp", dm::dim<"edp">, dm::dim<"ep">, dm::dim<"etp">>(dm::dynamic_size, ep, etp);
      CHECK(expert.size<"edp">() == c.number("edp"));
      check_tokens(dense, c, "dense:", {}, failures, lists);
      check_tokens(expert, c, "expert:", expert_names, failures, lists);
    } else {
      const auto dense = w.unflatten<"world", dm::dim<"dp">, dm::dim<"pp">, dm::dim<"cp">, dm::dim<"tp">>(
          dm::dynamic_size, pp, cp, tp);
      const auto expert = w.unflatten<"world", dm::dim<"edp">, dm::dim<"pp">, dm::dim<"ep">, dm::dim<"etp">>(
          dm::dynamic_size, pp, ep, etp);
      check_tokens(dense, c, "dense:", {}, failures, lists);
      check_tokens(expert, c, "expert:", expert_names, failures, lists);
    }
  }
  CHECK(configs >= 17);
  CHECK(lists >= 17 * 14);
  CHECK(failures == 0);
}

TEST_CASE("Megatron-Core 0.16.1: HyperCommGrid's rank enumerations") {
  int grids = 0, failures = 0, lists = 0;
  for (const auto& c : recorded::load("megatron_core_0.16.1_groups.txt")) {
    if (c.id.rfind("grid-", 0) != 0) continue;
    ++grids;
    const auto shape = c.numbers("shape");  // fastest first, as HyperCommGrid takes it
    const auto names = split(c.fields.at("names"), ',');
    std::vector<int> by_name(4);
    for (std::size_t i = 0; i < names.size(); ++i)
      by_name[static_cast<std::size_t>(dense_pp_last::dim_index(names[i]))] = shape[i];
    const dense_pp_last m(by_name[0], by_name[1], by_name[2], by_name[3]);
    if (names.back() == "pp") {
      check_tokens(m, c, "grid:", {}, failures, lists);
    } else {  // dp slowest: the other mesh order
      const dense_dp_last n(by_name[1], by_name[0], by_name[2], by_name[3]);
      check_tokens(n, c, "grid:", {}, failures, lists);
    }
  }
  CHECK(grids == 2);
  CHECK(lists > 10);
  CHECK(failures == 0);
}

TEST_CASE("Megatron-Core 0.16.1: the issue's configurations with static sizes") {
  const auto cases = recorded::load("megatron_core_0.16.1_groups.txt");
  const auto want = [&](const std::string& id, const std::string& label) {
    for (const auto& c : cases)
      if (c.id == id)
        for (const auto& [l, g] : c.lists)
          if (l == label) return g;
    FAIL("no recorded " << id << " " << label);
    return recorded::groups{};
  };
  using dm::dim;
  {  // tp=2 cp=3 pp=2 dp=4 -> etp=1 ep=4 edp=6 (world 48): ep straddles cp and tp
    const std::string id = "w48-tp2-cp3-pp2-ep4-etp1-tp-cp-ep-dp-pp";
    constexpr dm::mesh<dim<"pp", 2>, dim<"dp", 4>, dim<"cp", 3>, dim<"tp", 2>> dense;
    constexpr auto expert = dense.flatten<"dp_cp_tp", "dp", "cp", "tp">()
                                .slice<"pp", "dp_cp_tp">()
                                .unflatten<"dp_cp_tp", dim<"edp", 6>, dim<"ep", 4>, dim<"etp", 1>>();
    static_assert(decltype(expert)::is_static);
    CHECK(listed(dm::all_groups<"ep">(expert)) == want(id, "expert:ep"));
    CHECK(listed(dm::all_groups<"edp">(expert)) == want(id, "expert:dp"));
    CHECK(listed(dm::all_groups<"pp", "ep", "etp">(expert)) == want(id, "expert:tp-ep-pp"));
    CHECK(listed(dm::all_groups<"pp", "tp">(dense)) == want(id, "dense:tp-pp"));
    CHECK(listed(dm::all_groups<"dp", "cp", "tp">(dense)) == want(id, "dense:tp-dp-cp"));
    // A token names its dims in any order; the group runs over them in mesh order. Naming
    // tp-pp as group<"tp", "pp"> gives the same members in the transposed order.
    CHECK(listed(dm::all_groups<"tp", "pp">(dense)) != want(id, "dense:tp-pp"));
  }
  {  // tp=2 dp=6 -> etp=3 ep=2 edp=2 (world 12): etp straddles tp and dp
    const std::string id = "w12-tp2-cp1-pp1-ep2-etp3-tp-cp-ep-dp-pp";
    constexpr dm::mesh<dim<"pp", 1>, dim<"dp", 6>, dim<"cp", 1>, dim<"tp", 2>> dense;
    constexpr auto expert = dense.flatten<"dp_cp_tp", "dp", "cp", "tp">()
                                .slice<"pp", "dp_cp_tp">()
                                .unflatten<"dp_cp_tp", dim<"edp", 2>, dim<"ep", 2>, dim<"etp", 3>>();
    CHECK(listed(dm::all_groups<"etp">(expert)) == want(id, "expert:tp"));
    CHECK(listed(dm::all_groups<"ep">(expert)) == want(id, "expert:ep"));
    CHECK(listed(dm::all_groups<"ep", "etp">(expert)) == want(id, "expert:tp-ep"));
    CHECK(listed(dm::all_groups<"edp">(expert)) == want(id, "expert:dp"));
  }
}

TEST_CASE("TorchTitan: every mesh ParallelDims.build_mesh() makes, from one root") {
  const auto cases = recorded::load("torchtitan_meshes.txt");
  int failures = 0, lists = 0, configs = 0;
  for (const auto& c : cases) {
    if (!c.refused.empty()) continue;
    ++configs;
    const auto root = titan_root(c);
    const int ep = c.number("ep"), etp = c.number("etp"), cp = c.number("cp"), tp = c.number("tp");
    // Newer versions: the expert (sparse) view cuts dp_shard, cp, tp into efsdp, ep, etp.
    const auto sparse = root.flatten<"sparse", "dp_shard", "cp", "tp">()
                            .slice<"pp", "dp_replicate", "sparse">()
                            .unflatten<"sparse", dm::dim<"efsdp">, dm::dim<"ep">, dm::dim<"etp">>(dm::dynamic_size, ep, etp);
    // The 2025-08 version: dp_shard cut in place into (dp_shard_mod_ep, dp_shard_in_ep), ep
    // flattened from dp_shard_in_ep, cp and (for etp = 1) tp.
    const int in_ep = etp == tp ? ep / cp : ep / (cp * tp);
    const bool old = c.fields.at("version") == "2025-08-13";
    const auto cut = root.unflatten<"dp_shard", dm::dim<"dp_shard_mod_ep">, dm::dim<"dp_shard_in_ep">>(
        dm::dynamic_size, old && ep > 1 ? in_ep : 1);
    const auto ep_etp1 = cut.flatten<"ep", "dp_shard_in_ep", "cp", "tp">();
    const auto ep_etp_tp = cut.flatten<"ep", "dp_shard_in_ep", "cp">();
    for (const auto& [label, want] : c.lists) {
      const auto name = label.substr(label.find(':') + 1);
      const auto mesh = label.substr(0, label.find(':'));
      std::vector<std::string> dims{name == "loss_mesh" || name == "dp_cp" ? "loss"
                                    : name == "dp" || name == "batch"      ? "batch"
                                    : name == "dp_shard_cp"                ? "fsdp"
                                                                           : name};
      recorded::groups got;
      if (old && (name == "ep" || name == "dp_shard_mod_ep" || name == "dp_shard_in_ep"))
        got = etp == 1 ? listed(dm::all_groups(ep_etp1.slice(dims))) : listed(dm::all_groups(ep_etp_tp.slice(dims)));
      else if (!old && (name == "efsdp" || name == "ep" || name == "etp" ||
                        (mesh.find("sparse") != std::string::npos && name == "dp_replicate")))
        got = listed(dm::all_groups(sparse.slice(dims)));
      else
        got = listed(dm::all_groups(root.slice(dims)));
      ++lists;
      const auto diff = first_difference(want, got);
      if (!diff.empty()) {
        ++failures;
        FAIL_CHECK(c.id << " " << label << ": " << diff);
      }
    }
  }
  CHECK(configs >= 42);
  CHECK(lists > 500);
  CHECK(failures == 0);
}
}
