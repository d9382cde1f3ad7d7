// Slices by names chosen at run time (dynamic_slice) answer as compile-time slices do, and
// refuse what those refuse, with the same texts.
#include <doctest/doctest.h>

#include <devmesh/devmesh.hpp>

#include <array>
#include <string>
#include <vector>

namespace dm = devmesh;
using dm::dim;

namespace {
template <class Groups>
std::vector<std::vector<int>> listed(const Groups& gs) {
  std::vector<std::vector<int>> out;
  for (const auto& g : gs) out.emplace_back(g.begin(), g.end());
  CHECK(static_cast<int>(out.size()) == gs.size());
  return out;
}
using lists = std::vector<std::vector<int>>;

std::string error_of(auto f) {
  try {
    f();
  } catch (const dm::mesh_error& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_SUITE("dynamic_slice") {
TEST_CASE("a slice by run-time names answers as the compile-time slice") {
  const dm::mesh<dim<"dp">, dim<"cp">, dim<"tp">> m(2, 3, 2);
  const auto f = m.flatten<"dp_cp", "dp", "cp">();
  const std::vector<std::string> names{"tp", "dp"};
  const auto s = f.slice(names);
  const auto t = f.slice<"tp", "dp">();
  CHECK(s.ndim() == 2);
  CHECK(s.name(0) == "tp");
  CHECK(s.size() == 4);
  CHECK(s.size(1) == 2);
  for (int p = 0; p < 12; ++p) {
    const auto g = s.group(p);
    const auto h = t.group(p);
    CHECK(std::vector<int>(g.begin(), g.end()) == std::vector<int>(h.begin(), h.end()));
    CHECK(s.comm_split(p) == t.comm_split<"tp", "dp">(p));
    CHECK(s.local_rank("dp", p) == t.local_rank<"dp">(p));
    CHECK(s.local_rank(0, p) == t.local_rank<"tp">(p));
  }
  CHECK(listed(dm::all_groups(s)) == listed(dm::all_groups<"tp", "dp">(m)));
  // By index, by an alias, through the free form, and again on the slice.
  CHECK(f.slice({2, 0}).name(1) == "dp");
  const auto a = dm::slice(f, {"dp_cp"});
  CHECK(a.size() == 6);
  CHECK(a.slice({"cp"}).size() == 3);  // an alias the slice covers, as slice<"dp_cp">() keeps it
  CHECK(a.slice({"dp", "cp"}).dim_index(1) == 1);
  CHECK(m.dim_index("tp") == 2);
}

TEST_CASE("a slice by run-time names refuses what slice<...>() refuses, naming the dims") {
  const dm::mesh<dim<"dp">, dim<"cp">, dim<"tp">> m(2, 3, 2);
  const auto f = m.flatten<"dp_cp", "dp", "cp">();
  const auto unknown = error_of([&] { (void)f.slice({"dp", "pp"}); });
  CHECK(unknown.find("devmesh: unknown dim") == 0);
  CHECK(unknown.find("'pp': the dims are dp, cp, tp (aliases: dp_cp)") != std::string::npos);
  CHECK(error_of([&] { (void)f.slice({"tp", "tp"}); }).find("devmesh: the same dim is named twice") == 0);
  const auto overlap = error_of([&] { (void)f.slice({"dp_cp", "cp"}); });
  CHECK(overlap.find("devmesh: a slice or group names an alias together with one of its own dims") == 0);
  CHECK(overlap.find("'dp_cp' and 'cp'") != std::string::npos);
  CHECK(error_of([&] { (void)f.slice(std::vector<std::string>{}); }).find("devmesh: slice<>() needs at least one dim") == 0);
  CHECK(error_of([&] { (void)f.slice({7}); }).find("devmesh: dim index 7 is not in [0, 4)") == 0);
  // On a slice: only its dims and the aliases it covers.
  const auto s = f.slice({"dp_cp"});
  CHECK(error_of([&] { (void)s.slice({"tp"}); }).find("'tp': the dims are dp_cp (aliases: dp, cp)") != std::string::npos);
  CHECK(error_of([&] { (void)m.dim_index("pp"); }).find("'pp': the dims are dp, cp, tp") != std::string::npos);
}
}
