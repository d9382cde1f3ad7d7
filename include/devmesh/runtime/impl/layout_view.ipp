// devmesh/runtime/impl/layout_view.ipp: layout_view.hpp's definitions (compiled once, or inline
// in header-only mode: core/config.hpp).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../core/print.hpp"
#include "../layout_view.hpp"

namespace devmesh::detail {

DEVMESH_DECL mode_set modes_of(const layout_view& v, const std::vector<int>& dims, bool sorted) {
  mode_set s;
  for (int d : dims)
    for (int m = v.first[static_cast<std::size_t>(d)]; m < v.first[static_cast<std::size_t>(d) + 1]; ++m) {
      const int n = v.shape[static_cast<std::size_t>(m)], st = v.stride[static_cast<std::size_t>(m)];
      bool seen = n == 1;
      for (std::size_t i = 0; i < s.shape.size() && !seen; ++i) seen = s.shape[i] == n && s.stride[i] == st;
      if (seen) continue;
      std::size_t at = s.shape.size();
      while (sorted && at > 0 && s.stride[at - 1] < st) --at;
      s.shape.push_back(n);
      s.stride.push_back(st);
      for (std::size_t i = s.shape.size() - 1; i > at; --i) {  // to index `at`
        std::swap(s.shape[i], s.shape[i - 1]);
        std::swap(s.stride[i], s.stride[i - 1]);
      }
    }
  return s;
}

DEVMESH_DECL std::string to_string(const layout_view& v) {
  std::vector<std::string_view> names;
  for (const auto& n : v.names) names.push_back(n);
  return layout_string({names.data(), v.first.data(), v.shape.data(), v.stride.data(), v.ndim, v.dims()});
}

}  // namespace devmesh::detail
