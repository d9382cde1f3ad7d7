// tests/gpu/layout_cases.hpp: the layouts gpu-check evaluates in CUDA kernels for every
// rank, and what it evaluates (the probe). Included by layout_device.cu (nvcc: the kernels)
// and layout_host.cpp (g++: the host computation the kernels' values are compared with), so
// both sides evaluate the very same cases.
//
// Per rank r of a case's rank space, probe<Ns...>::run writes:
//   coordinate(r)[0..ndim), rank_at(coordinate(r), r),
//   the whole (sub)mesh's group(r): size, index_of(r), digest,
//   then per named dim N: local_rank<N>(r), comm_split<N>(r).color, .key,
//   group<N>(r): size, front, index_of(r), digest.
// A digest is FNV-1a over the group's ranks in order: all of them up to 64, else 64 evenly
// spaced ones (positions i * (size - 1) / 63), so the cost per rank stays bounded at 2^20.
#pragma once
#include <devmesh/core/mesh.hpp>
#include <devmesh/core/print.hpp>

#include <string>
#include <type_traits>
#include <utility>

namespace gpu_check::layout {

namespace dm = devmesh;
using value = long long;

inline constexpr int digest_cap = 64;

template <class G>
DEVMESH_HOST_DEVICE constexpr value digest(const G& g) {
  unsigned long long h = 14695981039346656037ull;
  const int n = g.size();
  const int m = n <= digest_cap ? n : digest_cap;
  for (int j = 0; j < m; ++j) {
    const int i = n <= digest_cap ? j : static_cast<int>(static_cast<long long>(j) * (n - 1) / (digest_cap - 1));
    h = (h ^ static_cast<unsigned long long>(static_cast<unsigned>(g[i]))) * 1099511628211ull;
  }
  return static_cast<value>(h & 0x7fffffffffffffffull);
}

/// What is evaluated per rank: see the file comment. Ns: the dims (and aliases) to query.
template <dm::fixed_string... Ns>
struct probe {
  static constexpr int per_name = 7;
  template <class L>
  static constexpr int width() {
    return L::ndim + 4 + static_cast<int>(sizeof...(Ns)) * per_name;
  }
  /// Slots of the first named dim's record (for the host's invariant checks).
  template <class L>
  static constexpr int names_offset() {
    return L::ndim + 4;
  }

  template <dm::fixed_string N, class L>
  DEVMESH_HOST_DEVICE static void one(const L& m, int r, value* out, int& k) {
    const auto split = dm::comm_split<N>(m, r);
    const auto g = dm::group<N>(m, r);
    out[k++] = dm::local_rank<N>(m, r);
    out[k++] = split.color;
    out[k++] = split.key;
    out[k++] = g.size();
    out[k++] = g.front();
    out[k++] = g.index_of(r);
    out[k++] = digest(g);
  }

  template <class L>
  DEVMESH_HOST_DEVICE static void run(const L& m, int r, value* out) {
    const auto c = m.coordinate(r);
    int k = 0;
    for (int d = 0; d < L::ndim; ++d) out[k++] = c[d];
    out[k++] = m.rank_at(c, r);
    const auto g = m.group(r);
    out[k++] = g.size();
    out[k++] = g.index_of(r);
    out[k++] = digest(g);
    (one<Ns>(m, r, out, k), ...);
  }
};

// ---- the cases ------------------------------------------------------------------------------
// case_def<I>: name(), layout() (host: builds the layout value) and probe. Cases are indexed
// by an int so that the kernel is probe_kernel<I>: nvcc's generated stubs cannot spell
// template arguments that carry class-type NTTPs (the dims' names), and the layout itself
// travels to the kernel as bytes.
using dm::dim;

template <int I>
struct case_def;

using mesh3d = dm::mesh<dim<"dp", 2>, dim<"cp", 2>, dim<"tp", 2>>;
using big4d = dm::mesh<dim<"a", 64>, dim<"b", 16>, dim<"c", 32>, dim<"d", 32>>;  // 2^20 ranks
using odd5d = dm::mesh<dim<"p3", 3>, dim<"p5", 5>, dim<"p7", 7>, dim<"p11", 11>, dim<"p13", 13>>;  // 15015 ranks
using dyn3 = dm::mesh<dim<"x">, dim<"y">, dim<"z">>;
using mixed = dm::mesh<dim<"dp">, dim<"tp", 8>>;

// Static meshes.
template <> struct case_def<0> {
  static std::string name() { return "static (2,2,2)"; }
  static auto layout() { return mesh3d{}; }
  using probe = layout::probe<"dp", "cp", "tp">;
};
template <> struct case_def<1> {
  static std::string name() { return "static (2,2,2) flatten dp_cp + transposed cp_dp"; }
  static auto layout() { return mesh3d{}.flatten<"dp_cp", "dp", "cp">().flatten<"cp_dp", "cp", "dp">(); }
  using probe = layout::probe<"dp_cp", "cp_dp">;
};
template <> struct case_def<2> {
  static std::string name() { return "static (2,2,2) transposed slice (tp,dp)"; }
  static auto layout() { return mesh3d{}.slice<"tp", "dp">(); }
  using probe = layout::probe<"tp", "dp">;
};
template <> struct case_def<3> {
  static std::string name() { return "static (64,16,32,32)"; }
  static auto layout() { return big4d{}; }
  using probe = layout::probe<"a", "b", "c", "d">;
};
template <> struct case_def<4> {
  static std::string name() { return "static (64,16,32,32) flatten bd (non-adjacent) + db (transposed)"; }
  static auto layout() { return big4d{}.flatten<"bd", "b", "d">().flatten<"db", "d", "b">(); }
  using probe = layout::probe<"bd", "db", "c">;
};
template <> struct case_def<5> {
  static std::string name() { return "static (64,16,32,32) whole-mesh flatten"; }
  static auto layout() { return big4d{}.flatten<"all">(); }
  using probe = layout::probe<"all", "a", "d">;
};
template <> struct case_def<6> {
  static std::string name() { return "static (64,16,32,32) transposed slice (d,b,a)"; }
  static auto layout() { return big4d{}.slice<"d", "b", "a">(); }
  using probe = layout::probe<"d", "b", "a">;
};
template <> struct case_def<7> {
  static std::string name() { return "static (64,16,32,32) unflatten a -> (a1=4, a2=16)"; }
  static auto layout() { return big4d{}.unflatten<"a", dim<"a1", 4>, dim<"a2", 16>>(); }
  using probe = layout::probe<"a1", "a2", "b", "d">;
};
template <> struct case_def<8> {
  static std::string name() { return "static (64,16,32,32) flatten bd, slice, unflatten -> (x=8, y=64) across atoms"; }
  static auto layout() { return big4d{}.flatten<"bd", "b", "d">().slice<"bd">().unflatten<"bd", dim<"x", 8>, dim<"y", 64>>(); }
  using probe = layout::probe<"x", "y">;
};
template <> struct case_def<9> {
  static std::string name() { return "static (3,5,7,11,13)"; }
  static auto layout() { return odd5d{}; }
  using probe = layout::probe<"p3", "p5", "p7", "p11", "p13">;
};
template <> struct case_def<10> {
  static std::string name() { return "static (3,5,7,11,13) flatten p11_p5 (transposed, non-adjacent)"; }
  static auto layout() { return odd5d{}.flatten<"p11_p5", "p11", "p5">(); }
  using probe = layout::probe<"p11_p5", "p3">;
};
template <> struct case_def<11> {
  static std::string name() { return "static (3,5,7,11,13) transposed slice (p13,p3)"; }
  static auto layout() { return odd5d{}.slice<"p13", "p3">(); }
  using probe = layout::probe<"p13", "p3">;
};
inline constexpr int static_cases = 12;

// Dynamic meshes: each shape as itself, flattened, as a transposed slice, unflattened.
inline constexpr int dyn_shapes[][3] = {{1024, 32, 32}, {7, 11, 13}, {1, 1, 1}, {2, 1, 524288}, {1, 1 << 20, 1}};
inline constexpr int dyn_shape_count = 5;
template <int S>
dyn3 dyn_root() {
  return dyn3(dyn_shapes[S][0], dyn_shapes[S][1], dyn_shapes[S][2]);
}
template <int S>
std::string dyn_name() {
  return "dynamic (" + std::to_string(dyn_shapes[S][0]) + "," + std::to_string(dyn_shapes[S][1]) + "," +
         std::to_string(dyn_shapes[S][2]) + ")";
}
template <int S, int K>
struct dyn_case;
template <int S>
struct dyn_case<S, 0> {
  static std::string name() { return dyn_name<S>(); }
  static auto layout() { return dyn_root<S>(); }
  using probe = layout::probe<"x", "y", "z">;
};
template <int S>
struct dyn_case<S, 1> {
  static std::string name() { return dyn_name<S>() + " flatten xz (non-adjacent) + zy (transposed)"; }
  static auto layout() { return dyn_root<S>().template flatten<"xz", "x", "z">().template flatten<"zy", "z", "y">(); }
  using probe = layout::probe<"xz", "zy">;
};
template <int S>
struct dyn_case<S, 2> {
  static std::string name() { return dyn_name<S>() + " transposed slice (z,x)"; }
  static auto layout() { return dyn_root<S>().template slice<"z", "x">(); }
  using probe = layout::probe<"z", "x">;
};
template <int S>
struct dyn_case<S, 3> {
  static constexpr int factor = dyn_shapes[S][1] % 2 == 0 ? 2 : 1;
  static std::string name() { return dyn_name<S>() + " unflatten y -> (y1=?, y2=" + std::to_string(factor) + ")"; }
  static auto layout() { return dyn_root<S>().template unflatten<"y", dim<"y1">, dim<"y2", factor>>(); }
  using probe = layout::probe<"x", "y1", "y2", "z">;
};
template <int I>
  requires(I >= static_cases && I < static_cases + 4 * dyn_shape_count)
struct case_def<I> : dyn_case<(I - static_cases) / 4, (I - static_cases) % 4> {};

// A static dim times an inferred one.
inline constexpr int mixed_first = static_cases + 4 * dyn_shape_count;
template <> struct case_def<mixed_first> {
  static std::string name() { return "dynamic dp=? x static tp=8 (for_world 2^20)"; }
  static auto layout() { return mixed::for_world(1 << 20); }
  using probe = layout::probe<"dp", "tp">;
};
template <> struct case_def<mixed_first + 1> {
  static std::string name() { return "dynamic dp=? x static tp=8 whole-mesh flatten"; }
  static auto layout() { return mixed::for_world(1 << 20).flatten<"dp_tp">(); }
  using probe = layout::probe<"dp_tp", "tp">;
};
inline constexpr int case_count = mixed_first + 2;

template <int I>
using layout_of = decltype(case_def<I>::layout());

/// v(std::integral_constant<int, I>{}) for every case I, in order.
template <class V, int... I>
void for_each_case_impl(V&& v, std::integer_sequence<int, I...>) {
  (v(std::integral_constant<int, I>{}), ...);
}
template <class V>
void for_each_case(V&& v) {
  for_each_case_impl(v, std::make_integer_sequence<int, case_count>{});
}

/// A layout value as bytes, for a kernel argument.
struct layout_bytes {
  alignas(16) unsigned char b[512];
};

}  // namespace gpu_check::layout
