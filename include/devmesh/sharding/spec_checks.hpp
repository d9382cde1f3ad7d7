// devmesh/sharding/spec_checks.hpp: the checks of a spec against a tensor, run by every query:
// each sharded tensor dim exists, and chunking::even's blocks are all alike. Where the spec and the values
// involved are static, a compile error naming the dims; else a mesh_error (a trap on device).
#pragma once
#include <utility>

#include "../core/config.hpp"
#include "../core/diagnostics.hpp"
#include "../core/names.hpp"
#include "diagnostics.hpp"
#include "extents.hpp"
#include "index_map.hpp"
#include "table.hpp"

namespace devmesh::detail {

// Not constexpr: reached in a constant expression, a compile error naming the call.
[[noreturn]] DEVMESH_HOST_DEVICE inline void fail_sharding(const char* what, long long value, long long bound) {
#if DEVMESH_DEVICE_PASS
  (void)what, (void)value, (void)bound;
  __trap();
  __builtin_unreachable();
#else
  throw_mesh_error(message() << "devmesh: sharding: " << what << " " << value << " is not in [0, " << bound << ")");
#endif
}

/// The first dim that shards a tensor dim >= rank (or < 0), or -1.
template <int N>
DEVMESH_HOST_DEVICE constexpr int first_dim_out_of_range(const placement_table<N>& t, int rank) {
  for (int d = 0; d < N; ++d)
    if (t.at[d].is_shard() && (t.at[d].tensor_dim < 0 || t.at[d].tensor_dim >= rank)) return d;
  return -1;
}

/// Product of the sizes of the dims that shard tensor dim k.
template <int N, class Mesh>
DEVMESH_HOST_DEVICE constexpr long long shards_of(const placement_table<N>& t, const Mesh& m, int k) {
  long long n = 1;
  for (int d = 0; d < N; ++d)
    if (t.at[d].is_shard() && t.at[d].tensor_dim == k) n *= m.size(d);
  return n;
}

/// True if tensor dim k's divisibility is known at compile time: a static extent, static
/// sizes of every dim that shards it.
template <int N, auto L, class E>
constexpr bool static_divisibility(const placement_table<N>& t, int k) {
  if (E::static_extent(k) == dynamic_size) return false;
  for (int d = 0; d < N; ++d)
    if (t.at[d].is_shard() && t.at[d].tensor_dim == k && !L.static_dim(d)) return false;
  return true;
}

/// True if every block of tensor dim k has the same length: each step cuts the list it gets
/// into blocks of one length, for every coordinate (without a _StridedShard written as such,
/// exactly when the extent is a multiple of the product of the sizes of the dims that shard it).
/// O(sum of those sizes).
template <int N>
DEVMESH_HOST_DEVICE constexpr bool divides_evenly(const placement_table<N>& t, const application_order<N>& o,
                                                  const int* sizes, int k, tensor_index extent) {
  for (int i = 0; i < N; ++i) {
    const int d = o.dims[i];
    if (!t.at[d].is_shard() || t.at[d].tensor_dim != k) continue;
    if (extent % sizes[d] != 0) return false;
    const tensor_index f = split_factor_of(t, o, sizes, d);
    for (int c = 0; c < sizes[d] && f > 1; ++c)
      if (step_length(extent, {sizes[d], c, f}) != extent / sizes[d]) return false;
    extent /= sizes[d];
  }
  return true;
}

/// The first tensor dim whose blocks are not all alike, or -1 (skipping those whose answer is
/// static when skip_static).
template <int N, class Mesh, class E>
DEVMESH_HOST_DEVICE constexpr int first_uneven_dim(const placement_table<N>& t, const Mesh& m, const E& ext,
                                                   bool skip_static = false) {
  constexpr auto order = order_of_dims(Mesh::layout);
  int sizes[N > 0 ? N : 1]{};
  for (int d = 0; d < N; ++d) sizes[d] = m.size(d);
  for (int k = 0; k < E::rank_value; ++k) {
    if (skip_static && static_divisibility<N, Mesh::layout, E>(t, k)) continue;
    if (!divides_evenly(t, order, sizes, k, ext.extent(k))) return k;
  }
  return -1;
}

/// The dims that shard tensor dim k, as a type (for a diagnostic).
template <class Names, auto T, int K>
struct sharding_dim_names {
  static constexpr auto list = [] {
    struct dims_of {
      int d[decltype(T)::ndims > 0 ? decltype(T)::ndims : 1]{};
      int count = 0;
    } r{};
    for (int d = 0; d < decltype(T)::ndims; ++d)
      if (T.at[d].is_shard() && T.at[d].tensor_dim == K) r.d[r.count++] = d;
    return r;
  }();
  template <std::size_t... I>
  static auto make(std::index_sequence<I...>) -> dims<name_of<Names, list.d[I]>...>;
  using type = decltype(make(std::make_index_sequence<list.count>{}));
};

[[noreturn]] inline void throw_tensor_dim_error(std::string_view dim, int tensor_dim, int rank) {
  throw_mesh_error(message() << DEVMESH_MSG_TENSOR_DIM_RANGE ": dim '" << dim << "' shards tensor dim " << tensor_dim
                             << " of a tensor of rank " << rank);
}
[[noreturn]] inline void throw_uneven_error(int tensor_dim, long long extent, long long shards) {
  throw_mesh_error(message() << DEVMESH_MSG_NOT_DIVISIBLE ": tensor dim " << tensor_dim << " has extent " << extent
                             << ", not a multiple of its " << shards << " shards");
}

/// The checks for specs on Mesh whose table comes from Source (spec.hpp).
template <class Mesh, class Source>
struct spec_checks {
  static constexpr auto L = Mesh::layout;
  static constexpr int N = L.ndims;
  using Names = typename Mesh::names_type;

  template <class E>
  DEVMESH_HOST_DEVICE static constexpr void check_tensor_dims(const placement_table<N>& t, const E&) {
    if constexpr (Source::is_static) {
      constexpr auto T = Source{}.table();
      constexpr int bad = first_dim_out_of_range(T, E::rank_value);
      if constexpr (bad >= 0)
        require<false, error::tensor_dim_out_of_range<name_of<Names, bad>, tensor_dim_of<T.at[bad].tensor_dim>,
                                                      tensor_rank<E::rank_value>>>();
    } else {
      const int bad = first_dim_out_of_range(t, E::rank_value);
      if (bad >= 0) fail_tensor_dim(bad, t.at[bad].tensor_dim, E::rank_value);
    }
  }

  template <class E>
  DEVMESH_HOST_DEVICE static constexpr void check_even(const placement_table<N>& t, const Mesh& m, const E& ext) {
    if constexpr (Source::is_static) {
      constexpr auto T = Source{}.table();
      if constexpr (T.rule == chunking::even) {
        constexpr int bad = first_static_uneven<T, E>();
        if constexpr (bad >= 0) {
          constexpr long long k = static_shards<T>(bad);
          using dims_of_bad = typename sharding_dim_names<Names, T, bad>::type;
          require<false, error::extent_not_divisible<tensor_dim_of<bad>, extent_of<E::static_extent(bad)>,
                                                     shard_count<k>, dims_of_bad>>();
        }
        const int u = first_uneven_dim(t, m, ext, true);
        if (u >= 0) fail_uneven(u, ext.extent(u), shards_of(t, m, u));
      }
    } else if (t.rule == chunking::even) {
      const int u = first_uneven_dim(t, m, ext);
      if (u >= 0) fail_uneven(u, ext.extent(u), shards_of(t, m, u));
    }
  }

 private:
  template <auto T>
  static constexpr long long static_shards(int k) {
    long long n = 1;
    for (int d = 0; d < N; ++d)
      if (T.at[d].is_shard() && T.at[d].tensor_dim == k) n *= L.static_dim_size(d);
    return n;
  }
  template <auto T, class E>
  static constexpr int first_static_uneven() {
    int sizes[N > 0 ? N : 1]{};
    for (int d = 0; d < N; ++d) sizes[d] = L.static_dim(d) ? L.static_dim_size(d) : 1;  // (only sharding dims are read)
    for (int k = 0; k < E::rank_value; ++k)
      if (static_divisibility<N, L, E>(T, k) && !divides_evenly(T, order_of_dims(L), sizes, k, E::static_extent(k)))
        return k;
    return -1;
  }
  [[noreturn]] DEVMESH_HOST_DEVICE static void fail_tensor_dim(int d, int tensor_dim, int rank) {
#if DEVMESH_DEVICE_PASS
    (void)d, (void)tensor_dim, (void)rank;
    __trap();
    __builtin_unreachable();
#else
    throw_tensor_dim_error(Names::views[d], tensor_dim, rank);
#endif
  }
  [[noreturn]] DEVMESH_HOST_DEVICE static void fail_uneven(int k, long long extent, long long shards) {
#if DEVMESH_DEVICE_PASS
    (void)k, (void)extent, (void)shards;
    __trap();
    __builtin_unreachable();
#else
    throw_uneven_error(k, extent, shards);
#endif
  }
};

}  // namespace devmesh::detail
