// devmesh/runtime/impl/layout_description.ipp: mesh_runtime.hpp's untyped definitions (compiled
// once, in the runtime's library, or inline in header-only mode: core/config.hpp).
#pragma once
#include <span>
#include <string>

#include "../mesh_runtime.hpp"

namespace devmesh::detail {

/// Appends n ints to `out` as bytes (the payload is compared between ranks of one program's
/// builds, so the native byte order is the same everywhere).
DEVMESH_DECL void append_ints(std::string& out, const int* v, std::size_t n) {
  out.append(reinterpret_cast<const char*>(v), n * sizeof(int));
}

DEVMESH_DECL layout_description describe_values(const layout_values& v, int root_size,
                                                std::span<const int> type_shape, std::span<const int> type_stride) {
  layout_description d;
  layout_view& view = d.view;
  view.root_size = root_size;
  view.ndim = v.ndim;
  for (int i = 0; i <= v.ndims; ++i) view.first.push_back(v.first[i]);
  for (int i = 0; i < v.ndims; ++i) view.names.emplace_back(v.names[i]);
  for (int m = 0; m < v.first[v.ndims]; ++m) view.shape.push_back(v.shape[m]), view.stride.push_back(v.stride[m]);
  const int head[] = {view.root_size, view.ndim, view.dims()};
  append_ints(d.payload, head, 3);
  for (const auto& name : view.names) {
    const int n = static_cast<int>(name.size());
    append_ints(d.payload, &n, 1);
    d.payload += name;
  }
  append_ints(d.payload, view.first.data(), view.first.size());
  append_ints(d.payload, view.shape.data(), view.shape.size());
  append_ints(d.payload, view.stride.data(), view.stride.size());
  append_ints(d.payload, type_shape.data(), type_shape.size());
  append_ints(d.payload, type_stride.data(), type_stride.size());
  return d;
}

}  // namespace devmesh::detail
