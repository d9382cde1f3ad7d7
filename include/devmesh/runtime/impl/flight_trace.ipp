// devmesh/runtime/impl/flight_trace.ipp: flight_trace.hpp's definitions (compiled once, or
// inline in header-only mode: core/config.hpp).
#pragma once
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../../core/diagnostics.hpp"
#include "consensus.hpp"
#include "../flight_trace.hpp"

namespace devmesh {

namespace detail {
DEVMESH_DECL std::vector<int> parse_ranks(const std::string& s) {
  std::vector<int> out;
  std::stringstream in(s);
  for (std::string r; std::getline(in, r, ',');)
    if (!r.empty()) out.push_back(std::stoi(r));
  return out;
}
}  // namespace detail

DEVMESH_DECL flight_dump read_flight_dump(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw mesh_error("devmesh: read_flight_dump: cannot open '" + path + "'");
  flight_dump d;
  std::string line;
  int n = 0;
  auto bad = [&] {
    throw mesh_error("devmesh: read_flight_dump: " + path + ":" + std::to_string(n) + ": not a flight record line: '" +
                     line + "'");
  };
  while (std::getline(in, line)) {
    ++n;
    std::istringstream l(line);
    std::string kind;
    l >> kind;
    if (n == 1 && kind != "devmesh-flight-record") bad();
    if (kind == "rank") {
      l >> d.rank;
    } else if (kind == "mesh") {
      d.mesh = line.size() > 5 ? line.substr(5) : "";
    } else if (kind == "channel") {
      flight_dump::channel c;
      std::string ranks;
      if (!(l >> c.name >> c.calls)) bad();
      l >> ranks;
      c.world_ranks = detail::parse_ranks(ranks);
      d.channels.push_back(std::move(c));
    } else if (kind == "entry") {
      flight_dump::entry e;
      if (!(l >> e.id >> e.channel >> e.seq >> e.what >> e.state >> e.count >> e.start_ns >> e.end_ns)) bad();
      std::getline(l >> std::ws, e.type);
      d.entries.push_back(std::move(e));
    } else if (n > 1) {
      bad();
    }
  }
  if (d.rank < 0) throw mesh_error("devmesh: read_flight_dump: " + path + " has no 'rank' line");
  return d;
}

DEVMESH_DECL std::vector<flight_dump> read_flight_dumps(const std::string& dir) {
  std::vector<flight_dump> dumps;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    if (f.path().filename().string().rfind("devmesh-fr.", 0) == 0) dumps.push_back(read_flight_dump(f.path().string()));
  std::stable_sort(dumps.begin(), dumps.end(),
                   [](const flight_dump& a, const flight_dump& b) { return a.rank < b.rank; });
  return dumps;
}

DEVMESH_DECL std::string to_string(const flight_divergence& v) {
  std::string s = "on " + (v.channel == "mesh" ? std::string("the mesh's own steps") : "dim '" + v.channel + "'") +
                  " (world " + detail::ranks_phrase(v.group) + "): call #" + std::to_string(v.seq) + ", " +
                  (v.what.empty() ? std::string("?") : v.what);
  if (!v.issued.empty()) s += ": made by " + detail::ranks_phrase(v.issued);
  if (!v.missing.empty())
    s += (v.issued.empty() ? ": " : ", ") + std::string("never by ") + detail::ranks_phrase(v.missing);
  if (!v.unfinished.empty()) s += "; not completed on " + detail::ranks_phrase(v.unfinished);
  if (!v.no_record.empty()) s += "; no flight record from " + detail::ranks_phrase(v.no_record);
  return s;
}

namespace detail {
DEVMESH_DECL const flight_dump::entry* entry_at(const flight_dump& d, const std::string& channel, std::uint64_t seq) {
  for (const auto& e : d.entries)
    if (e.channel == channel && e.seq == seq) return &e;
  return nullptr;
}
DEVMESH_DECL std::string describe_entry(const flight_dump::entry& e) {
  return e.what + (e.type == "-" ? std::string() : " (" + e.type + " x " + std::to_string(e.count) + ")");
}
/// One group's divergence, if any: the first call number not every member made, or made but
/// did not complete on some.
DEVMESH_DECL std::optional<flight_divergence> group_divergence(const std::vector<flight_dump>& dumps,
                                                               const std::string& channel,
                                                               const std::vector<int>& group) {
  flight_divergence v{channel, group, 0, {}, {}, {}, {}, {}};
  std::map<int, std::uint64_t> calls;
  for (int r : group) {
    auto it = std::find_if(dumps.begin(), dumps.end(), [&](const flight_dump& d) { return d.rank == r; });
    if (it == dumps.end()) { v.no_record.push_back(r); continue; }
    for (const auto& c : it->channels)
      if (c.name == channel && c.world_ranks == group) calls[r] = c.calls;
    if (!calls.count(r)) calls[r] = 0;  // never created or used it
  }
  if (calls.empty()) return std::nullopt;
  std::uint64_t lo = UINT64_MAX, hi = 0;
  for (auto [r, c] : calls) lo = std::min(lo, c), hi = std::max(hi, c);
  v.seq = lo < hi ? lo + 1 : hi;
  for (const auto& rank_calls : calls) {  // not a structured binding: clang 14 cannot capture one
    const int r = rank_calls.first;
    const std::uint64_t c = rank_calls.second;
    const auto& d = *std::find_if(dumps.begin(), dumps.end(), [&](const flight_dump& x) { return x.rank == r; });
    if (c < v.seq) { v.missing.push_back(r); continue; }
    v.issued.push_back(r);
    if (const auto* e = entry_at(d, channel, v.seq)) {
      if (v.what.empty()) v.what = describe_entry(*e);
      if (e->state != "completed" && e->state != "enqueued") v.unfinished.push_back(r);
    }
  }
  if (v.seq == 0 || (v.missing.empty() && v.unfinished.empty() && v.no_record.empty())) return std::nullopt;
  return v;
}
}  // namespace detail

DEVMESH_DECL std::vector<flight_divergence> analyze(const std::vector<flight_dump>& dumps) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (const auto& d : dumps)
    for (const auto& c : d.channels)
      if (std::find(groups.begin(), groups.end(), std::pair{c.name, c.world_ranks}) == groups.end())
        groups.emplace_back(c.name, c.world_ranks);
  std::vector<flight_divergence> out;
  for (const auto& [name, group] : groups)
    if (auto v = detail::group_divergence(dumps, name, group)) out.push_back(std::move(*v));
  return out;
}

}  // namespace devmesh
