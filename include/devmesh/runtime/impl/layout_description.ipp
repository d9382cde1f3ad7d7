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

DEVMESH_DECL layout_description describe_layout(const layout_ref& m) {
  const layout_values& v = m.values;
  layout_description d;
  layout_view& view = d.view;
  view.root_size = m.root_size;
  view.ndim = v.ndim;
  for (int i = 0; i <= v.ndims; ++i) view.first.push_back(v.first[i]);
  for (int i = 0; i < v.ndims; ++i) view.names.emplace_back(v.names[i]);
  for (int k = 0; k < v.first[v.ndims]; ++k) view.shape.push_back(v.shape[k]), view.stride.push_back(v.stride[k]);
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
  append_ints(d.payload, m.type_shape.data(), m.type_shape.size());
  append_ints(d.payload, m.type_stride.data(), m.type_stride.size());
  return d;
}

DEVMESH_DECL std::string dim_where(const layout_values& v, int d) {
  return "dim '" + std::string(v.names[d]) + "' of " + layout_string(v);
}

DEVMESH_DECL void throw_moved_from(const char* what, const layout_values& v) {
  throw mesh_error("devmesh: " + std::string(what) + ": this device_mesh was moved from: it keeps its layout, " +
                   layout_string(v) + ", and no communicators; assign a mesh to it before using it");
}

DEVMESH_DECL void throw_not_member(const char* what, const layout_values& v, int d, const rank_placement& at) {
  throw mesh_error("devmesh: " + std::string(what) + " on " + dim_where(v, d) + ": world rank " +
                   std::to_string(at.world_rank) + " is not a member of this mesh (" + at.members_phrase() + ")");
}

}  // namespace devmesh::detail
