// devmesh/core/shared_dims.hpp: views of one world that must agree on the dims they share
// (Megatron's register_view, which asserts that the dense and expert views share pp): two
// meshes over one root, and every dim (or alias) that both name has the same groups. A dim's
// groups over the root are its coalesced layout (layout.hpp: the group key), so the check is a
// comparison of layouts: constexpr, a static_assert for static meshes, a mesh_error naming
// the dim and both layouts at run time.
#pragma once
#include <string>
#include <string_view>

#include "basic_mesh.hpp"
#include "print.hpp"

namespace devmesh {

/// The index in `a` of the first dim (or alias) that `b` names too and whose groups differ
/// between them; -1 when every shared dim agrees; -2 when the meshes are not over roots of the
/// same size (no dim can agree).
template <auto LA, class NA, auto LB, class NB>
constexpr int first_disagreeing_dim(const basic_mesh<LA, NA>& a, const basic_mesh<LB, NB>& b) {
  if (a.root_size() != b.root_size()) return -2;
  for (int i = 0; i < LA.ndims; ++i)
    for (int j = 0; j < LB.ndims; ++j)
      if (NA::views[i] == NB::views[j] && !(a.dim_layout(i).coalesce() == b.dim_layout(j).coalesce())) return i;
  return -1;
}

/// True when every dim both meshes name has the same groups (same members, same order) over
/// roots of one size: `static_assert(dm::shared_dims_agree(dense, expert))` for static meshes.
template <auto LA, class NA, auto LB, class NB>
constexpr bool shared_dims_agree(const basic_mesh<LA, NA>& a, const basic_mesh<LB, NB>& b) {
  return first_disagreeing_dim(a, b) == -1;
}

namespace detail {
/// A dim's groups as CuTe writes a layout, its coalesced modes: "(4:2)", "(2,2):(4,1)".
template <class DimLayout>
std::string groups_text(const DimLayout& l) {
  const auto c = l.coalesce();
  std::string shape, stride;
  for (int k = 0; k < c.count; ++k) {
    shape += (k ? "," : "") + std::to_string(c.shape[k]);
    stride += (k ? "," : "") + std::to_string(c.stride[k]);
  }
  if (c.count == 0) return "(1:0)";
  return c.count == 1 ? "(" + shape + ":" + stride + ")" : "((" + shape + "):(" + stride + "))";
}
}  // namespace detail

/// shared_dims_agree, or a mesh_error naming the first dim that differs and both meshes
/// (host only): Megatron's register_view check, for meshes whose sizes are known at run time.
template <auto LA, class NA, auto LB, class NB>
void check_shared_dims(const basic_mesh<LA, NA>& a, const basic_mesh<LB, NB>& b) {
  const int i = first_disagreeing_dim(a, b);
  if (i == -1) return;
  if (i == -2)
    throw mesh_error("devmesh: check_shared_dims: " + to_string(a) + " and " + to_string(b) +
                     " are not over the same root (" + std::to_string(a.root_size()) + " and " +
                     std::to_string(b.root_size()) + " positions)");
  const std::string_view name = NA::views[i];
  const int j = b.dim_index(name);
  throw mesh_error("devmesh: check_shared_dims: dim '" + std::string(name) + "' has other groups in " + to_string(b) +
                   " (modes " + detail::groups_text(b.dim_layout(j)) + ") than in " + to_string(a) + " (modes " +
                   detail::groups_text(a.dim_layout(i)) +
                   "): views of one world must agree on the dims they share");
}

}  // namespace devmesh
