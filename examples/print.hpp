// examples/print.hpp: lists and per-rank views, printed as the tutorials print them (no MPI, no CUDA).
//
//   examples::list(group)            [0, 4]
//   examples::by_rank(views)         "on ranks 0, 2, 4, 6: ..." once per distinct view
//
// The meshes themselves are drawn by the library: dm::rank_nested(m) ([[0, 2], [4, 6]], as
// PyTorch prints a DeviceMesh's mesh) and dm::rank_grid(m) (the same as a table), for a layout
// and a position, or for a device mesh (devmesh/core/print.hpp).
#pragma once
#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace examples {

/// [a, b, c]
template <class Range>
std::string list(const Range& r) {
  std::ostringstream os;
  os << '[';
  bool first = true;
  for (const auto& x : r) os << (first ? "" : ", ") << x, first = false;
  os << ']';
  return os.str();
}

/// "0, 2, 4, 6"
inline std::string rank_list(const std::vector<int>& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

/// views[r] is what rank r sees; each distinct view once, in order of first appearance,
/// after the ranks that see it: "<prefix>on ranks 0, 2, 4, 6: <view>". A view of several
/// lines (ending in a newline, e.g. a grid) goes below, each line indented by prefix + 2.
inline std::string by_rank(const std::vector<std::string>& views, const std::string& prefix = "") {
  std::vector<std::string> seen;
  std::vector<std::vector<int>> who;
  for (std::size_t r = 0; r < views.size(); ++r) {
    const auto it = std::find(seen.begin(), seen.end(), views[r]);
    if (it == seen.end()) {
      seen.push_back(views[r]);
      who.push_back({static_cast<int>(r)});
    } else {
      who[static_cast<std::size_t>(it - seen.begin())].push_back(static_cast<int>(r));
    }
  }
  std::string out;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    const bool block = !seen[i].empty() && seen[i].back() == '\n';
    out += prefix + (who[i].size() == 1 ? "on rank " : "on ranks ") + rank_list(who[i]) + (block ? ":\n" : ": ");
    if (!block) {
      out += seen[i] + "\n";
      continue;
    }
    std::istringstream lines(seen[i]);
    for (std::string line; std::getline(lines, line);) out += prefix + "  " + line + "\n";
  }
  return out;
}

}  // namespace examples
