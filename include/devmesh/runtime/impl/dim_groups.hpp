// devmesh/runtime/impl/dim_groups.hpp: the groups of a dim, or of several dims flattened, read
// from a layout as plain data (layout_view): what creating, adopting and looking up a dim's
// communicator need, the same answers the core's typed queries give (dim_layout, comm_split).
#pragma once
#include <string>
#include <vector>

#include "../../core/group.hpp"
#include "../../core/layout.hpp"
#include "../comm_entry.hpp"
#include "../../core/print.hpp"
#include "../layout_view.hpp"

namespace devmesh::detail {

/// One dim's groups (or several dims' flattened): their name and the modes a group walks, in
/// its order (the dim's dim_layout).
struct dim_groups {
  std::string name;
  coalesced_layout modes{};

  /// Ranks in each group.
  int size() const { return modes.size(); }
  /// The groups' key in the communicator cache (the coalesced layout).
  group_key key() const { return modes.coalesce(); }
  /// (first position of p's group, p's index in it): the core's comm_split.
  split_args split(int p) const {
    int i = 0, offset = 0;
    for (int k = 0; k < modes.count; ++k) {
      const int digit = (p / modes.stride[k]) % modes.shape[k];
      i = i * modes.shape[k] + digit;
      offset += digit * modes.stride[k];
    }
    return {p - offset, i};
  }
  /// The positions of p's group, in the group's order.
  std::vector<int> members(int p) const {
    const int first = split(p).color;
    std::vector<int> out;
    for (int i = 0; i < size(); ++i) out.push_back(modes.at(first, i));
    return out;
  }
  /// Appends mode (shape : stride) to the group's modes.
  void add_mode(int shape, int stride) {
    if (modes.count == 30) fail_coalesce_capacity();
    modes.shape[modes.count] = shape, modes.stride[modes.count] = stride, ++modes.count;
  }
};

/// Dim d of v, a layout as the repr's values (aliases too).
inline dim_groups groups_of(const layout_values& v, int d) {
  dim_groups g{std::string(v.names[d]), {}};
  for (int m = v.first[d]; m < v.first[d + 1]; ++m) g.add_mode(v.shape[m], v.stride[m]);
  return g;
}

/// Dim d of v (aliases too).
inline dim_groups groups_of(const layout_view& v, int d) {
  dim_groups g{v.names[static_cast<std::size_t>(d)], {}};
  for (int m = v.first[static_cast<std::size_t>(d)]; m < v.first[static_cast<std::size_t>(d) + 1]; ++m)
    g.add_mode(v.shape[static_cast<std::size_t>(m)], v.stride[static_cast<std::size_t>(m)]);
  return g;
}

/// The mesh's own dims whose bits are set in `dims` (bit d: dim d), flattened in mesh order,
/// under PyTorch's default flatten name (their names joined by '_').
inline dim_groups groups_of_dims(const layout_view& v, unsigned dims) {
  dim_groups g;
  for (int d = 0; d < v.ndim; ++d) {
    if (!((dims >> d) & 1u)) continue;
    (g.name += g.name.empty() ? "" : "_") += v.names[static_cast<std::size_t>(d)];
    for (int m = v.first[static_cast<std::size_t>(d)]; m < v.first[static_cast<std::size_t>(d) + 1]; ++m)
      g.add_mode(v.shape[static_cast<std::size_t>(m)], v.stride[static_cast<std::size_t>(m)]);
  }
  return g;
}

/// Every dim of v, aliases included, in order.
inline std::vector<dim_groups> all_dim_groups(const layout_view& v) {
  std::vector<dim_groups> out;
  for (int d = 0; d < v.dims(); ++d) out.push_back(groups_of(v, d));
  return out;
}

}  // namespace devmesh::detail
