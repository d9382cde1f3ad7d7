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
    } else if constexpr (cut_at_compile_time<index<N>, New...>::value) {
      using op = typename cut_at_compile_time<index<N>, New...>::op;
      if constexpr (!checks::template check_cut<N, op, New...>()) {
        return *this;  // a diagnostic has fired
      } else {
        check_unflatten_sizes<index<N>, New::size...>();  // devmesh: the new sizes do not multiply to the dim's size
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
    constexpr int given = static_cast<int>(sizeof...(I)), all = static_cast<int>(sizeof...(New));
    constexpr int dynamic_new = ((New::size == dynamic_size ? 1 : 0) + ... + 0);
    if constexpr (!checks::template check_unflatten<N, true, New...>()) {
      return *this;  // a diagnostic has fired; a harmless fallback, no cascade
    } else if constexpr (given != all && given != dynamic_new) {
      detail::require<false, error::unflatten_size_count<size_value<given>, size_value<dynamic_new>, size_value<all>>>();
      return *this;
    } else if constexpr (!checks::template check_run_time_cut<N, true, New...>()) {
      return *this;  // a diagnostic has fired
    } else {
      constexpr int fixed[] = {New::size...};
      const long long in[] = {static_cast<long long>(sizes)...};
      int all_sizes[all]{};
      for (int j = 0, k = 0; j < all; ++j) {
        const long long v = given == all ? in[j] : fixed[j] == dynamic_size ? in[k++] : fixed[j];
        all_sizes[j] = v == dynamic_size ? dynamic_size : v < 1 || v > INT_MAX ? 0 : static_cast<int>(v);
        if (all_sizes[j] == 0) fail_new_size<New...>(j, v);  // devmesh: not a positive int
      }
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
  /// Whether unflatten<N, New...>() cuts dim D at compile time (its one mode, or static
  /// values that tell how the sizes cut it), and that cut as an operation (an inferred size
  /// resolved where D's size is static).
  template <int D, class... New>
  struct cut_at_compile_time {
    static constexpr int given[] = {New::size...};
    static constexpr long long whole = L.static_dim(D) ? L.static_dim_size(D) : detail::no_total;
    static constexpr auto r = detail::resolve_sizes({.given = given, .n = sizeof...(New), .total = whole});
    static constexpr bool one_mode = L.count(D) <= 1;
    static constexpr int size_of_new(int j) {
      return !one_mode && given[j] == dynamic_size && r.ok() && r.inferred >= 0 ? r.inferred_size : given[j];
    }
    template <std::size_t... J>
    static auto make(std::index_sequence<J...>) -> typename base::template unflatten_op<D, size_of_new(J)...>;
    using op = decltype(make(std::index_sequence_for<New...>{}));
    static constexpr bool value = one_mode || (whole != detail::no_total && r.ok() && !op::cut.needs_values);
  };
  /// Dim D cut into New... with these sizes (dynamic_size: inferred), at run time: the sizes
  /// resolved against D's size, then PyTorch's cut of D's layout (cut.hpp); its pieces are the
  /// new dims' modes (unflatten_values_op). A fault throws mesh_error naming the dims.
  template <int D, class... New>
  DEVMESH_HOST_DEVICE constexpr auto cut_at_run_time(const int* given) const {
    constexpr int K = static_cast<int>(sizeof...(New));
    constexpr int fixed[] = {New::size...};
    const auto r = detail::resolve_sizes({.given = given, .n = K, .fixed = fixed, .total = this->size_of(D)});
    if (!r.ok()) fail_unflatten<New...>(D, r, given, fixed);  // devmesh: the new sizes do not fit the dim
    int sizes[K]{};
    for (int j = 0; j < K; ++j) sizes[j] = j == r.inferred ? r.inferred_size : given[j];
    const auto l = this->layout_of(D);
    const auto c = detail::cut_layout<L.nmodes, K>(l, sizes);
    if (c.fault >= 0) fail_cut<New...>(D, c, sizes);  // devmesh: PyTorch cannot cut the dim there
    using op = typename base::template unflatten_values_op<D, K>;
    constexpr int P = detail::pieces_per_new_dim(L, D);
    int inputs[L.ndynamic + 2 * K * P]{};
    for (int k = 0; k < L.ndynamic; ++k) inputs[k] = this->value(detail::dynamic_slot(k));
    const auto p = detail::place_values_of(l);
    long long low = 1;
    for (int j = K - 1; j >= 0; --j) {
      int* slot = inputs + L.ndynamic + 2 * j * P;
      for (int q = 0; q < P; ++q) {  // the pieces, then size-1 modes at the dim's place
        const bool piece = q < c.count[j];
        slot[2 * q] = piece ? c.shape[j][q] : 1;
        slot[2 * q + 1] = piece ? c.stride[j][q] : detail::stride_at(p, low, l);
      }
      low *= sizes[j];
    }
    using result = typename detail::derived_mesh<op, Names, names<typename New::name_type...>>::type;
    return result(detail::evaluate<op>(inputs));
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
  /// Run-time sizes that do not fit dim d (as fail_unflatten, naming the new dim at fault).
  template <class... New>
  [[noreturn]] DEVMESH_HOST_DEVICE void fail_unflatten(int d, const detail::resolved_sizes& r, const int* sizes,
                                                       const int* fixed) const {
#if DEVMESH_DEVICE_PASS
    (void)d, (void)r, (void)sizes, (void)fixed;
    __trap();
    __builtin_unreachable();
#else
    const std::string_view* views = names<typename New::name_type...>::views;
    detail::throw_new_sizes_error(r, Names::views[d], this->size_of(d), views, sizes, fixed, sizeof...(New));
#endif
  }
  template <class... New>
  [[noreturn]] DEVMESH_HOST_DEVICE static void fail_new_size(int j, long long v) {
#if DEVMESH_DEVICE_PASS
    (void)j, (void)v;
    __trap();
    __builtin_unreachable();
#else
    detail::throw_new_size_error(names<typename New::name_type...>::views[j], v);
#endif
  }
  /// PyTorch cannot cut dim d at new dim c.fault's end: the message names it, its size, d,
  /// the dim of this mesh it falls inside and the sizes that would work.
  template <class... New, int M, int K>
  [[noreturn]] DEVMESH_HOST_DEVICE void fail_cut(int d, const detail::layout_cut<M, K>& c, const int* sizes) const {
#if DEVMESH_DEVICE_PASS
    (void)d, (void)c, (void)sizes;
    __trap();
    __builtin_unreachable();
#else
    const std::string_view* views = names<typename New::name_type...>::views;
    const auto l = this->layout_of(d);
    const int in = checks::dim_with_mode(d, L.first[d] + c.fault_mode);
    int work[32]{};
    const int nwork = detail::sizes_that_would_cut(l, c.below, work);
    detail::throw_cut_error({.new_dim = views[c.fault], .size = sizes[c.fault], .dim = Names::views[d],
                             .inside = Names::views[in], .inside_size = this->size_of(in), .shape = l.shape,
                             .stride = l.stride, .modes = l.count, .below = c.below, .work = work, .nwork = nwork});
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
