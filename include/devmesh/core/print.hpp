// devmesh/core/print.hpp: PyTorch-like repr and rank tables (host only).
//   std::cout << m;        mesh((dp=2, cp=2, tp=2), stride=(4, 2, 1))
//   rank_table(m)          the row-major rank table, one row per rank, as a Markdown table
//   group_table<"tp">(m)   every group of dim tp (all_groups, group_list.hpp), as text
#pragma once
#include <iosfwd>
#include <span>
#include <string>
#include <utility>

#include "group_list.hpp"
#include "mesh.hpp"

// No <ostream> or <sstream> here: the text is built as a std::string, and operator<< is a
// template over the stream type, so it needs the stream only where a user streams a mesh
// (and has included <ostream>). That keeps iostreams out of every other TU's compile time.

namespace devmesh {

namespace detail {
/// Ascending ranks as ranges, "0-2,4,6-7": how every message and table names rank sets. A
/// template only so that TUs that never print compile none of it (parse.hpp says why).
template <class = void>
std::string rank_ranges(std::span<const int> ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ranks[i]);
    if (j > i) out += '-' + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}
template <auto L, class Names>
void write_dim(std::string& s, const basic_mesh<L, Names>& m, int d, bool with_stride) {
  using M = basic_mesh<L, Names>;
  if (!with_stride) {
    s += M::name(d);
    s += '=';
    s += std::to_string(m.dim_size(d));
    return;
  }
  const auto layout = m.dim_layout(d);
  if (layout.count == 0) {  // a size-1 dim with no digit of its own (from an unflatten)
    s += '1';
    return;
  }
  if (layout.count > 1) s += '(';
  for (int i = 0; i < layout.count; ++i) {
    if (i) s += ", ";
    s += std::to_string(layout.stride[i]);
  }
  if (layout.count > 1) s += ')';
}
}  // namespace detail

/// The mesh's repr: mesh((dp=2, cp=2, tp=2), stride=(4, 2, 1)); a flattened dim's stride
/// lists its parts, aliases follow: mesh((dp=2, cp=2, tp=2), stride=(4, 2, 1), aliases=(dp_cp=4))
template <auto L, class Names>
std::string to_string(const basic_mesh<L, Names>& m) {
  using M = basic_mesh<L, Names>;
  std::string s = "mesh((";
  for (int d = 0; d < M::ndim; ++d) {
    if (d) s += ", ";
    detail::write_dim(s, m, d, false);
  }
  s += M::ndim == 1 ? ",), stride=(" : "), stride=(";
  for (int d = 0; d < M::ndim; ++d) {
    if (d) s += ", ";
    detail::write_dim(s, m, d, true);
  }
  s += M::ndim == 1 ? ",)" : ")";
  if (M::ndim_with_aliases > M::ndim) {
    s += ", aliases=(";
    for (int d = M::ndim; d < M::ndim_with_aliases; ++d) {
      if (d > M::ndim) s += ", ";
      detail::write_dim(s, m, d, false);
    }
    s += ')';
  }
  s += ')';
  return s;
}

/// Streams the mesh's repr (to_string(m)).
template <class Char, class Traits, auto L, class Names>
std::basic_ostream<Char, Traits>& operator<<(std::basic_ostream<Char, Traits>& os, const basic_mesh<L, Names>& m) {
  return os << to_string(m);
}

/// The rank table of the (sub)mesh containing position `member`: one row per position in
/// row-major order, one column per dim, then the position (headed "global rank", as in the
/// reference notes: without a rank map, the runtime's, a position is the world rank).
template <auto L, class Names>
std::string rank_table(const basic_mesh<L, Names>& m, int member = 0) {
  using M = basic_mesh<L, Names>;
  std::string s = "|";
  for (int d = 0; d < M::ndim; ++d) {
    s += ' ';
    s += M::name(d);
    s += " (dim ";
    s += std::to_string(d);
    s += ") |";
  }
  s += " global rank |\n|";
  for (int d = 0; d <= M::ndim; ++d) s += " --- |";
  s += '\n';
  for (int r : m.group(member)) {
    const auto c = m.coordinate(r);
    s += '|';
    for (int d = 0; d < M::ndim; ++d) {
      s += ' ';
      s += std::to_string(c[d]);
      s += " |";
    }
    s += ' ';
    s += std::to_string(r);
    s += " |\n";
  }
  return s;
}

/// all_groups as text: "tp: [0, 1, 2, 3] [4, 5, 6, 7]".
template <fixed_string... Ns, auto L, class Names>
std::string group_table(const basic_mesh<L, Names>& m, int member = 0) {
  std::string s;
  ((s += s.empty() ? "" : "+", s += Ns.view()), ...);
  s += ':';
  for (const auto& g : all_groups<Ns...>(m, member)) {
    s += " [";
    for (int i = 0; i < g.size(); ++i) {
      if (i) s += ", ";
      s += std::to_string(g[i]);
    }
    s += ']';
  }
  return s;
}

}  // namespace devmesh
