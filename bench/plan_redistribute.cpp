// bench/plan_redistribute.cpp: the time to plan one redistribute, per call, on the pairs of
// bench/redistribute_pairs.txt (issue 20, item 7: at least 1000x cheaper than PyTorch's
// planner, which bench/pytorch/plan_time.py times on the same pairs).
//   dynamic/<pair>  specs built at run time (dm::parse_sharding, before the timed loop): the
//                   planner runs on every call, its inputs laundered through DoNotOptimize;
//   static/<pair>   the first five pairs as static specs (dm::sharding<...> types): the plan
//                   is a constant the compiler computed, which redistribute reads in place
//                   (detail::plan_in_place): a call costs what reading its step count costs;
//   static_copy/<pair>  the same, by value (dm::plan_redistribute returns a copy of it);
//   kept/<pair>     the dynamic specs again through what dm::redistribute calls for them
//                   (detail::kept_plan with a model): the plan the thread kept from its first
//                   call, found by comparing the two placement tables, the meshes, the tensor
//                   and the links' key, read in place;
//   kept_bytes/<pair>  the same by bytes, found by the specs and the meshes alone (what
//                   dm::redistribute read before issue 42), timed in the same run for comparison;
//   model/<pair>    planning by modelled time (issue 42: uniform shared-memory links, a 256x256
//                   float64 tensor, exact counts): what dm::redistribute pays on a thread's
//                   first call with a pair and a tensor;
//   empty_plan/<D>  making an empty dm::redistribute_plan of a D-dim mesh (D = 1, 2, 3): the
//                   floor of any planner that returns one (a plan holds five steps of two tables).
// Every dynamic plan is checked against the static one where both exist (same steps).
// Usage: plan_redistribute [--pairs FILE] [google benchmark flags]
#include <benchmark/benchmark.h>

#include <devmesh/redistribute.hpp>
#include <devmesh/sharding.hpp>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace dm = devmesh;
using mesh1 = dm::mesh<dm::dim<"dp">>;
using mesh2 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;
using mesh3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;

namespace {

struct pair_text {
  std::string mesh, from, to;
  std::vector<int> sizes;
};

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

std::vector<pair_text> read_pairs(const char* path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(std::string("cannot read ") + path);
  std::vector<pair_text> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    for (std::size_t at = 0;;) {
      const auto bar = line.find('|', at);
      f.push_back(trim(line.substr(at, bar - at)));
      if (bar == std::string::npos) break;
      at = bar + 1;
    }
    if (f.size() != 4) throw std::runtime_error("a pairs line needs 4 fields: " + line);
    pair_text p{f[0], f[2], f[3], {}};
    for (std::size_t at = 0; at < p.mesh.size();) {  // "dp=2,tp=4": the sizes in order
      const auto eq = p.mesh.find('=', at), comma = p.mesh.find(',', at);
      p.sizes.push_back(std::stoi(p.mesh.substr(eq + 1, comma - eq - 1)));
      at = comma == std::string::npos ? p.mesh.size() : comma + 1;
    }
    out.push_back(p);
  }
  return out;
}

std::string label(const pair_text& p) { return p.mesh + ":" + p.from + "->" + p.to; }

/// dynamic/<pair> (the planner on every call) and kept/<pair> (what redistribute reads after
/// its first call) on specs built at run time, their inputs laundered through DoNotOptimize.
template <class Mesh>
void register_dynamic(const pair_text& p, const Mesh& m) {
  const auto from = dm::parse_sharding(p.from, m), to = dm::parse_sharding(p.to, m);
  const auto timed = [from, to](auto plan) {
    return [from, to, plan](benchmark::State& st) {
      auto a = from, b = to;
      for (auto _ : st) {
        benchmark::DoNotOptimize(a);
        benchmark::DoNotOptimize(b);
        plan(a, b);
      }
    };
  };
  benchmark::RegisterBenchmark(("dynamic/" + label(p)).c_str(), timed([](const auto& a, const auto& b) {
    auto plan = dm::plan_redistribute(a, b);
    benchmark::DoNotOptimize(plan);
  }));
  constexpr int N = Mesh::ndim_with_aliases;
  const auto fill = [](dm::plan_model<N>& model) {  // uniform shared-memory links (a miss only)
    for (int d = 0; d < Mesh::ndim; ++d) model.links[d] = dm::link_cost::shared_memory();
  };
  const auto tensor = dm::plan_model<N>{}.tensor(dm::dextents<2>(256, 256), 8);
  benchmark::RegisterBenchmark(("kept/" + label(p)).c_str(), timed([tensor, fill](const auto& a, const auto& b) {
    benchmark::DoNotOptimize(dm::detail::kept_plan(a, b, tensor, std::pair<int, int>{0, 0}, fill).count);
  }));
  benchmark::RegisterBenchmark(("kept_bytes/" + label(p)).c_str(), timed([](const auto& a, const auto& b) {
    benchmark::DoNotOptimize(dm::detail::kept_plan(a, b).count);  // issue 20's: by the specs and meshes alone
  }));
  auto model = tensor;
  fill(model);
  benchmark::RegisterBenchmark(("model/" + label(p)).c_str(), timed([model](const auto& a, const auto& b) {
    auto plan = dm::plan_redistribute(a, b, model);
    benchmark::DoNotOptimize(plan);
  }));
}

void register_dynamic(const pair_text& p) {
  const auto& s = p.sizes;
  if (s.size() == 1) return register_dynamic(p, mesh1(s[0]));
  if (s.size() == 2) return register_dynamic(p, mesh2(s[0], s[1]));
  if (s.size() == 3) return register_dynamic(p, mesh3(s[0], s[1], s[2]));
  throw std::runtime_error("a mesh of 1 to 3 dims: " + p.mesh);
}

// The first five pairs, static: bench/redistribute's.
using m24 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
template <class... C>
using on24 = dm::sharding<m24, C...>;
using psum = dm::partial<dm::reduction::sum>;

template <class From, class To>
void register_static(const pair_text& p) {
  // The check: the dynamic planner gives the static plan's steps.
  const auto dyn = dm::plan_redistribute(dm::parse_sharding(p.from, m24{}), dm::parse_sharding(p.to, m24{}));
  constexpr auto fixed = dm::plan_redistribute(From{}, To{});
  if (dm::to_string(dyn, m24{}) != dm::to_string(fixed, m24{}))
    throw std::runtime_error("static and dynamic plans differ for " + label(p));
  benchmark::RegisterBenchmark(("static/" + label(p)).c_str(), [](benchmark::State& st) {
    for (auto _ : st) {
      const auto& plan = dm::detail::plan_in_place(From{}, To{});
      int steps = plan.count;
      benchmark::DoNotOptimize(steps);
    }
  });
  benchmark::RegisterBenchmark(("static_copy/" + label(p)).c_str(), [](benchmark::State& st) {
    for (auto _ : st) {
      auto plan = dm::plan_redistribute(From{}, To{});
      benchmark::DoNotOptimize(plan);
    }
  });
}

}  // namespace

template <class Mesh>
void register_empty_plan() {
  benchmark::RegisterBenchmark(("empty_plan/" + std::to_string(Mesh::ndim)).c_str(), [](benchmark::State& st) {
    for (auto _ : st) {
      dm::redistribute_plan<Mesh::ndim_with_aliases> plan{};
      benchmark::DoNotOptimize(plan);
    }
  });
}

int main(int argc, char** argv) {
  const char* path = DEVMESH_REDISTRIBUTE_PAIRS;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--pairs") == 0) path = argv[i + 1];
  const auto pairs = read_pairs(path);
  for (const auto& p : pairs) register_dynamic(p);
  register_empty_plan<mesh1>();
  register_empty_plan<mesh2>();
  register_empty_plan<mesh3>();
  if (pairs.size() >= 5) {
    using dm::on, dm::shard, dm::replicate;
    register_static<on24<on<"dp", shard<0>>, on<"tp", shard<0>>>, on24<on<"tp", shard<0>>>>(pairs[0]);
    register_static<on24<on<"dp", shard<0>>>, on24<on<"tp", shard<1>>>>(pairs[1]);
    register_static<on24<on<"dp", psum>>, on24<on<"tp", shard<0>>>>(pairs[2]);
    register_static<on24<on<"dp", shard<0>>, on<"tp", shard<1>>>, on24<>>(pairs[3]);
    register_static<on24<on<"dp", psum>, on<"tp", psum>>, on24<>>(pairs[4]);
  }
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--pairs") == 0) {
      ++i;
      continue;
    }
    args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
