// tests/sharding: random specs for property tests of redistribute (the one-process simulator
// of redistribute_plan.cpp and the MPI runs of redistribute_mpi.cpp): every placement kind,
// one Partial op per spec, and explicit shard orders (PyTorch's _StridedShard).
#pragma once
#include "pytorch_data.hpp"  // mesh1, mesh2, mesh3

#include <devmesh/sharding.hpp>

#include <algorithm>
#include <array>
#include <random>
#include <string_view>
#include <vector>

namespace devmesh_test {
namespace dm = devmesh;

/// A random spec on m for a tensor of R dims: each mesh dim R, S(t) or P(op) (one op per
/// spec), and where two dims shard one tensor dim, sometimes an explicit shard order.
template <int R, class Mesh>
inline dm::dynamic_sharding<Mesh> random_spec(const Mesh& m, std::mt19937& rng) {
  dm::dynamic_sharding<Mesh> spec(m);
  const auto op = static_cast<dm::reduction>(rng() % 4);
  std::array<unsigned, Mesh::ndim> kind{};  // 0: R, 1: P(op), 2 + t: S(t)
  std::array<std::vector<std::string_view>, R> sharding{};
  for (int d = 0; d < Mesh::ndim; ++d) {
    kind[d] = static_cast<unsigned>(rng() % (R + 2));
    if (kind[d] >= 2) sharding[kind[d] - 2].push_back(Mesh::names_type::views[d]);
  }
  std::array<bool, R> ordered{};
  for (int t = 0; t < R; ++t)
    if (sharding[t].size() >= 2 && rng() % 2) {  // an explicit order (PyTorch's _StridedShard)
      std::reverse(sharding[t].begin(), sharding[t].end());
      spec.order(t, sharding[t]);
      ordered[t] = true;
    }
  for (int d = 0; d < Mesh::ndim; ++d) {
    if (kind[d] == 1) spec.place(d, dm::placement::partial_of(op));
    if (kind[d] >= 2 && !ordered[kind[d] - 2]) spec.place(d, dm::placement::sharded(static_cast<int>(kind[d] - 2)));
  }
  return spec;
}

/// Calls f(m) for every mesh of n ranks with the dims dp; dp,tp; dp,cp,tp (every ordered
/// factorization, size-1 dims included).
template <class F>
void for_each_mesh_of(int n, F&& f) {
  f(mesh1(n));
  for (int a = 1; a <= n; ++a)
    if (n % a == 0) f(mesh2(a, n / a));
  for (int a = 1; a <= n; ++a)
    for (int b = 1; a * b <= n; ++b)
      if (n % (a * b) == 0) f(mesh3(a, b, n / (a * b)));
}

}  // namespace devmesh_test
