// devmesh/core/impl/print.ipp: print.hpp's untyped definitions (compiled once, in the runtime's
// library, or inline in header-only mode: core/config.hpp).
#pragma once
#include <span>
#include <string>
#include <string_view>

#include "../print.hpp"

namespace devmesh::detail {

/// Ascending ranks as ranges, "0-2,4,6-7": how every message and table names rank sets.
DEVMESH_DECL std::string rank_ranges(std::span<const int> ranks) {
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
/// Dim d as "dp=2" (`with_stride` false) or as its stride, "4" or "(4, 1)" for a flattened dim.
DEVMESH_DECL void write_dim(std::string& s, const layout_values& v, int d, bool with_stride) {
  if (!with_stride) {
    long long size = 1;
    for (int m = v.first[d]; m < v.first[d + 1]; ++m) size *= v.shape[m];
    s += v.names[d];
    s += '=';
    s += std::to_string(size);
    return;
  }
  // The strides of the modes with digits (size-1 modes only hold a place, e.g. the room of a
  // dim cut at run time); a dim with none shows its first mode's stride.
  int count = 0, shown = v.first[d];
  for (int m = v.first[d]; m < v.first[d + 1]; ++m)
    if (v.shape[m] != 1 && count++ == 0) shown = m;
  if (count == 0) {
    s += v.first[d + 1] > v.first[d] ? std::to_string(v.stride[shown]) : std::string("1");
    return;
  }
  if (count > 1) s += '(';
  for (int m = v.first[d], k = 0; m < v.first[d + 1]; ++m) {
    if (v.shape[m] == 1) continue;
    if (k++) s += ", ";
    s += std::to_string(v.stride[m]);
  }
  if (count > 1) s += ')';
}

/// The repr of a layout given as values (to_string's text).
DEVMESH_DECL std::string layout_string(const layout_values& v) {
  std::string s = "mesh((";
  for (int d = 0; d < v.ndim; ++d) {
    if (d) s += ", ";
    write_dim(s, v, d, false);
  }
  s += v.ndim == 1 ? ",), stride=(" : "), stride=(";
  for (int d = 0; d < v.ndim; ++d) {
    if (d) s += ", ";
    write_dim(s, v, d, true);
  }
  s += v.ndim == 1 ? ",)" : ")";
  if (v.ndims > v.ndim) {
    s += ", aliases=(";
    for (int d = v.ndim; d < v.ndims; ++d) {
      if (d > v.ndim) s += ", ";
      write_dim(s, v, d, false);
    }
    s += ')';
  }
  return s + ')';
}

DEVMESH_DECL std::string nested_text(const rank_block& b) {
  std::string s;
  for (std::size_t i = 0; i < b.count; ++i) {
    if (i) s += ", ";
    s.append(static_cast<std::size_t>(b.dims_turning(i, false)), '[');
    s += std::to_string(b.rank(i));
    s.append(static_cast<std::size_t>(b.dims_turning(i, true)), ']');
  }
  return s;
}

/// s, right-aligned in width w.
DEVMESH_DECL void append_padded(std::string& out, const std::string& s, std::size_t w) {
  out.append(w > s.size() ? w - s.size() : 0, ' ');
  out += s;
}
DEVMESH_DECL void widen(std::size_t& w, std::size_t n) { w = n > w ? n : w; }

DEVMESH_DECL std::string grid_text(const rank_block& b, std::string_view indent) {
  const int nd = b.ndim, cols = b.sizes[nd - 1], rows = nd >= 2 ? b.sizes[nd - 2] : 1;
  const int tables = static_cast<int>(b.count) / (cols * rows);
  std::size_t row_w = 0, col_w = 0;
  for (int i = 0; i < rows && nd >= 2; ++i) widen(row_w, b.label(nd - 2, i).size());
  for (int j = 0; j < cols; ++j) widen(col_w, b.label(nd - 1, j).size());
  for (std::size_t i = 0; i < b.count; ++i) widen(col_w, std::to_string(b.rank(i)).size());
  std::string s;
  for (int t = 0; t < tables; ++t) {
    for (int d = 0, inner = tables; d < nd - 2; ++d) {  // this table's leading indices
      inner /= b.sizes[d];
      s += d ? std::string_view(", ") : indent;
      s += b.label(d, t / inner % b.sizes[d]);
      if (d == nd - 3) s += ":\n";
    }
    s.append(indent).append(row_w, ' ');
    for (int j = 0; j < cols; ++j) append_padded(s += "  ", b.label(nd - 1, j), col_w);
    s += '\n';
    for (int i = 0; i < rows; ++i) {
      s += indent;
      append_padded(s, nd >= 2 ? b.label(nd - 2, i) : std::string(), row_w);
      for (int j = 0; j < cols; ++j)
        append_padded(s += "  ", std::to_string(b.rank(static_cast<std::size_t>((t * rows + i) * cols + j))), col_w);
      s += '\n';
    }
  }
  return s;
}

}  // namespace devmesh::detail
