// bench/plan.cpp: time (and heap use) for one rank to derive its group and (color, key),
// devmesh vs PyTorch's algorithm (pytorch_plan.hpp), on meshes of 8 to 2^24 ranks.
//
// The meshes are dynamic (sizes are run-time values), and the rank goes through
// DoNotOptimize every iteration, so nothing is constant-folded or hoisted.
// Usage: plan [--smoke] [google benchmark flags]; --smoke stops at 2^16 ranks.
#include <benchmark/benchmark.h>

#include <cstring>
#include <devmesh/devmesh.hpp>
#include <string>
#include <utility>
#include <vector>

#include "alloc_counter.hpp"
#include "pytorch_plan.hpp"

namespace dm = devmesh;
using mesh3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;  // all sizes dynamic

namespace {

bool failed = false;  // a devmesh plan that disagrees with the baseline or allocates: exit 1

struct shape3 {
  int dp, cp, tp;
  int size() const { return dp * cp * tp; }
};

// One query: which dims the group spans (root dim indices, for the baseline) and how
// devmesh derives it (returns {rank_group, split_args}).
template <class F>
struct query {
  const char* name;
  std::vector<int> dims;
  F devmesh;
};
template <class F>
query(const char*, std::vector<int>, F) -> query<F>;

// Heap use of one plan, counted outside the timed loop (the benchmark library itself
// allocates now and then while it times): `reps` plans under one allocation counter.
template <class Plan>
double report_heap(benchmark::State& st, shape3 s, Plan& plan, int reps) {
  const bench::alloc_scope heap;
  for (int i = 0; i < reps; ++i) plan();
  const auto calls = static_cast<double>(heap.calls()), bytes = static_cast<double>(heap.bytes());
  st.counters["ranks"] = s.size();
  st.counters["allocs_per_plan"] = calls / reps;
  st.counters["heap_bytes_per_plan"] = bytes / reps;
  return calls;
}

template <class F>
void bench_devmesh(benchmark::State& st, shape3 s, const query<F>& q) {
  const mesh3 m(s.dp, s.cp, s.tp);
  int r = s.size() / 2 + 3;
  {  // Same answer as the baseline: same members in the same order, same key.
    const auto [g, split] = q.devmesh(m, r);
    const auto ref = bench::pytorch_plan({s.dp, s.cp, s.tp}, q.dims, r);
    bool same = g.size() == static_cast<int>(ref.ranks.size()) && split.key == ref.key;
    for (int i = 0; same && i < g.size(); ++i) same = g[i] == ref.ranks[i];
    if (!same) {
      failed = true;
      st.SkipWithError("devmesh and the PyTorch baseline disagree");
      return;
    }
  }
  auto plan = [&] {
    benchmark::DoNotOptimize(r);
    auto planned = q.devmesh(m, r);
    benchmark::DoNotOptimize(planned);
  };
  for (auto _ : st) plan();
  if (report_heap(st, s, plan, 1000) != 0) {
    failed = true;
    st.SkipWithError("the devmesh plan allocated on the heap");
  }
}

void bench_pytorch(benchmark::State& st, shape3 s, const std::vector<int>& dims) {
  const std::vector<int> shape{s.dp, s.cp, s.tp};
  int r = s.size() / 2 + 3;
  auto plan = [&] {
    benchmark::DoNotOptimize(r);
    auto planned = bench::pytorch_plan(shape, dims, r);
    benchmark::DoNotOptimize(planned);
  };
  for (auto _ : st) plan();
  report_heap(st, s, plan, 1);
}

template <class F>
void add(const query<F>& q, const std::vector<shape3>& shapes) {
  for (const shape3 s : shapes) {
    auto name = [&](const char* impl) {  // plan/<query>/<impl>/<ranks>
      std::string n = "plan/";
      n.append(q.name).append("/").append(impl).append("/").append(std::to_string(s.size()));
      return n;
    };
    benchmark::RegisterBenchmark(name("devmesh").c_str(), [s, q](benchmark::State& st) { bench_devmesh(st, s, q); });
    benchmark::RegisterBenchmark(name("pytorch").c_str(),
                                 [s, dims = q.dims](benchmark::State& st) { bench_pytorch(st, s, dims); })
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool smoke = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--smoke") == 0)
      smoke = true;
    else
      argv[kept++] = argv[i];
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);

  std::vector<shape3> shapes{{2, 2, 2}, {64, 8, 8}, {256, 32, 8}};
  if (!smoke) shapes.insert(shapes.end(), {{1024, 128, 8}, {16384, 128, 8}});  // 2^20, 2^24

  auto both = [](const auto& g, dm::split_args s) { return std::pair{g, s}; };
  add(query{"slice1(tp)", {2}, [=](const mesh3& m, int r) { return both(m.group<"tp">(r), m.comm_split<"tp">(r)); }},
      shapes);
  add(query{"slice1(dp)", {0}, [=](const mesh3& m, int r) { return both(m.group<"dp">(r), m.comm_split<"dp">(r)); }},
      shapes);
  add(query{"slice2(cp,tp)", {1, 2},
            [=](const mesh3& m, int r) { return both(m.group<"cp", "tp">(r), m.comm_split<"cp", "tp">(r)); }},
      shapes);
  add(query{"slice3(dp,cp,tp)", {0, 1, 2},
            [=](const mesh3& m, int r) {
              return both(m.group<"dp", "cp", "tp">(r), m.comm_split<"dp", "cp", "tp">(r));
            }},
      shapes);
  add(query{"flatten(dp_cp)", {0, 1},
            [=](const mesh3& m, int r) {
              const auto f = m.flatten<"dp_cp", "dp", "cp">();
              return both(f.group<"dp_cp">(r), f.comm_split<"dp_cp">(r));
            }},
      shapes);
  add(query{"flatten(dp_tp)", {0, 2},  // not adjacent: PyTorch cannot flatten it; same algorithm
            [=](const mesh3& m, int r) {
              const auto f = m.flatten<"dp_tp", "dp", "tp">();
              return both(f.group<"dp_tp">(r), f.comm_split<"dp_tp">(r));
            }},
      shapes);

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return failed ? 1 : 0;
}
