// devmesh/runtime/impl/flight_recorder.ipp: flight_recorder.hpp's definitions (compiled once, or
// inline in header-only mode: core/config.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "../../core/diagnostics.hpp"
#include "../flight_recorder.hpp"
#include "recorder.hpp"

namespace devmesh {
namespace detail {

DEVMESH_DECL void flight_recorder::resize(std::size_t capacity) {
  std::size_t n = capacity ? 1 : 0;
  while (n && n < capacity) n *= 2;
  capacity_ = n;
  ring_ = n ? std::make_unique<flight_entry[]>(n) : nullptr;
}

DEVMESH_DECL std::vector<flight_entry> flight_recorder::entries() const {
  std::vector<flight_entry> out;
  const std::uint64_t n = next_.load(std::memory_order_relaxed);
  const std::int64_t ticks_now = ticks(), ns_now = steady_ns();
  for (std::uint64_t id = n > capacity_ ? n - capacity_ + 1 : 1; capacity_ && id <= n; ++id) {
    flight_entry e = ring_[(id - 1) & (capacity_ - 1)];
    if (e.id != id) continue;
    e.start_ns = clock_.to_ns(e.start_ns, ticks_now, ns_now);
    if (e.end_ns) e.end_ns = clock_.to_ns(e.end_ns, ticks_now, ns_now);
    out.push_back(e);
  }
  return out;
}

DEVMESH_DECL std::size_t count_from_env(const char* var, std::size_t fallback) {
  const char* v = std::getenv(var);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (end == v || *end != '\0' || *v == '-' || n > (1ull << 24))
    throw mesh_error(std::string("devmesh: ") + var + "='" + v + "' is not a whole number in [0, 16777216]");
  return static_cast<std::size_t>(n);
}

}  // namespace detail

DEVMESH_DECL std::string to_string(const flight_record& r) {
  const auto put = [](std::string& s, auto... parts) { ((s += parts, s += ' '), ...), s.back() = '\n'; };
  using std::to_string;
  std::string s = "devmesh-flight-record 1\n";
  put(s, "rank", to_string(r.rank), "recorded", to_string(r.recorded), "now", to_string(r.steady_now_ns));
  put(s, "mesh", r.mesh);
  for (const auto& c : r.channels) {
    std::string ranks;
    for (std::size_t i = 0; i < c.world_ranks.size(); ++i) (ranks += i ? "," : "") += to_string(c.world_ranks[i]);
    put(s, "channel", c.name, to_string(c.calls), ranks);
  }
  for (const auto& e : r.entries)
    put(s, "entry", to_string(e.id), e.on ? e.on->name : std::string("?"), to_string(e.seq), std::string(e.what),
        state_name(e.state), to_string(e.count), to_string(e.start_ns), to_string(e.end_ns),
        e.type.empty() ? std::string("-") : std::string(e.type));
  return s;
}

namespace detail {

DEVMESH_DECL std::string write_flight_record(const flight_record& r, const std::string& dir, int mesh_index) noexcept {
  try {
    const std::string path =
        dir + "/devmesh-fr.mesh" + std::to_string(mesh_index) + ".rank" + std::to_string(r.rank) + ".txt";
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) return {};
    const std::string text = to_string(r);
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    return std::fclose(f) == 0 && ok ? path : std::string();
  } catch (...) {
    return {};
  }
}

}  // namespace detail
}  // namespace devmesh
