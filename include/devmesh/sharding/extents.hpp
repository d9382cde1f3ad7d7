// devmesh/sharding/extents.hpp: a tensor's global shape, each extent static (in the type) or
// dynamic (stored), as std::extents (C++23's <mdspan>, which nvcc's C++20 does not have).
//
//   dm::extents<13, 6>                   fully static: an empty object
//   dm::extents<dm::dynamic_size, 6>(n)  one dynamic extent, given at run time
//   dm::dextents<2>(13, 6)               every extent dynamic
//   dm::extents<>                        a 0-D tensor (one element)
// Extents are std::int64_t (tensors outgrow int long before meshes do); zero is allowed. The
// product of the nonzero extents (the element count, and every stride) must fit in
// std::int64_t: a static_assert for static extents, mesh_error for dynamic ones.
#pragma once
#include <array>
#include <cstdint>
#include <utility>

#include "../core/checked.hpp"
#include "../core/config.hpp"
#include "../core/diagnostics.hpp"

namespace devmesh {

/// An extent or index of a tensor.
using tensor_index = std::int64_t;

namespace detail {
/// The stored (dynamic) extents: none for a static shape, so that it is an empty object.
template <int N>
struct extent_values {
  tensor_index v[N]{};
};
template <>
struct extent_values<0> {};

[[noreturn]] inline void throw_extent_error(int d, long long value) {
  throw_mesh_error(message() << "devmesh: extents: extent " << value << " of tensor dim " << d
                             << " is negative (an extent is >= 0, or dynamic_size in the type)");
}
[[noreturn]] inline void throw_extent_count_error(int given, int dynamic, int rank) {
  throw_mesh_error(message() << "devmesh: extents: " << given << " values given; pass one per dynamic extent ("
                             << dynamic << ") or one per extent (" << rank << ")");
}
/// True if the product of the nonzero static extents among E... fits in std::int64_t.
template <tensor_index... E>
constexpr bool static_extents_fit() {
  tensor_index n = 1;
  for (tensor_index e : {E..., tensor_index{1}})
    if (e > 0 && mul_overflows(n, e, n)) return false;
  return true;
}
}  // namespace detail

/// A tensor's global shape: E... are its extents, each >= 0 or dynamic_size (given to the
/// constructor). Stores only the dynamic ones.
template <tensor_index... E>
class extents : private detail::extent_values<((E == dynamic_size) + ... + 0)> {
  static_assert(((E >= 0 || E == dynamic_size) && ... && true),
                "devmesh: a static extent must be >= 0 (or dynamic_size)");
  static_assert(detail::static_extents_fit<E...>(),
                "devmesh: extents: the product of the static extents does not fit in std::int64_t (a tensor's "
                "element count, and every product of its extents, must)");
  using values = detail::extent_values<((E == dynamic_size) + ... + 0)>;
  // A local array, not a static member: device code cannot read a class's static arrays.
  DEVMESH_HOST_DEVICE static constexpr tensor_index static_at(int d) {
    constexpr tensor_index s[] = {E..., 0};
    return s[d];
  }

 public:
  /// Number of tensor dims (0 for a scalar).
  static constexpr int rank_value = static_cast<int>(sizeof...(E));
  /// Number of dynamic extents.
  static constexpr int rank_dynamic_value = ((E == dynamic_size) + ... + 0);
  /// True if every extent is static: the object is empty.
  static constexpr bool is_static = rank_dynamic_value == 0;

  /// A static shape.
  DEVMESH_HOST_DEVICE constexpr extents()
    requires is_static
  {}
  /// The dynamic extents in order, or every extent (static ones must then match).
  template <class... I>
    requires(sizeof...(I) > 0 && (sizeof...(I) == rank_dynamic_value || sizeof...(I) == rank_value))
  DEVMESH_HOST_DEVICE constexpr explicit extents(I... given) {
    const tensor_index in[] = {static_cast<tensor_index>(given)...};
    int k = 0;
    for (int d = 0; d < rank_value; ++d) {
      const bool all = sizeof...(I) == rank_value && rank_value != rank_dynamic_value;
      if (static_at(d) != dynamic_size) {
        if (all && in[d] != static_at(d)) fail_static(d, in[d]);
        continue;
      }
      const tensor_index v = in[all ? d : k];
      if (v < 0) fail_negative(d, v);
      if constexpr (rank_dynamic_value > 0) this->v[k] = v;
      ++k;
    }
    if constexpr (rank_dynamic_value > 0) {
      tensor_index n = 1;
      for (int d = 0; d < rank_value; ++d)
        if (extent(d) > 0 && detail::mul_overflows(n, extent(d), n)) fail_count();
    }
  }
  /// The same shape from an array of every extent.
  DEVMESH_HOST_DEVICE static constexpr extents from_array(const std::array<tensor_index, sizeof...(E)>& all) {
    return from_array(all, std::make_index_sequence<sizeof...(E)>{});
  }

  /// Number of tensor dims.
  DEVMESH_HOST_DEVICE static constexpr int rank() { return rank_value; }
  /// Number of dynamic extents.
  DEVMESH_HOST_DEVICE static constexpr int rank_dynamic() { return rank_dynamic_value; }
  /// Extent d as written in the type: its value, or dynamic_size.
  DEVMESH_HOST_DEVICE static constexpr tensor_index static_extent(int d) { return static_at(d); }
  /// Extent d (d in [0, rank())).
  DEVMESH_HOST_DEVICE constexpr tensor_index extent(int d) const {
    if (static_at(d) != dynamic_size) return static_at(d);
    if constexpr (rank_dynamic_value > 0) {
      int k = 0;
      for (int e = 0; e < d; ++e) k += static_at(e) == dynamic_size;
      return this->v[k];
    } else {
      return 0;  // unreachable: a dynamic extent implies a stored value
    }
  }
  /// Every extent, as an array.
  DEVMESH_HOST_DEVICE constexpr std::array<tensor_index, sizeof...(E)> shape() const {
    std::array<tensor_index, sizeof...(E)> s{};
    for (int d = 0; d < rank_value; ++d) s[d] = extent(d);
    return s;
  }
  /// Number of elements (1 for a scalar). Fits: the constructor checked it.
  DEVMESH_HOST_DEVICE constexpr tensor_index size() const {
    tensor_index n = 1;
    for (int d = 0; d < rank_value; ++d) n = detail::checked_mul(n, extent(d), "extents::size");
    return n;
  }
  /// Equal extents, whatever is static.
  template <tensor_index... F>
  DEVMESH_HOST_DEVICE friend constexpr bool operator==(const extents& a, const extents<F...>& b) {
    if constexpr (sizeof...(F) != sizeof...(E)) {
      return false;
    } else {
      for (int d = 0; d < rank_value; ++d)
        if (a.extent(d) != b.extent(d)) return false;
      return true;
    }
  }

 private:
  template <std::size_t... I>
  DEVMESH_HOST_DEVICE static constexpr extents from_array(const std::array<tensor_index, sizeof...(E)>& all,
                                                          std::index_sequence<I...>) {
    if constexpr (is_static) {
      for (int d = 0; d < rank_value; ++d)
        if (all[d] != static_at(d)) fail_static(d, all[d]);
      return extents{};
    } else {
      return extents(all[I]...);
    }
  }
  // Not constexpr: reached in a constant expression, a compile error naming the check.
  [[noreturn]] DEVMESH_HOST_DEVICE static void fail_negative(int d, tensor_index v) {
#if DEVMESH_DEVICE_PASS
    (void)d, (void)v;
    __trap();
    __builtin_unreachable();
#else
    detail::throw_extent_error(d, v);
#endif
  }
  [[noreturn]] DEVMESH_HOST_DEVICE void fail_count() const {
#if DEVMESH_DEVICE_PASS
    __trap();
    __builtin_unreachable();
#else
    detail::message m;
    m << "devmesh: extents: the tensor's element count does not fit in std::int64_t: extents (";
    for (int d = 0; d < rank_value; ++d) m << (d ? ", " : "") << static_cast<long long>(extent(d));
    detail::throw_mesh_error(m << ") (every product of a tensor's nonzero extents must fit: its element count, its "
                                  "strides, its byte count)");
#endif
  }
  [[noreturn]] DEVMESH_HOST_DEVICE static void fail_static(int d, tensor_index v) {
#if DEVMESH_DEVICE_PASS
    (void)d, (void)v;
    __trap();
    __builtin_unreachable();
#else
    detail::throw_mesh_error(detail::message() << "devmesh: extents: " << static_cast<long long>(v)
                                               << " given for tensor dim " << d << ", whose static extent is "
                                               << static_cast<long long>(static_at(d)));
#endif
  }
};

namespace detail {
template <int R, class Seq = std::make_index_sequence<R>>
struct dynamic_extents_of;
template <int R, std::size_t... I>
struct dynamic_extents_of<R, std::index_sequence<I...>> {
  using type = extents<(static_cast<void>(I), tensor_index{dynamic_size})...>;
};
}  // namespace detail

/// R extents, all dynamic: dm::dextents<2>(13, 6).
template <int R>
using dextents = typename detail::dynamic_extents_of<R>::type;

/// True for dm::extents<...>.
template <class T>
inline constexpr bool is_extents = false;
template <tensor_index... E>
inline constexpr bool is_extents<extents<E...>> = true;

}  // namespace devmesh
