// devmesh/core/mesh.hpp: mesh<dim<...>...>, a root mesh: its dims, in order, each
// dim<"name", size>, with static sizes or dynamic_size ones given at construction.
//   using mesh3d = mesh<dim<"dp", 2>, dim<"cp", 2>, dim<"tp", 2>>;
// A root mesh is a basic_mesh (basic_mesh.hpp) whose layout has one row-major mode per dim.
#pragma once
#include <climits>
#include <concepts>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "algebra.hpp"
#include "basic_mesh.hpp"
#include "diagnostics.hpp"
#include "dim.hpp"
#include "names.hpp"
#include "sizes.hpp"

namespace devmesh {

namespace detail {

/// The K-th type of T... (std::tuple_element_t<K, std::tuple<T...>> without <tuple>).
template <int K, class T, class... Rest>
struct type_at {
  using type = typename type_at<K - 1, Rest...>::type;
};
template <class T, class... Rest>
struct type_at<0, T, Rest...> {
  using type = T;
};

/// A type a mesh size may be given as: an integer type, but not bool or a character type.
template <class T>
inline constexpr bool is_size_type =
    std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char> && !std::is_same_v<T, wchar_t> &&
    !std::is_same_v<T, char8_t> && !std::is_same_v<T, char16_t> && !std::is_same_v<T, char32_t>;

// Not constexpr: in a constant expression an out-of-range size is a compile error naming it.
template <class T>
[[noreturn]] void fail_size_range(T v, std::string_view dim) {
  message m;
  m << DEVMESH_MSG_SIZE_RANGE ": got ";
  if constexpr (std::is_signed_v<T>)
    m << static_cast<long long>(v);
  else if (v <= static_cast<unsigned long long>(LLONG_MAX))
    m << static_cast<long long>(v);
  else
    m << static_cast<long long>(v / 10) << static_cast<int>(v % 10);  // > LLONG_MAX: its digits all the same
  throw_mesh_error(m << " for dim '" << dim << "'");
}

/// A size argument as an int; throws mesh_error naming the dim if it does not fit, quoting
/// the value as given (4294967298 stays 4294967298, not the 2 a cast would make of it).
template <class T>
constexpr int size_as_int(T v, std::string_view dim) {
  if (!std::in_range<int>(v)) fail_size_range(v, dim);
  return static_cast<int>(v);
}

template <class... Dims>
constexpr bool check_root() {
  if constexpr (sizeof...(Dims) == 0) {
    require<false, error::mesh_without_dims<dims<typename Dims::name_type...>>>();
  } else {
    constexpr int sizes[] = {Dims::size...};  // any number of them dynamic: counted as 1
    constexpr auto r = resolve_sizes({.given = sizes, .n = sizeof...(Dims), .unknowns = sizeof...(Dims)});
    require<(r.fault != size_fault::overflow), error::size_overflow<dims<typename Dims::name_type...>>>();
  }
  return true;  // the diagnostic (if any) has fired: a second, plain assertion would only add noise
}

/// The root layout as an operation (detail::derivation): one mode per dim. After a
/// diagnostic on the sizes (not positive, overflowing) or the dims (none), a placeholder of
/// size-1 dims: no cascade.
template <class... Dims>
struct root_op {
  static constexpr auto draft() {
    if constexpr (sizeof...(Dims) == 0) {
      return root<1>({1});
    } else {
      int sizes[] = {Dims::size...};
      const bool fits = resolve_sizes({.given = sizes, .n = sizeof...(Dims), .unknowns = sizeof...(Dims)}).fault !=
                        size_fault::overflow;
      for (int& s : sizes)
        if (!fits || (s <= 0 && s != dynamic_size)) s = 1;
      return root(sizes);
    }
  }
};

template <class... Dims>
using root_base = basic_mesh<derivation<root_op<Dims...>>::exact.value, names<typename Dims::name_type...>>;

/// Any mesh type: a basic_mesh or a type derived from one (mesh<...>).
template <auto L, class Names>
void as_basic_mesh(const basic_mesh<L, Names>&);
template <class T>
concept is_mesh = requires(const T& t) { detail::as_basic_mesh(t); };

/// The names of the dynamic dims among Dims, as dims<...> (for diagnostics).
template <class Acc, class... Dims>
struct dynamic_names {
  using type = Acc;
};
template <class... N, class D, class... Dims>
struct dynamic_names<dims<N...>, D, Dims...>
    : dynamic_names<std::conditional_t<D::is_dynamic, dims<N..., typename D::name_type>, dims<N...>>, Dims...> {};
}  // namespace detail

/// A device mesh layout: its dims, in order, each dim<"name", size>. Sizes are static
/// or dynamic_size (set at construction, or inferred by for_world).
///   using mesh3d = mesh<dim<"dp", 2>, dim<"cp", 2>, dim<"tp", 2>>;
// (The comment on the next line is part of the diagnostic: compilers quote this line
// when a mesh argument is not a dim.)
template <dim_spec... Dims>  // devmesh: every argument of mesh<...> must be a dim<"name", size>
class mesh : public detail::root_base<Dims...> {
  static_assert(detail::check_root<Dims...>());
  using base = detail::root_base<Dims...>;
  using values_base = typename base::values_base;
  static constexpr int num_dynamic = ((Dims::size == dynamic_size ? 1 : 0) + ... + 0);
  static constexpr int static_sizes[sizeof...(Dims) > 0 ? sizeof...(Dims) : 1] = {Dims::size...};
  static constexpr const std::string_view* names_of = base::names_type::views;  // valid indices: unchecked

 public:
  // Unconstrained on purpose (nvcc 13 crashes on a constrained constructor in a derived
  // class template). A dynamic mesh has no sizes to default to: constructing one this way
  // is a devmesh: diagnostic naming its dynamic dims, not a "deleted function" error.
  /// A fully static mesh (an empty object); for a mesh with dynamic dims this is a devmesh:
  /// diagnostic naming them: give their sizes, or use for_world.
  DEVMESH_HOST_DEVICE constexpr mesh() : base(static_values()) {}

  /// Sizes for the dynamic dims, in order, or for every dim (static ones must match), as
  /// std::extents takes them; a fully static mesh takes every dim's size, checked. Sizes
  /// are integers: anything else (bool, char, double, a pointer, ...) is a devmesh:
  /// diagnostic naming the dim. Throws mesh_error on a size that does not fit in an int
  /// (quoting the value as given), is not positive, or differs from a static size.
  template <class... I>
    requires(sizeof...(I) > 0 && !(detail::is_mesh<I> || ...))  // meshes convert (below)
  constexpr explicit mesh(I... sizes) : base(make(sizes...)) {}

  /// The same mesh as another mesh type with the same names and layout structure, implicitly
  /// (as basic_mesh's converting constructors; a mesh of this layout converts too):
  /// mesh<dim<"dp">, dim<"tp">> d = mesh<dim<"dp", 2>, dim<"tp", 4>>{};
  template <auto L2>
    requires(detail::same_structure<base::layout, L2> && !detail::explicit_conversion<base::layout, L2>)
  DEVMESH_HOST_DEVICE constexpr mesh(const basic_mesh<L2, typename base::names_type>& from) : base(from) {}
  /// The same mesh as another mesh type with the same names and layout structure, explicitly
  /// and checked: mesh<dim<"dp", 2>, dim<"tp", 4>> s(d);
  template <auto L2>
    requires(detail::same_structure<base::layout, L2> && detail::explicit_conversion<base::layout, L2>)
  DEVMESH_HOST_DEVICE constexpr explicit mesh(const basic_mesh<L2, typename base::names_type>& from) : base(from) {}

  /// The mesh whose one dynamic dim (if any) is inferred so that it spans `world` ranks.
  /// Throws mesh_error if the static sizes do not divide world.
  static mesh for_world(int world) {
    if constexpr (num_dynamic > 1) {
      detail::require<false, error::for_world_ambiguous<dims<typename Dims::name_type...>>>();
      return mesh(base(values_base{}));
    } else {
      // The static sizes at compile time; at run time only the world, a division.
      constexpr auto given = detail::resolve_given({.given = static_sizes, .n = base::ndim, .fixed = static_sizes});
      const auto r = detail::resolve_total(given, world);
      if (!r.ok()) detail::throw_world_error(r, world, r.inferred < 0 ? std::string_view() : names_of[r.inferred]);
      int sizes[base::ndim]{};
      for (int i = 0; i < base::ndim; ++i) sizes[i] = i == r.inferred ? r.inferred_size : static_sizes[i];
      return mesh(from_checked_sizes(sizes));
    }
  }

 private:
  DEVMESH_HOST_DEVICE static constexpr values_base static_values() {
    detail::require<base::is_static, error::default_constructed_dynamic_mesh<
                                         typename detail::dynamic_names<dims<>, Dims...>::type>>();
    return {};
  }
  /// The mesh of the given sizes, one per dim (checked: positive, static ones match, fits
  /// an int). A static mesh stores nothing, but its sizes are checked all the same.
  static constexpr base from_sizes(const int* sizes) {
    const auto r = detail::resolve_sizes({.given = sizes, .n = base::ndim, .fixed = static_sizes, .unknowns = 0});
    if (!r.ok()) fail_sizes(sizes, r);  // devmesh: a size is not positive, not the static size, or overflows
    return from_checked_sizes(sizes);
  }
  /// The mesh of the given sizes, one per dim, already resolved.
  static constexpr base from_checked_sizes(const int* sizes) {
    int inputs[sizeof...(Dims)]{};
    for (int i = 0, k = 0; i < base::ndim; ++i)
      if (static_sizes[i] == dynamic_size) inputs[k++] = sizes[i];
    return base(detail::evaluate<detail::root_op<Dims...>>(inputs));
  }
  template <class... I>
  static constexpr base make(I... given) {
    constexpr int n = static_cast<int>(sizeof...(I));
    if constexpr (n != num_dynamic && n != base::ndim) {
      detail::require<false, error::wrong_size_count<size_value<n>, size_value<num_dynamic>, size_value<base::ndim>>>();
      return base(values_base{});
    } else if constexpr (!check_size_types<I...>()) {
      return base(values_base{});  // no conversion after the diagnostic: no cascade
    } else {
      int in[n]{};
      int k = 0;
      ((in[k] = detail::size_as_int(given, names_of[dim_of_arg(k, n)]), ++k), ...);
      int sizes[base::ndim]{};
      for (int i = 0, j = 0; i < base::ndim; ++i)
        sizes[i] = n == base::ndim ? in[i] : static_sizes[i] == dynamic_size ? in[j++] : static_sizes[i];
      return from_sizes(sizes);
    }
  }
  /// The dim that size argument k of n is for: dim k if n == ndim, else the k-th dynamic dim.
  static constexpr int dim_of_arg(int k, int n) {
    for (int d = 0; d < base::ndim; ++d)
      if ((n == base::ndim || static_sizes[d] == dynamic_size) && k-- == 0) return d;
    return 0;
  }
  /// Fires size_not_integer<dim, type> for the first size argument that is not an integer.
  template <class... I>
  static constexpr bool check_size_types() {
    constexpr int bad = [] {
      constexpr bool ok[] = {detail::is_size_type<I>...};
      for (int k = 0; k < static_cast<int>(sizeof...(I)); ++k)
        if (!ok[k]) return k;
      return -1;
    }();
    if constexpr (bad >= 0)
      detail::require<false, error::size_not_integer<detail::name_of<typename base::names_type, dim_of_arg(bad, sizeof...(I))>,
                                                     typename detail::type_at<bad, I...>::type>>();
    return bad < 0;
  }
  // Not constexpr: in a constant expression (a static mesh given sizes) a bad size is a
  // compile error naming this function; at run time it throws, quoting the sizes as given.
  [[noreturn]] static void fail_sizes(const int* sizes, const detail::resolved_sizes& r) {
    detail::throw_sizes_error(r, names_of, static_sizes, sizes, base::ndim);
  }
};

}  // namespace devmesh

namespace std {
/// A root mesh hashes as its basic_mesh (so equal meshes hash alike, across types).
template <devmesh::dim_spec... Dims>
struct hash<devmesh::mesh<Dims...>> : hash<typename devmesh::mesh<Dims...>::basic_mesh> {};
}  // namespace std
