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
#include <climits>
#include <cstddef>
#include <initializer_list>
#include <string_view>
#include <type_traits>
#include <utility>

#include "algebra.hpp"
#include "concatenation.hpp"
#include "config.hpp"
#include "conversion.hpp"
#include "cut.hpp"
#include "derivation.hpp"
#include "diagnostics.hpp"
#include "dim.hpp"
#include "dynamic_slice.hpp"
#include "fixed_string.hpp"
#include "group.hpp"
#include "indexed_mesh.hpp"
#include "layout.hpp"
#include "mesh_checks.hpp"
#include "names.hpp"
#include "queries.hpp"  // the free forms of its named members (dm::size<"tp">(m), ...)
#include "sizes.hpp"
#include "unflatten.hpp"

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
  /// Index of the dim named `name` at run time (aliases after the mesh's own dims); an
  /// unknown name throws mesh_error naming it and the dims that exist (host only).
  static constexpr int dim_index(std::string_view name) {
    for (int d = 0; d < L.ndims; ++d)
      if (Names::views[d] == name) return d;
    detail::throw_unknown_dim(name, Names::views, L.nprimary, L.ndims);
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
    for (int d = 0; d < ndim; ++d)
      if (c[d] < 0 || c[d] >= this->size_of(d)) detail::fail_coordinate<Names>(d, c[d], this->size_of(d));  // devmesh: coordinate out of range
    return this->position_at(c.data(), member);
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
  /// The submesh of dims chosen at run time, by name or index (PyTorch's mesh[names] with the
  /// names in a variable, TorchTitan's get_activated_mesh): a dynamic_slice, whose queries
  /// answer as slice<...>() of the same dims would. An unknown name, a repeat or an alias named
  /// with one of its own dims throws mesh_error with the compile-time diagnostic's text,
  /// naming the dim and the dims that exist. (Host only.)
  dynamic_slice<basic_mesh> slice(std::initializer_list<std::string_view> names) const { return {*this, names}; }
  /// The dims of these indices (the mesh's own [0, ndim), then its aliases), as slice(names).
  dynamic_slice<basic_mesh> slice(std::initializer_list<int> indices) const { return {*this, indices}; }
  /// The dims a range names (strings, indices, or dim references with by_name(), name() and
  /// index(), as the runtime's dm::dim_ref), as slice(names).
  template <class Range>
    requires requires(const Range& r) { r.begin() != r.end(); }
  dynamic_slice<basic_mesh> slice(const Range& dims) const {
    return {*this, dims};
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
  /// their sizes must equal N's size; one of them may be dynamic and is then inferred. The cut
  /// is PyTorch's (docs/concepts.md, "Unflattening"): N's layout coalesced, then cut where
  /// the new sizes end; a size PyTorch refuses is a compile error naming the new dim, its size,
  /// the dim it falls inside and the sizes that would work (a mesh_error where N's layout is
  /// only known at run time). Aliases whose ranks the new dims cut across are dropped.
  template <fixed_string N, dim_spec... New>
  DEVMESH_HOST_DEVICE constexpr auto unflatten() const {
    if constexpr (!checks::template check_unflatten<N, false, New...>()) {
      return *this;  // a diagnostic has fired; a harmless fallback, no cascade
    } else if constexpr (detail::compile_time_cut<L, index<N>, New...>::value) {
      using op = decltype(compile_time_cut_op<index<N>, New...>(std::index_sequence_for<New...>{}));
      if constexpr (!checks::template check_cut<N, op, New...>()) {
        return *this;  // a diagnostic has fired
      } else {
        detail::check_unflatten_sizes<L, Names, index<N>, New::size...>(this->size_of(index<N>));  // devmesh: the new sizes do not multiply to the dim's size
        return derive<op, names<typename New::name_type...>>();
      }
    } else if constexpr (!checks::template check_run_time_cut<N, false, New...>()) {
      return *this;  // a diagnostic has fired
    } else {
      const int sizes[] = {New::size...};
      return cut_at_run_time<index<N>, New...>(sizes);
    }
  }
  /// unflatten<N, New...>() with the new sizes given at run time (PyTorch's
  /// `_unflatten(dim, sizes, names)`, the names still in the type): one size per dynamic new
  /// dim in order, or one per new dim (a static one must match); one size may be
  /// dm::dynamic_size, inferred from N's size. The result is a dynamic mesh; every size is
  /// checked at run time (mesh_error naming the dim: a size that is not positive or differs
  /// from its static size, a product that is not N's size, a cut PyTorch refuses, with the
  /// sizes that would work). Sizes are integers (as mesh<...>'s constructor takes them).
  template <fixed_string N, dim_spec... New, class... I>
    requires(sizeof...(I) > 0 && (std::is_integral_v<I> && ...))
  DEVMESH_HOST_DEVICE constexpr auto unflatten(I... sizes) const {
    if constexpr (!checks::template check_unflatten<N, true, New...>()) {
      return *this;  // a diagnostic has fired; a harmless fallback, no cascade
    } else if constexpr (!detail::check_new_size_count<sizeof...(I), New...>()) {
      return *this;  // a diagnostic has fired
    } else if constexpr (!checks::template check_run_time_cut<N, true, New...>()) {
      return *this;  // a diagnostic has fired
    } else {
      int all_sizes[sizeof...(New)]{};
      detail::read_new_sizes<New...>(all_sizes, sizes...);
      return cut_at_run_time<index<N>, New...>(all_sizes);
    }
  }
  /// This mesh's dims, then b's, as one mesh (PyTorch's _concatenate; aliases are not
  /// kept). Both must be meshes of one root whose dims share no positions' digits (e.g.
  /// m["dp"] and m.flatten<"cp_tp", "cp", "tp">()["cp_tp"], not m["dp"] and
  /// m.flatten<"dp_cp", "dp", "cp">()["dp_cp"]): a compile error naming the two dims where
  /// the sizes are static, else mesh_error. Dim names must differ (a compile error).
  template <auto L2, class N2>
  DEVMESH_HOST_DEVICE constexpr auto concatenate(const basic_mesh<L2, N2>& b) const {
    if constexpr (!detail::check_concatenation<L, Names, L2, N2>()) {
      return *this;  // a diagnostic has fired; a harmless fallback, no cascade
    } else {
      detail::check_concatenation_values<Names, N2>(*this, b);
      const detail::concatenated_values<L.ndynamic, L2.ndynamic> inputs(this->dynamic_values(), b.dynamic_values());
      return derive_from<typename base::template concat_op<L2>, detail::first_names<L2.nprimary, N2>>(inputs.v);
    }
  }

 protected:
  using typename base::values_base;
  DEVMESH_HOST_DEVICE constexpr explicit basic_mesh(const values_base& v) : base(v) {}

 private:
  /// The mesh an operation on this mesh's layout gives, from the operation's inputs: this
  /// mesh's dynamic values, then any others (derive: this mesh's alone).
  template <class Op, class NewNames>
  DEVMESH_HOST_DEVICE static constexpr auto derive_from(const int* inputs) {
    using result = typename detail::derived_mesh<Op, Names, NewNames>::type;
    if constexpr (result::is_static)
      return result{};
    else
      return result(detail::evaluate<Op>(inputs));
  }
  template <class Op, class NewNames>
  DEVMESH_HOST_DEVICE constexpr auto derive() const {
    return derive_from<Op, NewNames>(this->dynamic_values());
  }
  /// The operation of unflatten<N, New...>() cut at compile time (detail::compile_time_cut).
  template <int D, class... New, std::size_t... J>
  static auto compile_time_cut_op(std::index_sequence<J...>)
      -> typename base::template unflatten_op<D, detail::compile_time_cut<L, D, New...>::size_of_new(J)...>;
  /// Dim D cut into New... with these sizes (dynamic_size: inferred), at run time: the new
  /// dims' values (detail::cut_values) after this mesh's own, as unflatten_values_op reads them.
  template <int D, class... New>
  DEVMESH_HOST_DEVICE constexpr auto cut_at_run_time(const int* given) const {
    constexpr int K = static_cast<int>(sizeof...(New));
    int inputs[L.ndynamic + 2 * K * detail::pieces_per_new_dim(L, D)]{};
    detail::cut_values<basic_mesh, D, New...>(*this, this->dynamic_values(), given, inputs);
    return derive_from<typename base::template unflatten_values_op<D, K>, names<typename New::name_type...>>(inputs);
  }

  DEVMESH_HOST_DEVICE static constexpr void check_dim_index(int d) {
    if (d < 0 || d >= L.ndims) detail::fail_dim_index<Names, L.nprimary, L.ndims>(d);  // devmesh: dim index out of range
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
