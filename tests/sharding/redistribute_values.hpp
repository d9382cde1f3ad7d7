// tests/sharding: the values redistribute's tests move and expect (the MPI runs of
// redistribute_mpi.cpp, the NCCL runs over the double of tests/nccl/redistribute.cpp): each
// element is its flat global index, times (1 + the rank's index in the group of the Partial
// dims) in a Partial source, so the reduction is known.
#pragma once
#include <devmesh/sharding.hpp>

#include <algorithm>
#include <vector>

namespace devmesh_test {
namespace dm = devmesh;

/// The flat global index of every element of `rank`'s block, in local row-major order.
template <class Spec, class E>
inline std::vector<dm::tensor_index> flat_indices(const Spec& spec, const E& ext, int rank) {
  const auto shape = spec.local_shape(ext, rank);
  dm::tensor_index n = 1;
  for (auto e : shape) n *= e;
  std::vector<dm::tensor_index> out;
  for (dm::tensor_index i = 0; i < n; ++i) {
    dm::tensor_index rest = i, flat = 0, stride = 1;
    for (int t = E::rank_value - 1; t >= 0; --t) {
      flat += spec.global_index(ext, rank, t, rest % shape[t]) * stride;
      rest /= shape[t], stride *= ext.extent(t);
    }
    out.push_back(flat);
  }
  return out;
}

/// The recorder's source blocks: the flat index times (1 + the rank's index in the group of
/// the Partial dims); and the tensor they stand for, reduced.
struct source {
  std::vector<double> block;
  int partial_ranks = 1;
  dm::reduction op = dm::reduction::sum;
  double full(dm::tensor_index x) const {
    double r = 0;
    for (int i = 0; i < partial_ranks; ++i) {
      const double v = static_cast<double>(x) * (1 + i);
      r = i == 0 ? v : op == dm::reduction::min ? std::min(r, v) : op == dm::reduction::max ? std::max(r, v) : r + v;
    }
    return op == dm::reduction::avg ? r / partial_ranks : r;
  }
};

template <class Mesh, class Spec, class E>
inline source source_of(const Mesh& m, const Spec& src, const E& ext, int rank) {
  source s;
  int index = 0;
  for (int d = 0; d < Mesh::ndim; ++d)
    if (src.table().at[d].is_partial())
      index = index * m.size(d) + m.coordinate_unchecked(rank, d), s.partial_ranks *= m.size(d), s.op = src.table().at[d].op;
  for (dm::tensor_index x : flat_indices(src, ext, rank)) s.block.push_back(static_cast<double>(x) * (1 + index));
  return s;
}

}  // namespace devmesh_test
