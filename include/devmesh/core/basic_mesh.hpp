// devmesh/core/basic_mesh.hpp: basic_mesh<L, Names>, every mesh: a root (mesh<dim...>, mesh.hpp)
// or one derived from it by slice, flatten, unflatten or concatenate.
//
// L is a layout value (layout.hpp): every dim's (shape : stride) modes over the root
// mesh's rank space. Static values live in L, so a fully static mesh is an empty object and
// every query is a constant expression; dynamic values are stored in the object, as
// std::extents does. basic_mesh is an indexed_mesh<L> (indexed_mesh.hpp: the values and the
// position arithmetic) with names: queries by name resolve the name at compile time, so at
// run time they are the bare digit arithmetic. Two meshes with the same names and layout are
// one type, and a mesh converts to another type of the same structure (conversion.hpp).
#pragma once
#include <array>
#include <string_view>
#include <type_traits>

#include "algebra.hpp"
#include "concatenation.hpp"
#include "config.hpp"
#include "conversion.hpp"
#include "derivation.hpp"
#include "diagnostics.hpp"
#include "dim.hpp"
#include "fixed_string.hpp"
#include "group.hpp"
#include "indexed_mesh.hpp"
#include "layout.hpp"
#include "mesh_checks.hpp"
#include "names.hpp"
#include "queries.hpp"  // the free forms of its named members (dm::size<"tp">(m), ...)
#include "sizes.hpp"

namespace devmesh {

/// A mesh with layout L and dim names Names: an indexed_mesh<L> plus the queries by name
/// (and by checked dim index), and the derivations (slice, flatten, unflatten, concatenate).
template <auto L, class Names>
class basic_mesh : public indexed_mesh<L> {
  static_assert(detail::check_mesh_names<Names>());
  using base = indexed_mesh<L>;
  using checks = detail::mesh_checks<L, Names>;
  template <auto, class>
  friend class basic_mesh;
  template <dim_spec...>
  friend class mesh;

  template <fixed_string N>
  static constexpr int index = checks::template index<N>;

 public:
  using names_type = Names;
  using base::group;
  using base::is_static;
  using base::ndim;
  using base::size;

  /// A fully static mesh: an empty object (dynamic meshes take their sizes, see mesh).
  DEVMESH_HOST_DEVICE constexpr basic_mesh()
    requires is_static
  {}
  /// The same mesh as another type of the same names and layout structure (conversion.hpp),
  /// implicitly: every static value of this type is static and equal in `from` (static ->
  /// dynamic); where both values are static and differ, a compile error naming the dim.
  template <auto L2>
    requires(detail::converts<L, L2> && !detail::explicit_conversion<L, L2>)
  DEVMESH_HOST_DEVICE constexpr basic_mesh(const basic_mesh<L2, Names>& from)
      : base(detail::converted_values<L, Names>(from)) {}
  /// The same mesh as another type of the same names and layout structure, explicitly: some
  /// static value of this type is dynamic in `from` (dynamic -> static), and checked at run
  /// time (mesh_error naming the dim and both values; a trap in device code).
  template <auto L2>
    requires(detail::converts<L, L2> && detail::explicit_conversion<L, L2>)
  DEVMESH_HOST_DEVICE constexpr explicit basic_mesh(const basic_mesh<L2, Names>& from)
      : base(detail::converted_values<L, Names>(from)) {}

  /// The mesh of this type whose layout values are `shape[i]` and `stride[i]` for every mode
  /// i (dims in order, aliases last: what mode_shape(i) and mode_stride(i) give back) and
  /// `root` positions: a mesh rebuilt from values held without its type (the runtime keeps
  /// its root so). Checked as an explicit conversion is: a static value of this type that
  /// differs, or a value of this type given two different ones, throws mesh_error naming the dim.
  static constexpr basic_mesh from_values(const int* shape, const int* stride, int root) {
    constexpr auto D = detail::all_dynamic(L);
    typename basic_mesh<D, Names>::values_base values{};
    for (int i = 0; i < L.nmodes; ++i) values.v[i] = shape[i], values.v[L.nmodes + i] = stride[i];
    values.v[2 * L.nmodes] = root;
    return basic_mesh(basic_mesh<D, Names>(values));
  }

  /// Index of dim N (aliases after the mesh's own dims); unknown names do not compile.
  template <fixed_string N>
  DEVMESH_HOST_DEVICE static constexpr int dim_index() {
    return index<N>;
  }
  /// Name of dim d, d in [0, ndim_with_aliases) (host only).
  static constexpr std::string_view name(int d) {
    check_dim_index(d);
    return Names::views[d];
  }

  // ---- sizes and layouts by dim --------------------------------------------------------
  /// Size of the named dim (mesh dim or alias).
  template <fixed_string N>
  DEVMESH_HOST_DEVICE constexpr int size() const {
    return this->size_of(index<N>);
  }
  /// Size of dim d, d in [0, ndim_with_aliases): PyTorch's size(mesh_dim) for d < ndim, and
  /// the aliases after (the indices dim_index returns).
  DEVMESH_HOST_DEVICE constexpr int size(int d) const {
    check_dim_index(d);  // devmesh: dim index out of range
    return this->size_of(d);
  }
  /// Size of dim d, d in [0, ndim_with_aliases) (as size(d)).
  DEVMESH_HOST_DEVICE constexpr int dim_size(int d) const { return size(d); }
  /// Dim d's layout, d in [0, ndim_with_aliases), values resolved: CuTe's (shape : stride) of
  /// the dim; dim_layout(d).coalesce() is its group key.
  DEVMESH_HOST_DEVICE constexpr devmesh::dim_layout<L.nmodes> dim_layout(int d) const {
    check_dim_index(d);  // devmesh: dim index out of range
    return this->layout_of(d);
  }

  // ---- position <-> coordinate ---------------------------------------------------------
  /// Local rank of `position` along the named dim (PyTorch get_local_rank).
  template <fixed_string N>
  DEVMESH_HOST_DEVICE constexpr int local_rank(int position) const {
    this->check_position(position);
    return this->coordinate_unchecked(position, index<N>);
  }
  /// The position at coordinate c, in the (sub)mesh that contains position `member`
  /// (default: the one containing position 0; for a root mesh there is only one).
  DEVMESH_HOST_DEVICE constexpr int rank_at(const std::array<int, L.nprimary>& c, int member = 0) const {
    this->check_position(member);
    int r = this->base_of(member, 0, L.first[ndim]);
    for (int d = 0; d < ndim; ++d) {
      if (c[d] < 0 || c[d] >= this->size_of(d)) fail_coordinate(d, c[d]);  // devmesh: coordinate out of range
      int rest = c[d];
      for (int m = L.first[d + 1] - 1; m >= L.first[d]; --m) {
        r += (rest % this->mode_shape(m)) * this->mode_stride(m);
        rest /= this->mode_shape(m);
      }
    }
    return r;
  }

  // ---- groups --------------------------------------------------------------------------
  /// The positions of the submesh spanned by dims Ns... that contains `position`, row-major
  /// in the order given (so a transposed order gives the transposed order). O(ndim).
  template <fixed_string... Ns>
  DEVMESH_HOST_DEVICE constexpr auto group(int position) const {
    using sel = typename checks::template selection<Ns...>;
    if constexpr (!sel::ok) {
      checks::template check_selection<Ns...>();
      return group(position);  // after the diagnostic: a harmless fallback, no cascade
    } else {
      this->check_position(position);
      constexpr auto modes = sel::modes;  // a local copy: device code cannot read the static
      return this->template group_over<sel::count>(position, modes.m);
    }
  }
  /// (color, key) for splitting a communicator into the groups of dims Ns...: color is the
  /// group's first position, key the index of `position` in it (the split keeps the order).
  template <fixed_string... Ns>
  DEVMESH_HOST_DEVICE constexpr split_args comm_split(int position) const {
    using sel = typename checks::template selection<Ns...>;
    if constexpr (!sel::ok) {
      checks::template check_selection<Ns...>();
      return {0, 0};  // after the diagnostic: a harmless fallback, no cascade
    } else {
      this->check_position(position);
      constexpr auto modes = sel::modes;
      return this->split_over(position, modes.m, sel::count);
    }
  }
  /// (color, key) for dim d by index, d in [0, ndim_with_aliases): for code that loops over dims.
  DEVMESH_HOST_DEVICE constexpr split_args comm_split(int position, int d) const {
    this->check_position(position);
    check_dim_index(d);
    return this->split_of_dim(position, d);
  }

  // ---- deriving meshes -----------------------------------------------------------------
  /// The submesh spanned by dims Ns... (any dims, aliases too, in any order). Its groups
  /// are this mesh's groups; its order follows the order given.
  template <fixed_string... Ns>
  DEVMESH_HOST_DEVICE constexpr auto slice() const {
    if constexpr (sizeof...(Ns) == 0) {
      detail::require<false, error::slice_without_dims<typename detail::as_existing<Names>::type>>();
      return *this;
    } else if constexpr (!checks::template selection<Ns...>::ok) {
      return *this;  // a diagnostic has fired; a harmless fallback, no cascade
    } else {
      return derive<typename base::template slice_op<index<Ns>...>, names<>>();
    }
  }
  /// One dim as a 1-D submesh: m["tp"_dim] is m.slice<"tp">().
  /// (Takes any dim_name<N>; deduced through a tag because nvcc 13 cannot deduce a
  /// class-type NTTP from dim_name<N>.)
  template <class Tag>
    requires requires { typename Tag::devmesh_dim_name_tag; }
  DEVMESH_HOST_DEVICE constexpr auto operator[](Tag) const {
    return slice<Tag::value>();
  }
  /// This mesh plus an alias dim `Alias` flattening dims Ns... (adjacent or not, in the
  /// given order): usable wherever a dim name is. With no Ns, the whole mesh becomes one
  /// dim named Alias (PyTorch's _flatten); its former dims stay reachable as aliases.
  /// With no Alias either, the name is PyTorch's default: the dims' names joined by '_'.
  /// As in PyTorch, a 1-D mesh flattened into its own dim's name is itself.
  template <fixed_string Alias = detail::default_flatten_name<Names, ndim>, fixed_string... Ns>
  DEVMESH_HOST_DEVICE constexpr auto flatten() const {
    if constexpr (sizeof...(Ns) == 0 && ndim == 1 && std::is_same_v<name_t<Alias>, detail::name_of<Names, 0>>) {
      return *this;
    } else if constexpr (!checks::template check_new_name<Alias>()) {
      return *this;  // a diagnostic has fired; a harmless fallback, no cascade
    } else if constexpr (sizeof...(Ns) == 0) {
      return derive<typename base::flatten_all_op, names<name_t<Alias>>>();
    } else if constexpr (!checks::template check_flatten<Alias, Ns...>()) {
      return *this;
    } else {
      return derive<typename base::template flatten_op<index<Ns>...>, names<name_t<Alias>>>();
    }
  }
  /// Splits dim N into the given dims (PyTorch _unflatten), in its place. The product of
  /// their sizes must equal N's size; one of them may be dynamic and is then inferred.
  template <fixed_string N, dim_spec... New>
  DEVMESH_HOST_DEVICE constexpr auto unflatten() const {
    if constexpr (!checks::template check_unflatten<N, New...>()) {
      return *this;  // a diagnostic has fired; a harmless fallback, no cascade
    } else {
      using op = typename base::template unflatten_op<index<N>, New::size...>;
      if constexpr (!checks::template check_cut<N, op::cut.error_dim, op::sizes[op::cut.error_dim < 0 ? 0 : op::cut.error_dim]>()) {
        return *this;  // a diagnostic has fired
      } else {
        check_unflatten_sizes<index<N>, New::size...>();  // devmesh: the new sizes do not multiply to the dim's size
        return derive<op, names<typename New::name_type...>>();
      }
    }
  }
  /// This mesh's dims, then b's, as one mesh (PyTorch's _concatenate; aliases are not
  /// kept). Both must be meshes of one root whose dims share no positions' digits (e.g.
  /// m["dp"] and m.flatten<"cp_tp", "cp", "tp">()["cp_tp"], not m["dp"] and
  /// m.flatten<"dp_cp", "dp", "cp">()["dp_cp"]): a compile error naming the two dims where
  /// the sizes are static, else mesh_error. Dim names must differ (a compile error).
  template <auto L2, class N2>
  DEVMESH_HOST_DEVICE constexpr auto concatenate(const basic_mesh<L2, N2>& b) const {
    using op = typename base::template concat_op<L2>;
    using result = typename detail::derived_mesh<op, Names, detail::first_names<L2.nprimary, N2>>::type;
    if constexpr (!detail::check_concatenation<L, Names, L2, N2>()) {
      return *this;  // a diagnostic has fired; a harmless fallback, no cascade
    } else {
      detail::check_concatenation_values<Names, N2>(*this, b);
      int inputs[L.ndynamic + L2.ndynamic + 1]{};
      for (int k = 0; k < L.ndynamic; ++k) inputs[k] = this->value(detail::dynamic_slot(k));
      for (int k = 0; k < L2.ndynamic; ++k) inputs[L.ndynamic + k] = b.value(detail::dynamic_slot(k));
      if constexpr (result::is_static)
        return result{};
      else
        return result(detail::evaluate<op>(inputs));
    }
  }

 protected:
  using typename base::values_base;
  DEVMESH_HOST_DEVICE constexpr explicit basic_mesh(const values_base& v) : base(v) {}

 private:
  /// The mesh an operation on this mesh's layout gives (its inputs are this mesh's values).
  template <class Op, class NewNames>
  DEVMESH_HOST_DEVICE constexpr auto derive() const {
    using result = typename detail::derived_mesh<Op, Names, NewNames>::type;
    if constexpr (result::is_static)
      return result{};
    else if constexpr (is_static)
      return result(detail::evaluate<Op>(nullptr));
    else
      return result(detail::evaluate<Op>(this->values().v));
  }
  /// Fails unless the new sizes multiply to dim D's size (a dynamic one: divide it). The sizes
  /// are resolved at compile time; at run time only against a dynamic dim's size.
  template <int D, int... Sizes>
  DEVMESH_HOST_DEVICE constexpr void check_unflatten_sizes() const {
    constexpr int sizes[] = {Sizes...};
    constexpr auto given = detail::resolve_given({.given = sizes, .n = sizeof...(Sizes)});
    if constexpr (L.static_dim(D)) {
      constexpr auto r = detail::resolve_total(given, L.static_dim_size(D));
      if constexpr (!r.ok()) fail_unflatten(D, r);  // (a static size that an inferred one does not divide)
    } else {
      const auto r = detail::resolve_total(given, this->size_of(D));
      if (!r.ok()) fail_unflatten(D, r);
    }
  }

  DEVMESH_HOST_DEVICE static constexpr void check_dim_index(int d) {
    if (d < 0 || d >= L.ndims) fail_dim_index(d);  // devmesh: dim index out of range
  }
  // Not constexpr: reaching one in a constant expression is a compile error naming it
  // (g++ and clang also quote the calling line, whose comment says what went wrong). In
  // device code (no exceptions) they trap.
  [[noreturn]] DEVMESH_HOST_DEVICE void fail_coordinate(int d, int c) const {
#if DEVMESH_DEVICE_PASS
    (void)d, (void)c;
    __trap();
    __builtin_unreachable();
#else
    detail::throw_coordinate_error(Names::views[d], c, this->size_of(d));
#endif
  }
  [[noreturn]] DEVMESH_HOST_DEVICE static void fail_dim_index(int d) {
#if DEVMESH_DEVICE_PASS
    (void)d;
    __trap();
    __builtin_unreachable();
#else
    detail::throw_dim_index_error(d, Names::views, L.nprimary, L.ndims);
#endif
  }
  [[noreturn]] DEVMESH_HOST_DEVICE void fail_unflatten(int d, const detail::resolved_sizes& r) const {
#if DEVMESH_DEVICE_PASS
    (void)d, (void)r;
    __trap();
    __builtin_unreachable();
#else
    detail::throw_unflatten_error(r, Names::views[d], this->size_of(d));
#endif
  }
};

/// Two meshes are equal when they have the same dims (names, aliases included, in order),
/// the same root size and, for every dim, the same coalesced layout: the same groups in the
/// same order, whatever the types say (a static and a dynamic mesh of equal sizes are
/// equal). PyTorch compares the layouts' modes as written; devmesh compares them as
/// functions (docs/concepts.md, "Equality and hashing").
template <auto L1, class N1, auto L2, class N2>
DEVMESH_HOST_DEVICE constexpr bool operator==(const basic_mesh<L1, N1>& a, const basic_mesh<L2, N2>& b) {
  if constexpr (!std::is_same_v<N1, N2> || L1.nprimary != L2.nprimary) {
    return false;
  } else {
    if (a.root_size() != b.root_size()) return false;
    for (int d = 0; d < L1.ndims; ++d)
      if (!(a.dim_layout(d).coalesce() == b.dim_layout(d).coalesce())) return false;
    return true;
  }
}

namespace detail {
/// A hash of what operator== compares (names, root size, coalesced layouts), FNV-1a style.
template <auto L, class Names>
std::size_t hash_mesh(const basic_mesh<L, Names>& m) {
  std::size_t h = 14695981039346656037ULL;
  const auto mix = [&h](std::size_t v) { h = (h ^ v) * 1099511628211ULL; };
  mix(static_cast<std::size_t>(L.nprimary));
  mix(static_cast<std::size_t>(m.root_size()));
  for (int d = 0; d < L.ndims; ++d) {
    mix(std::hash<std::string_view>{}(Names::views[d]));
    mix(hash_layout(m.dim_layout(d).coalesce()));
  }
  return h;
}
}  // namespace detail

}  // namespace devmesh

namespace std {
/// Meshes as keys of unordered containers: equal meshes (operator==) hash alike, across types.
template <auto L, class Names>
struct hash<devmesh::basic_mesh<L, Names>> {
  /// The mesh's hash (devmesh::detail::hash_mesh).
  std::size_t operator()(const devmesh::basic_mesh<L, Names>& m) const { return devmesh::detail::hash_mesh(m); }
};
}  // namespace std
