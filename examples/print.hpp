// examples/print.hpp: meshes drawn as the tutorials draw them (no MPI, no CUDA).
//
//   examples::list(group)            [0, 4]
//   examples::nested(layout, r)      [[0, 2], [4, 6]]   the submesh that contains rank r, as
//                                                       PyTorch prints a DeviceMesh's mesh
//   examples::grid(layout, r)        the same as a table, one row per index of the
//                                    next-to-last dim, one column per index of the last:
//                                                   shard=0  shard=1
//                                      replicate=0        0        2
//                                      replicate=1        4        6
//   examples::by_rank(views)         "on ranks 0, 2, 4, 6: ..." once per distinct view
//
// A layout is a devmesh mesh value (dm::mesh<...>{}, a slice of it, or device_mesh::layout()).
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

/// The ranks of the submesh of `m` that contains rank `member`, row-major.
template <class Layout>
std::vector<int> ranks_of(const Layout& m, int member) {
  const auto g = m.group(member);
  return std::vector<int>(g.begin(), g.end());
}

/// The submesh of `m` that contains rank `member`, nested by dim: [[0, 2], [4, 6]].
template <class Layout>
std::string nested(const Layout& m, int member) {
  const std::vector<int> ranks = ranks_of(m, member);
  std::string out;
  // Walks the ranks row-major, opening a bracket for every dim whose index restarts.
  std::vector<int> index(static_cast<std::size_t>(Layout::ndim), 0);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    int opening = 0;
    for (int d = Layout::ndim - 1; d >= 0 && index[static_cast<std::size_t>(d)] == 0; --d) ++opening;
    if (i > 0) out += ", ";
    out += std::string(static_cast<std::size_t>(opening), '[') + std::to_string(ranks[i]);
    int closing = 0;
    for (int d = Layout::ndim - 1; d >= 0; --d) {
      auto& k = index[static_cast<std::size_t>(d)];
      if (++k < m.size(d)) break;
      k = 0;
      ++closing;
    }
    out += std::string(static_cast<std::size_t>(closing), ']');
  }
  return out;
}

/// The submesh of `m` that contains rank `member` as a table of ranks: rows are the indices
/// of the next-to-last dim, columns those of the last (a 1-D mesh is one row; a 3-D mesh is
/// one table per index of its first dim). Every line starts with `indent`.
template <class Layout>
std::string grid(const Layout& m, int member, const std::string& indent = "") {
  constexpr int nd = Layout::ndim;
  const std::vector<int> ranks = ranks_of(m, member);
  const int cols = m.size(nd - 1), rows = nd >= 2 ? m.size(nd - 2) : 1;
  const int tables = static_cast<int>(ranks.size()) / (cols * rows);
  auto label = [&](int d, int i) { return std::string(Layout::name(d)) + "=" + std::to_string(i); };
  std::size_t row_w = 0, col_w = 0;
  for (int i = 0; i < rows && nd >= 2; ++i) row_w = std::max(row_w, label(nd - 2, i).size());
  for (int j = 0; j < cols; ++j) col_w = std::max(col_w, label(nd - 1, j).size());
  for (int r : ranks) col_w = std::max(col_w, std::to_string(r).size());
  auto pad = [](const std::string& s, std::size_t w) { return std::string(w - std::min(w, s.size()), ' ') + s; };
  std::ostringstream os;
  for (int t = 0; t < tables; ++t) {
    if (nd >= 3) {  // the leading dims' indices of this table
      os << indent;
      int rest = t;
      std::vector<std::string> parts(static_cast<std::size_t>(nd - 2));
      for (int d = nd - 3; d >= 0; --d) parts[static_cast<std::size_t>(d)] = label(d, rest % m.size(d)), rest /= m.size(d);
      for (std::size_t k = 0; k < parts.size(); ++k) os << (k ? ", " : "") << parts[k];
      os << ":\n";
    }
    os << indent << std::string(row_w, ' ');
    for (int j = 0; j < cols; ++j) os << "  " << pad(label(nd - 1, j), col_w);
    os << '\n';
    for (int i = 0; i < rows; ++i) {
      os << indent << (nd >= 2 ? pad(label(nd - 2, i), row_w) : std::string());
      for (int j = 0; j < cols; ++j)
        os << "  " << pad(std::to_string(ranks[static_cast<std::size_t>((t * rows + i) * cols + j)]), col_w);
      os << '\n';
    }
  }
  return os.str();
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
