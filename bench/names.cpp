// bench/names.cpp: zero-cost names, timed. Each named devmesh query next to the same
// arithmetic written by hand, on a static (2,2,2) mesh and on a dynamic mesh (a mutable
// global, so its sizes are loaded, not folded). The rank goes through DoNotOptimize every
// iteration. Built twice: with devmesh's rank checks (the hand-written side then checks the
// same range) and with DEVMESH_NO_RANK_CHECKS. zero_cost/ checks the generated code.
#include <benchmark/benchmark.h>

#include <array>
#include <devmesh/devmesh.hpp>
#include <stdexcept>

namespace dm = devmesh;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;
using mesh3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;

namespace {

struct hand_mesh {  // what a hand-written dynamic mesh stores
  int size[3];
  int stride[3];
};

#if defined(DEVMESH_NO_RANK_CHECKS)
#define HAND_CHECK(r, n) (void)0
#else
#define HAND_CHECK(r, n) \
  if ((r) < 0 || (r) >= (n)) throw std::out_of_range("rank out of range")
#endif

int rank_source = 5;  // a global, so the compiler cannot assume its value

template <class F>
void run(benchmark::State& st, F f) {
  int r = rank_source;
  for (auto _ : st) {
    benchmark::DoNotOptimize(r);
    auto v = f(r);
    benchmark::DoNotOptimize(v);
  }
}

constexpr mesh3d sm{};
mesh3 dm3(2, 2, 2);
hand_mesh hm{{2, 2, 2}, {4, 2, 1}};

void static_local_rank_named(benchmark::State& st) { run(st, [](int r) { return sm.local_rank<"tp">(r); }); }
void static_local_rank_hand(benchmark::State& st) {
  run(st, [](int r) {
    HAND_CHECK(r, 8);
    return (r / 1) % 2;
  });
}
void static_coordinate_named(benchmark::State& st) { run(st, [](int r) { return sm.coordinate(r); }); }
void static_coordinate_hand(benchmark::State& st) {
  run(st, [](int r) {
    HAND_CHECK(r, 8);
    return std::array<int, 3>{(r / 4) % 2, (r / 2) % 2, (r / 1) % 2};
  });
}
void static_group_member_named(benchmark::State& st) {
  run(st, [](int r) { return sm.group<"dp", "cp">(r)[r % 4]; });
}
void static_group_member_hand(benchmark::State& st) {
  run(st, [](int r) {
    HAND_CHECK(r, 8);
    const int i = r % 4;
    const int base = r - ((r / 4) % 2) * 4 - ((r / 2) % 2) * 2;
    return base + (i % 2) * 2 + ((i / 2) % 2) * 4;
  });
}
void dynamic_local_rank_named(benchmark::State& st) {
  const mesh3& m = dm3;
  run(st, [&](int r) { return m.local_rank<"tp">(r); });
}
void dynamic_local_rank_hand(benchmark::State& st) {
  const hand_mesh& m = hm;
  run(st, [&](int r) {
    HAND_CHECK(r, m.size[0] * m.size[1] * m.size[2]);
    return (r / m.stride[2]) % m.size[2];
  });
}
void dynamic_coordinate_named(benchmark::State& st) {
  const mesh3& m = dm3;
  run(st, [&](int r) { return m.coordinate(r); });
}
void dynamic_coordinate_hand(benchmark::State& st) {
  const hand_mesh& m = hm;
  run(st, [&](int r) {
    HAND_CHECK(r, m.size[0] * m.size[1] * m.size[2]);
    return std::array<int, 3>{(r / m.stride[0]) % m.size[0], (r / m.stride[1]) % m.size[1],
                              (r / m.stride[2]) % m.size[2]};
  });
}

}  // namespace

BENCHMARK(static_local_rank_named);
BENCHMARK(static_local_rank_hand);
BENCHMARK(static_coordinate_named);
BENCHMARK(static_coordinate_hand);
BENCHMARK(static_group_member_named);
BENCHMARK(static_group_member_hand);
BENCHMARK(dynamic_local_rank_named);
BENCHMARK(dynamic_local_rank_hand);
BENCHMARK(dynamic_coordinate_named);
BENCHMARK(dynamic_coordinate_hand);
BENCHMARK_MAIN();
