// devmesh/core/print.hpp: PyTorch-like repr and rank tables (host only).
//   std::cout << m;        mesh((dp=2, cp=2, tp=2), stride=(4, 2, 1))
//   rank_table(m)          the row-major rank table, one row per rank, as a Markdown table
//   group_table<"tp">(m)   every group of dim tp (all_groups, group_list.hpp), as text
//   rank_nested(m)         [[0, 1, 2, 3], [4, 5, 6, 7]]: the (sub)mesh's ranks nested by dim,
//                          as PyTorch prints a DeviceMesh's mesh tensor
//   rank_grid(m)           the same as a table: rows the next-to-last dim, columns the last
//                                        shard=0  shard=1  shard=2  shard=3
//                          replicate=0        0        1        2        3
//                          replicate=1        4        5        6        7
// (device_mesh has both too, over world ranks: runtime/device_mesh.hpp.)
#pragma once
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "config.hpp"
#include "group_list.hpp"
#include "mesh.hpp"

// No <ostream> or <sstream> here: the text is built as a std::string, and operator<< is a
// template over the stream type, so it needs the stream only where a user streams a mesh
// (and has included <ostream>). That keeps iostreams out of every other TU's compile time.

namespace devmesh {

namespace detail {
/// Ascending ranks as ranges, "0-2,4,6-7": how every message and table names rank sets.
DEVMESH_DECL std::string rank_ranges(std::span<const int> ranks);
/// A mesh's layout as plain values: every dim's name (aliases after the mesh's own ndim
/// dims) and modes [first[d], first[d + 1]) with their shapes and strides resolved. What the
/// repr reads, so that it is one ordinary function: a mesh type only gathers its values, and
/// the runtime prints a layout it holds without its type (runtime/layout_view.hpp).
struct layout_values {
  const std::string_view* names;
  const int* first;
  const int* shape;
  const int* stride;
  int ndim;
  int ndims;
};

/// Dim d as "dp=2" (`with_stride` false) or as its stride, "4" or "(4, 1)" for a flattened dim.
DEVMESH_DECL void write_dim(std::string& s, const layout_values& v, int d, bool with_stride);

/// The repr of a layout given as values (to_string's text).
DEVMESH_DECL std::string layout_string(const layout_values& v);

/// A (sub)mesh's ranks, what rank_nested and rank_grid draw: the ranks in row-major order (the
/// i-th read through `rank_at(ranks, i)`: a rank_group of positions, or a device mesh's world
/// ranks), and each of the ndim dims' name and size (the sizes multiply to `count`).
struct rank_block {
  const void* ranks;
  int (*rank_at)(const void* ranks, std::size_t i);
  std::size_t count;
  const std::string_view* names;
  const int* sizes;
  int ndim;
  int rank(std::size_t i) const { return rank_at(ranks, i); }
  /// How many of the last dims start at row-major index `at` (`end` false) or end there
  /// (`end` true): the brackets opened before, or closed after, that rank in the nested form.
  int dims_turning(std::size_t at, bool end) const {
    int k = 0;
    for (std::size_t d = static_cast<std::size_t>(ndim), span = 1; d-- > 0; ++k) {
      span *= static_cast<std::size_t>(sizes[d]);
      if ((end ? at + 1 : at) % span != 0) break;
    }
    return k;
  }
  /// "name=i".
  std::string label(int d, int i) const { return std::string(names[d]) + '=' + std::to_string(i); }
};

/// The block nested by dim: "[[0, 1, 2, 3], [4, 5, 6, 7]]".
DEVMESH_DECL std::string nested_text(const rank_block& b);

/// One table per index of the leading dims (their "dp=0, cp=1:" heading first, 3-D and up),
/// rows the next-to-last dim, columns the last; a 1-D mesh is one row without a label.
DEVMESH_DECL std::string grid_text(const rank_block& b, std::string_view indent);

/// draw(the rank_block of mesh m over `ranks`, its group's ranks row-major: any range with
/// size() and []).
template <class M, class Ranks, class Draw>
std::string draw_ranks(const M& m, const Ranks& ranks, Draw draw) {
  int sizes[M::ndim > 0 ? M::ndim : 1]{};
  for (int d = 0; d < M::ndim; ++d) sizes[d] = m.size(d);
  const auto at = [](const void* r, std::size_t i) {
    const Ranks& rs = *static_cast<const Ranks*>(r);
    return static_cast<int>(rs[static_cast<decltype(rs.size())>(i)]);
  };
  return draw(rank_block{&ranks, at, static_cast<std::size_t>(ranks.size()), M::names_type::views, sizes, M::ndim});
}
}  // namespace detail

/// The mesh's repr: mesh((dp=2, cp=2, tp=2), stride=(4, 2, 1)); a flattened dim's stride
/// lists its parts, aliases follow: mesh((dp=2, cp=2, tp=2), stride=(4, 2, 1), aliases=(dp_cp=4))
template <auto L, class Names>
std::string to_string(const basic_mesh<L, Names>& m) {
  int shape[L.nmodes > 0 ? L.nmodes : 1]{}, stride[L.nmodes > 0 ? L.nmodes : 1]{};
  for (int i = 0; i < L.nmodes; ++i) shape[i] = m.mode_shape(i), stride[i] = m.mode_stride(i);
  const detail::layout_values v{Names::views, L.first, shape, stride, L.nprimary, L.ndims};  // named: nvcc 13
  return detail::layout_string(v);
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

namespace detail {
/// Groups as text: "tp: [0, 1, 2, 3] [4, 5, 6, 7]" (`label`: the dims' names joined by '+').
template <class Groups>
std::string groups_text(std::string s, const Groups& groups) {
  s += ':';
  for (const auto& g : groups) {
    s += " [";
    for (int i = 0; i < g.size(); ++i) {
      if (i) s += ", ";
      s += std::to_string(g[i]);
    }
    s += ']';
  }
  return s;
}
template <fixed_string... Ns>
std::string joined_labels() {
  std::string s;
  ((s += s.empty() ? "" : "+", s += Ns.view()), ...);
  return s;
}
}  // namespace detail

/// all_groups as text: "tp: [0, 1, 2, 3] [4, 5, 6, 7]": every group of the dims over the root.
template <fixed_string... Ns, auto L, class Names>
std::string group_table(const basic_mesh<L, Names>& m) {
  return detail::groups_text(detail::joined_labels<Ns...>(), all_groups<Ns...>(m));
}
/// block_groups as text: the groups inside the block of m that holds position `member`.
template <fixed_string... Ns, auto L, class Names>
std::string group_table(const basic_mesh<L, Names>& m, int member) {
  return detail::groups_text(detail::joined_labels<Ns...>(), block_groups<Ns...>(m, member));
}

/// The (sub)mesh containing position `member` as PyTorch prints a DeviceMesh's mesh tensor,
/// nested by dim: "[[0, 1, 2, 3], [4, 5, 6, 7]]" for mesh<dim<"replicate", 2>, dim<"shard", 4>>.
template <auto L, class Names>
std::string rank_nested(const basic_mesh<L, Names>& m, int member = 0) {
  return detail::draw_ranks(m, m.group(member), [](const auto& b) { return detail::nested_text(b); });
}

/// The (sub)mesh containing position `member` as a table of its positions: rows are the
/// indices of the next-to-last dim, columns those of the last (a 1-D mesh is one row; 3-D and
/// up, one table per index of the leading dims, headed "dp=0, cp=1:"). Every line starts with
/// `indent` and ends with a newline.
template <auto L, class Names>
std::string rank_grid(const basic_mesh<L, Names>& m, int member = 0, std::string_view indent = {}) {
  return detail::draw_ranks(m, m.group(member), [indent](const auto& b) { return detail::grid_text(b, indent); });
}

}  // namespace devmesh

#if DEVMESH_HEADER_ONLY
#include "impl/print.ipp"
#endif
