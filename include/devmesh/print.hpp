// devmesh/print.hpp: PyTorch-like repr and rank tables (host only).
//   std::cout << m;        mesh((dp=2, cp=2, tp=2), stride=(4, 2, 1))
//   rank_table(m)          the row-major rank table, one row per rank, as a Markdown table
//   group_table<"tp">(m)   every group of dim tp, one per line
#pragma once
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "mesh.hpp"

namespace devmesh {

namespace detail {
template <auto L, class Names>
void write_dim(std::ostream& os, const basic_mesh<L, Names>& m, int d, bool with_stride) {
  using M = basic_mesh<L, Names>;
  if (!with_stride) {
    os << M::name(d) << '=' << m.dim_size(d);
    return;
  }
  const auto layout = m.dim_layout(d);
  if (layout.count == 0) {  // a size-1 dim with no digit of its own (from an unflatten)
    os << 1;
    return;
  }
  if (layout.count > 1) os << '(';
  for (int i = 0; i < layout.count; ++i) os << (i ? ", " : "") << layout.stride[i];
  if (layout.count > 1) os << ')';
}
}  // namespace detail

/// mesh((dp=2, cp=2, tp=2), stride=(4, 2, 1)); a flattened dim's stride lists its parts,
/// aliases follow: mesh((dp=2, cp=2, tp=2), stride=(4, 2, 1), aliases=(dp_cp=4))
template <auto L, class Names>
std::ostream& operator<<(std::ostream& os, const basic_mesh<L, Names>& m) {
  using M = basic_mesh<L, Names>;
  os << "mesh((";
  for (int d = 0; d < M::ndim; ++d) {
    if (d) os << ", ";
    detail::write_dim(os, m, d, false);
  }
  os << (M::ndim == 1 ? ",), stride=(" : "), stride=(");
  for (int d = 0; d < M::ndim; ++d) {
    if (d) os << ", ";
    detail::write_dim(os, m, d, true);
  }
  os << (M::ndim == 1 ? ",)" : ")");
  if (M::ndim_with_aliases > M::ndim) {
    os << ", aliases=(";
    for (int d = M::ndim; d < M::ndim_with_aliases; ++d) {
      if (d > M::ndim) os << ", ";
      detail::write_dim(os, m, d, false);
    }
    os << ')';
  }
  return os << ')';
}

/// The mesh's repr as a string.
template <auto L, class Names>
std::string to_string(const basic_mesh<L, Names>& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

/// The rank table of the (sub)mesh containing rank `member`: one row per rank in row-major
/// order, one column per dim, then the global rank (as in the reference notes).
template <auto L, class Names>
std::string rank_table(const basic_mesh<L, Names>& m, int member = 0) {
  using M = basic_mesh<L, Names>;
  std::ostringstream os;
  os << '|';
  for (int d = 0; d < M::ndim; ++d) os << ' ' << M::name(d) << " (dim " << d << ") |";
  os << " global rank |\n|";
  for (int d = 0; d <= M::ndim; ++d) os << " --- |";
  os << '\n';
  for (int r : m.group(member)) {
    const auto c = m.coordinate(r);
    os << '|';
    for (int d = 0; d < M::ndim; ++d) os << ' ' << c[d] << " |";
    os << ' ' << r << " |\n";
  }
  return os.str();
}

/// Every group of dims Ns... within the (sub)mesh containing `member`, in order of their
/// first rank: e.g. for tp on a (2, 4) dp/tp mesh, {0,1,2,3} and {4,5,6,7}.
template <fixed_string... Ns, auto L, class Names>
std::vector<std::vector<int>> all_groups(const basic_mesh<L, Names>& m, int member = 0) {
  std::vector<std::vector<int>> out;
  for (int r : m.group(member)) {
    const auto g = m.template group<Ns...>(r);
    if (g.front() != r) continue;  // visit each group once, at its first rank
    out.emplace_back(g.begin(), g.end());
  }
  return out;
}

/// all_groups as text: "tp: [0, 1, 2, 3] [4, 5, 6, 7]".
template <fixed_string... Ns, auto L, class Names>
std::string group_table(const basic_mesh<L, Names>& m, int member = 0) {
  std::ostringstream os;
  const char* sep = "";
  ((os << sep << Ns.view(), sep = "+"), ...);
  os << ':';
  for (const auto& g : all_groups<Ns...>(m, member)) {
    os << " [";
    for (std::size_t i = 0; i < g.size(); ++i) os << (i ? ", " : "") << g[i];
    os << ']';
  }
  return os.str();
}

}  // namespace devmesh
