// bench/pytorch_plan.hpp: PyTorch DeviceMesh's group planning, written in C++ as the baseline.
//
// PyTorch (device_mesh.py: _init_process_groups, create_sub_mesh, create_flatten_mesh)
// finds a rank's group by materialising the world's rank tensor, permuting the kept dims
// first and the group's dims last, reshaping to (-1, group size), and testing each row
// for `cur_rank in row`. This is that algorithm, made cheaper than the Python in two ways
// that favour the baseline: it stops at the first matching row, and builds no DeviceMesh
// object per row.
#pragma once
#include <algorithm>
#include <numeric>
#include <vector>

namespace bench {

struct pytorch_group {
  std::vector<int> ranks;  // the row that holds the rank: its group, in mesh order
  int color = -1;          // the row's index: one id per group
  int key = -1;            // the rank's position in the row
};

/// The group of `rank` over dims `group_dims` (in that order) of a row-major mesh `shape`.
inline pytorch_group pytorch_plan(const std::vector<int>& shape, const std::vector<int>& group_dims, int rank) {
  const int nd = static_cast<int>(shape.size());
  // torch.arange(world).view(shape): the mesh tensor.
  int world = 1;
  for (int s : shape) world *= s;
  std::vector<int> mesh(static_cast<std::size_t>(world));
  std::iota(mesh.begin(), mesh.end(), 0);

  // permute(*kept, *group_dims): kept dims first, in order, then the group's dims.
  std::vector<int> perm;
  for (int d = 0; d < nd; ++d)
    if (std::find(group_dims.begin(), group_dims.end(), d) == group_dims.end()) perm.push_back(d);
  perm.insert(perm.end(), group_dims.begin(), group_dims.end());
  std::vector<long> stride(static_cast<std::size_t>(nd));
  for (long s = 1, d = nd - 1; d >= 0; --d) stride[d] = s, s *= shape[d];

  // reshape(-1, group size) of a permuted view copies: walk the permuted shape row-major
  // (an odometer over its coordinates) and gather from the source offsets.
  std::vector<int> permuted(static_cast<std::size_t>(world));
  std::vector<int> coord(static_cast<std::size_t>(nd), 0);
  long src = 0;
  for (int i = 0; i < world; ++i) {
    permuted[i] = mesh[src];
    for (int j = nd - 1; j >= 0; --j) {
      const int d = perm[j];
      src += stride[d];
      if (++coord[j] < shape[d]) break;
      src -= stride[d] * shape[d];
      coord[j] = 0;
    }
  }
  int group_size = 1;
  for (int d : group_dims) group_size *= shape[d];

  // for row in pg_ranks_by_dim: if cur_rank in row: ...
  pytorch_group out;
  for (int row = 0; row < world / group_size; ++row) {
    const int* first = permuted.data() + static_cast<long>(row) * group_size;
    const int* hit = std::find(first, first + group_size, rank);
    if (hit != first + group_size) {
      out.ranks.assign(first, first + group_size);  // row.tolist()
      out.color = row;
      out.key = static_cast<int>(hit - first);
      break;
    }
  }
  return out;
}

}  // namespace bench
