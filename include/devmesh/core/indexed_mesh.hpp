// devmesh/core/indexed_mesh.hpp: indexed_mesh<L>, a mesh's layout with its run-time values
// and every query that takes dims and modes by index: the position arithmetic of layout.hpp
// (digits, coordinates, groups, splits) over the root mesh's rank space. basic_mesh<L, Names>
// (basic_mesh.hpp) is an indexed_mesh<L> with names: it adds the queries by name, the checked
// queries by dim index (whose errors name the dims) and the derivations.
//
// A position is a rank of the root mesh's rank space, [0, root_size()): the root's ranks,
// row-major. (The runtime maps positions to world ranks, which differ under a rank map.)
#pragma once
#include <array>
#include <utility>

#include "config.hpp"
#include "diagnostics.hpp"
#include "group.hpp"
#include "layout.hpp"
#include "derivation.hpp"

// g++ 12 at -O2 reports -Warray-bounds false positives on the layout lookups below once
// they are inlined into loops whose bounds it cannot see (GCC bug 105329 family); every
// index here comes from the compile-time layout. Scoped to this header.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#define DEVMESH_POP_ARRAY_BOUNDS 1
#endif

namespace devmesh {

template <auto L, class Names>
class basic_mesh;

namespace detail {

}  // namespace detail

/// A mesh with layout L (layout.hpp) whose dims are known by index: the layout's run-time
/// values (none for a static mesh: an empty object) and the position arithmetic over them.
/// Every mesh is a basic_mesh<L, Names>, which derives from this and adds the names; this
/// class is not made on its own.
template <auto L>
class indexed_mesh : private detail::mesh_values<L.ndynamic> {
  template <auto, class>
  friend class basic_mesh;

 public:
  /// The layout: every dim's modes (shape : stride) over the root's rank space.
  static constexpr auto layout = L;
  /// Number of dims (aliases excluded), as PyTorch's ndim.
  static constexpr int ndim = L.nprimary;
  /// Number of dims including aliases: dim indices are [0, ndim_with_aliases).
  static constexpr int ndim_with_aliases = L.ndims;
  /// True if every size is static: the object is empty and every query is constexpr.
  static constexpr bool is_static = L.is_static();

  // ---- the layout ----------------------------------------------------------------------
  /// Shape of mode m (modes of all dims, numbered in dim order; see layout.hpp).
  DEVMESH_HOST_DEVICE constexpr int mode_shape(int m) const { return value(L.shape[m]); }
  /// Stride of mode m in the root's rank space.
  DEVMESH_HOST_DEVICE constexpr int mode_stride(int m) const { return value(L.stride[m]); }
  /// Number of positions of the root mesh this mesh was derived from (its rank space).
  DEVMESH_HOST_DEVICE constexpr int root_size() const { return value(L.root); }
  /// True if `other`, a mesh of this type, has the same modes and root size: the same mesh as
  /// written. Equal meshes (operator==) written otherwise are not; it is what a cache key or a
  /// fast path compares, without operator=='s coalescing of every dim.
  DEVMESH_HOST_DEVICE constexpr bool same_modes(const indexed_mesh& other) const {
    for (int m = 0; m < L.nmodes; ++m)
      if (mode_shape(m) != other.mode_shape(m) || mode_stride(m) != other.mode_stride(m)) return false;
    return root_size() == other.root_size();
  }

  // ---- sizes ---------------------------------------------------------------------------
  // (std::array<int, L.nprimary>, not <int, ndim>: nvcc 13's host code would spell the type
  // std::array<int, 2> that a user writes elsewhere as std::array<int, indexed_mesh<__T0>::ndim>.)

  /// Number of ranks in the mesh (product of its dims), as PyTorch's size().
  DEVMESH_HOST_DEVICE constexpr int size() const {
    int n = 1;
    for (int m = 0; m < L.first[ndim]; ++m) n *= mode_shape(m);
    return n;
  }
  /// The sizes of the mesh's dims (aliases excluded), as PyTorch's mesh.shape.
  DEVMESH_HOST_DEVICE constexpr std::array<int, L.nprimary> shape() const {
    std::array<int, L.nprimary> s{};
    for (int d = 0; d < ndim; ++d) s[d] = size_of(d);
    return s;
  }

  // ---- position <-> coordinate ---------------------------------------------------------
  /// Coordinate of `position` along dim d (by index, aliases included). Unchecked: position
  /// must be in [0, root_size()) and d in [0, ndim_with_aliases).
  DEVMESH_HOST_DEVICE constexpr int coordinate_unchecked(int position, int d) const {
    int c = 0;
    for (int m = L.first[d]; m < L.first[d + 1]; ++m) c = c * mode_shape(m) + digit(position, m);
    return c;
  }
  /// Coordinate of `position` in the (sub)mesh that contains it, row-major as PyTorch.
  DEVMESH_HOST_DEVICE constexpr std::array<int, L.nprimary> coordinate(int position) const {
    check_position(position);
    // Expanded over the dims at compile time: each coordinate is then a constant-index
    // digit extraction (a loop over d is not unrolled by g++ -O2).
    return coordinates_of(position, std::make_integer_sequence<int, ndim>{});
  }

  // ---- groups --------------------------------------------------------------------------
  /// The positions of this mesh (all its dims) that contain `position`: PyTorch's mesh
  /// tensor, flattened, on that position.
  DEVMESH_HOST_DEVICE constexpr auto group(int position) const {
    check_position(position);
    constexpr auto modes = detail::mode_list<L.first[ndim]>(0);  // a local copy: device code cannot read statics
    return group_over<L.first[ndim]>(position, modes.m);
  }

 protected:
  // The derivations of this layout (derivation.hpp), as member types: nvcc 13's host code
  // spells a derived mesh's layout right only when its operation is a member of the mesh's
  // class (an operation at namespace scope prints L as `__T0`, which does not compile).
  template <int... Sel>
  struct slice_op : detail::slice_op<L, Sel...> {};
  template <int... Sel>
  struct flatten_op : detail::flatten_op<L, Sel...> {};
  struct flatten_all_op : detail::flatten_all_op<L> {};
  template <auto L2>
  struct concat_op : detail::concat_op<L, L2> {};
  template <int D, int... Sizes>
  struct unflatten_op : detail::unflatten_op<L, D, Sizes...> {};
  template <int D, int K>
  struct unflatten_values_op : detail::unflatten_values_op<L, D, K> {};

  using values_base = detail::mesh_values<L.ndynamic>;
  constexpr indexed_mesh() = default;
  DEVMESH_HOST_DEVICE constexpr explicit indexed_mesh(const values_base& v) : values_base(v) {}

  /// This object's run-time values, L.ndynamic of them in slot order (nullptr: none).
  DEVMESH_HOST_DEVICE constexpr const int* dynamic_values() const {
    if constexpr (is_static)
      return nullptr;
    else
      return this->values_base::v;
  }
  /// A layout value: static (> 0) or a slot of this object's run-time values.
  DEVMESH_HOST_DEVICE constexpr int value(int v) const {
    if constexpr (is_static)
      return v;
    else
      return v > 0 ? v : this->values_base::v[-1 - v];
  }
  /// Size of dim d. Unchecked: d in [0, ndim_with_aliases).
  DEVMESH_HOST_DEVICE constexpr int size_of(int d) const {
    int n = 1;
    for (int m = L.first[d]; m < L.first[d + 1]; ++m) n *= mode_shape(m);
    return n;
  }
  /// Dim d's layout, values resolved. Unchecked: d in [0, ndim_with_aliases).
  DEVMESH_HOST_DEVICE constexpr dim_layout<L.nmodes> layout_of(int d) const {
    dim_layout<L.nmodes> out{};
    for (int m = L.first[d]; m < L.first[d + 1]; ++m) {
      out.shape[out.count] = mode_shape(m);
      out.stride[out.count++] = mode_stride(m);
    }
    return out;
  }
  /// The position at coordinates c[0, ndim) (unchecked: each in its dim's range) in the
  /// (sub)mesh that contains position `member`.
  DEVMESH_HOST_DEVICE constexpr int position_at(const int* c, int member) const {
    int r = base_of(member, 0, L.first[ndim]);
    for (int d = 0; d < ndim; ++d) {
      int rest = c[d];
      for (int m = L.first[d + 1] - 1; m >= L.first[d]; --m) {
        r += (rest % mode_shape(m)) * mode_stride(m);
        rest /= mode_shape(m);
      }
    }
    return r;
  }
  /// Digit of `position` in mode m.
  DEVMESH_HOST_DEVICE constexpr int digit(int position, int m) const {
    return (position / mode_stride(m)) % mode_shape(m);
  }
  /// `position` minus its digits in modes [begin, end): the first position of its group over them.
  DEVMESH_HOST_DEVICE constexpr int base_of(int position, int begin, int end) const {
    int base = position;
    for (int m = begin; m < end; ++m) base -= digit(position, m) * mode_stride(m);
    return base;
  }
  /// (color, key) of `position` over the given modes: its group's first position and its index there.
  DEVMESH_HOST_DEVICE constexpr split_args split_over(int position, const int* modes, int n) const {
    split_args out{position, 0};
    for (int i = 0; i < n; ++i) {
      const int dg = digit(position, modes[i]);
      out.key = out.key * mode_shape(modes[i]) + dg;
      out.color -= dg * mode_stride(modes[i]);
    }
    return out;
  }
  /// The group over the given K modes that contains `position`.
  template <int K>
  DEVMESH_HOST_DEVICE constexpr rank_group<K> group_over(int position, const int* modes) const {
    dim_layout<K> layout{K};
    for (int i = 0; i < K; ++i) {
      layout.shape[i] = mode_shape(modes[i]);
      layout.stride[i] = mode_stride(modes[i]);
    }
    return rank_group<K>(split_over(position, modes, K).color, layout);
  }
  /// (color, key) of `position` over dim d, d in [0, ndim_with_aliases): dispatched to a
  /// compile-time dim, so that every index into the layout is a constant (and g++ 12 -O2 has
  /// no out-of-range path to warn about with -Warray-bounds).
  DEVMESH_HOST_DEVICE constexpr split_args split_of_dim(int position, int d) const {
    return split_of_dim(position, d, std::make_integer_sequence<int, L.ndims>{});
  }

  DEVMESH_HOST_DEVICE constexpr void check_position(int position) const {
#if !defined(DEVMESH_NO_RANK_CHECKS)
    if (position < 0 || position >= root_size()) fail_rank(position, root_size());  // devmesh: rank out of range
#else
    (void)position;
#endif
  }
  // Not constexpr: reaching one in a constant expression is a compile error naming it
  // (g++ and clang also quote the calling line, whose comment says what went wrong).
  [[noreturn]] DEVMESH_HOST_DEVICE static void fail_rank(int position, int n) {
#if DEVMESH_DEVICE_PASS
    (void)position, (void)n;
    __trap();
    __builtin_unreachable();
#else
    detail::throw_rank_error(position, n);
#endif
  }

 private:
  template <int D>
  DEVMESH_HOST_DEVICE constexpr int coordinate_of(int position) const {
    return coordinate_unchecked(position, D);
  }
  template <int... D>
  DEVMESH_HOST_DEVICE constexpr std::array<int, L.nprimary> coordinates_of(int position, std::integer_sequence<int, D...>) const {
    return {coordinate_of<D>(position)...};
  }
  template <int D>
  DEVMESH_HOST_DEVICE constexpr split_args split_of(int position) const {
    constexpr auto modes = detail::mode_list<L.first[D + 1] - L.first[D]>(L.first[D]);
    return split_over(position, modes.m, L.first[D + 1] - L.first[D]);
  }
  template <int... D>
  DEVMESH_HOST_DEVICE constexpr split_args split_of_dim(int position, int d, std::integer_sequence<int, D...>) const {
    split_args out{position, 0};
    ((d == D ? (void)(out = split_of<D>(position)) : (void)0), ...);
    return out;
  }
};

}  // namespace devmesh

#if defined(DEVMESH_POP_ARRAY_BOUNDS)
#pragma GCC diagnostic pop
#undef DEVMESH_POP_ARRAY_BOUNDS
#endif
