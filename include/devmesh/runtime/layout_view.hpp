// devmesh/runtime/layout_view.hpp: a mesh's layout as plain run-time data: its names and
// every dim's modes (shape : stride) with the values resolved. The core's layout, read by the
// parts of the runtime that run once per init and need no type (the consistency digest,
// topology, the root a derived mesh came from), so that they are ordinary functions and a
// mesh type instantiates only view_of. Compiled once (runtime/impl/layout_view.ipp).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "../core/config.hpp"
#include "../core/diagnostics.hpp"

namespace devmesh::detail {

/// The layout of a mesh, values resolved: the same modes, dims and names as its type says.
struct layout_view {
  int root_size = 0;
  int ndim = 0;                    ///< the mesh's own dims; aliases come after them
  std::vector<std::string> names;  ///< every dim's name, aliases included
  std::vector<int> first;          ///< dim d's modes are [first[d], first[d + 1])
  std::vector<int> shape;          ///< every mode's shape, dims in order
  std::vector<int> stride;         ///< every mode's stride in the root's rank space

  /// Number of dims, aliases included.
  int dims() const { return static_cast<int>(names.size()); }
  /// Dim d's size: the product of its shapes.
  int size(int d) const {
    int n = 1;
    for (int m = first[static_cast<std::size_t>(d)]; m < first[static_cast<std::size_t>(d) + 1]; ++m)
      n *= shape[static_cast<std::size_t>(m)];
    return n;
  }
};

/// m as a layout_view.
template <class Mesh>
layout_view view_of(const Mesh& m) {
  layout_view v;
  v.root_size = m.root_size();
  v.ndim = Mesh::ndim;
  v.first.push_back(0);
  for (int d = 0; d < Mesh::ndim_with_aliases; ++d) {
    v.names.emplace_back(Mesh::name(d));
    const auto l = m.dim_layout(d);
    for (int i = 0; i < l.count; ++i) {
      v.shape.push_back(l.shape[i]);
      v.stride.push_back(l.stride[i]);
    }
    v.first.push_back(static_cast<int>(v.shape.size()));
  }
  return v;
}

/// A set of modes of one mesh, distinct digit groups of its root's positions (two modes of
/// one mesh are the same digits or disjoint), most significant first: the groups of one dim,
/// or the positions several dims keep together.
struct mode_set {
  std::vector<int> shape;
  std::vector<int> stride;

  /// Number of positions a group over these modes holds.
  int size() const {
    int n = 1;
    for (int s : shape) n *= s;
    return n;
  }
  /// The first position of p's group: p with its digits in these modes zeroed.
  int base(int p) const {
    for (std::size_t i = 0; i < shape.size(); ++i) p -= (p / stride[i]) % shape[i] * stride[i];
    return p;
  }
  /// The i-th position of a group, counted from its first (i read row-major over the modes).
  int offset(int i) const {
    int off = 0;
    for (std::size_t k = shape.size(); k-- > 0;) {
      off += (i % shape[k]) * stride[k];
      i /= shape[k];
    }
    return off;
  }
};

/// The modes of dims `dims` of v, each distinct digit group once (size-1 modes have no
/// digits), most significant first when `sorted` (a block's positions then come in
/// ascending order), else in the dims' order (a dim's group order).
DEVMESH_DECL mode_set modes_of(const layout_view& v, const std::vector<int>& dims, bool sorted);

/// The view's repr, as to_string(mesh) prints the mesh it was made from (one printer: the
/// core's layout_string).
DEVMESH_DECL std::string to_string(const layout_view& v);

/// The mesh of type M that view v describes (the runtime keeps its root as a view): the same
/// names and structure, its values checked against M's static ones as an explicit conversion
/// checks them. Anything else throws mesh_error, `what` and the view's text first.
template <class M>
M mesh_of_view(const layout_view& v, const std::string& what) {
  bool same = v.ndim == M::ndim && v.dims() == M::ndim_with_aliases;
  for (int d = 0; same && d < v.dims(); ++d)
    same = M::name(d) == v.names[static_cast<std::size_t>(d)] &&
           M::layout.first[d + 1] == v.first[static_cast<std::size_t>(d) + 1];
  if (!same) throw mesh_error(what + to_string(v) + ", of another type (other dims or modes)");
  try {
    return M(M::from_values(v.shape.data(), v.stride.data(), v.root_size));
  } catch (const mesh_error& e) {
    throw mesh_error(what + to_string(v) + ", and " + e.what());
  }
}

}  // namespace devmesh::detail

#if DEVMESH_HEADER_ONLY
#include "impl/layout_view.ipp"
#endif
