// tests/gpu/layout_host.cpp: check 2, the layout in kernels. For every case of
// layout_cases.hpp and every rank of its rank space (up to 2^20), the values a CUDA kernel
// computed (layout_device.cu) are compared with the same queries computed here, on the
// host, by g++; the kernel's values are also checked against invariants that need no
// reference (rank_at(coordinate(r)) == r, key == local rank == index in the group, color ==
// the group's first rank). One PASS/FAIL line per case.
#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "layout_cases.hpp"

namespace gpu_check::layout {

std::string evaluate_nvcc(int index, int begin, int end, value* out, bool on_device);  // layout_device.cu

namespace {

struct case_info {
  std::string name;
  long long ranks = 0;
  int width = 0;
  int ndim = 0;
  int names = 0;
  int names_offset = 0;
  std::string repr;
};

std::vector<case_info> list_cases() {
  std::vector<case_info> out;
  for_each_case([&](auto ic) {
    constexpr int I = decltype(ic)::value;
    using L = layout_of<I>;
    using P = typename case_def<I>::probe;
    const L m = case_def<I>::layout();
    out.push_back({case_def<I>::name(), m.root_size(), P::template width<L>(), L::ndim,
                   (P::template width<L>() - P::template names_offset<L>()) / P::per_name, P::template names_offset<L>(),
                   dm::to_string(m)});
  });
  return out;
}

/// The host's values for case `index`, ranks [begin, end), on several threads.
void evaluate_host(int index, int begin, int end, value* out) {
  for_each_case([&](auto ic) {
    constexpr int I = decltype(ic)::value;
    if (I != index) return;
    using L = layout_of<I>;
    using P = typename case_def<I>::probe;
    constexpr int width = P::template width<L>();
    const L m = case_def<I>::layout();
    const int threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 32u));
    const int per = (end - begin + threads - 1) / threads;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      const int lo = begin + t * per, hi = std::min(end, lo + per);
      if (lo >= hi) break;
      pool.emplace_back([&m, lo, hi, begin, out] {
        for (int r = lo; r < hi; ++r) P::run(m, r, out + static_cast<long long>(r - begin) * width);
      });
    }
    for (auto& t : pool) t.join();
  });
}

const char* slot_name(const case_info& c, int slot) {
  static const char* per_name[] = {"local_rank", "comm_split.color", "comm_split.key", "group.size",
                                   "group.front", "group.index_of(r)", "group digest"};
  if (slot < c.ndim) return "coordinate";
  if (slot == c.ndim) return "rank_at(coordinate(r), r)";
  if (slot == c.ndim + 1) return "group().size";
  if (slot == c.ndim + 2) return "group().index_of(r)";
  if (slot == c.ndim + 3) return "group() digest";
  return per_name[(slot - c.names_offset) % 7];
}

}  // namespace

}  // namespace gpu_check::layout

namespace gpu_check {

void layout_checks(report& rep, bool on_device, long long max_ranks, bool corrupt) {
  using namespace layout;
  const auto cases = list_cases();
  constexpr int chunk = 1 << 16;
  const char* where = on_device ? "kernel" : "nvcc host code (self-test, no GPU)";
  for (int index = 0; index < static_cast<int>(cases.size()); ++index) {
    const case_info& c = cases[static_cast<std::size_t>(index)];
    const std::string name = "layout in kernels: " + c.name;
    if (c.ranks > max_ranks) {
      rep.skip(name, std::to_string(c.ranks) + " ranks > --layout-max-ranks " + std::to_string(max_ranks));
      continue;
    }
    rep.run(name, [&]() -> result {
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<value> got(static_cast<std::size_t>(chunk) * c.width), want(got.size());
      mismatches bad;
      long long compared = 0;
      for (long long begin = 0; begin < c.ranks; begin += chunk) {
        const int b = static_cast<int>(begin), e = static_cast<int>(std::min<long long>(c.ranks, begin + chunk));
        if (std::string err = evaluate_nvcc(index, b, e, got.data(), on_device); !err.empty())
          return {false, err + " (ranks [" + std::to_string(b) + ", " + std::to_string(e) + "))"};
        if (corrupt && b == 0) got[static_cast<std::size_t>(c.width) - 1] ^= 1;  // the harness must notice
        evaluate_host(index, b, e, want.data());
        for (int r = b; r < e; ++r) {
          const value* g = got.data() + static_cast<long long>(r - b) * c.width;
          const value* w = want.data() + static_cast<long long>(r - b) * c.width;
          for (int s = 0; s < c.width; ++s, ++compared)
            if (g[s] != w[s])
              bad.add("rank " + std::to_string(r) + " " + slot_name(c, s) + " (slot " + std::to_string(s) + "): " +
                      where + " " + std::to_string(g[s]) + ", host " + std::to_string(w[s]));
          // Invariants of the kernel's values alone.
          if (g[c.ndim] != r) bad.add("rank " + std::to_string(r) + ": rank_at(coordinate(r)) = " + std::to_string(g[c.ndim]));
          if (g[c.ndim + 2] < 0) bad.add("rank " + std::to_string(r) + ": not in its own group()");
          for (int j = 0; j < c.names; ++j) {
            const value* n = g + c.names_offset + 7 * j;
            if (n[0] != n[2] || n[5] != n[2] || n[1] != n[4] || n[2] < 0 || n[2] >= n[3])
              bad.add("rank " + std::to_string(r) + " dim #" + std::to_string(j) + ": local_rank " + std::to_string(n[0]) +
                      ", key " + std::to_string(n[2]) + ", index_of " + std::to_string(n[5]) + ", color " +
                      std::to_string(n[1]) + ", front " + std::to_string(n[4]) + ", size " + std::to_string(n[3]));
          }
        }
      }
      char secs[32];
      std::snprintf(secs, sizeof secs, "%.1f s", seconds_since(t0));
      if (!bad.ok()) return {false, c.repr + ": " + bad.text()};
      return {true, c.repr + ": " + std::to_string(c.ranks) + " ranks x " + std::to_string(c.width) + " values = " +
                        std::to_string(compared) + " compared with the host (" + secs + ")"};
    });
  }
}

}  // namespace gpu_check
