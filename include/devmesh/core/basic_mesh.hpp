// devmesh/core/basic_mesh.hpp: basic_mesh<L, Names>, every mesh: a root (mesh<dim...>, mesh.hpp)
// or one derived from it by slice, flatten or unflatten.
//
// L is a layout value (layout.hpp): every dim's (shape : stride) modes over the root
// mesh's rank space. Static values live in L, so a fully static mesh is an empty object and
// every query is a constant expression; dynamic values are stored in the object, as
// std::extents does. Named queries resolve the name at compile time, so at run time they
// are the bare digit arithmetic. Two meshes with the same names and layout are one type.
#pragma once
#include <array>
#include <climits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "algebra.hpp"
#include "config.hpp"
#include "diagnostics.hpp"
#include "dim.hpp"
#include "fixed_string.hpp"
#include "group.hpp"
#include "layout.hpp"
#include "mesh_checks.hpp"
#include "names.hpp"

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

/// The run-time values of a mesh with N dynamic values (none: an empty base).
template <int N>
struct mesh_values {
  int v[N]{};
};
template <>
struct mesh_values<0> {};

/// The names of a derived mesh: dim j keeps its parent's name (source >= 0) or takes the
/// k-th new name (source == -(k+1)), i.e. entry nold + k of the parent's names followed by
/// the new ones: one indexed list, one lookup per dim.
template <class Op, class OldNames, class NewNames, class Seq>
struct derive_names;
template <class Op, class... Old, class... New, std::size_t... J>
struct derive_names<Op, names<Old...>, names<New...>, std::index_sequence<J...>> {
  static constexpr int entry(int s) { return s >= 0 ? s : static_cast<int>(sizeof...(Old)) - 1 - s; }
  using all = name_list<std::index_sequence_for<Old..., New...>, Old..., New...>;
  using type = names<typename decltype(pick<entry(derivation<Op>::exact.source[J])>(all{}))::type...>;
};

/// The mesh type an operation's result describes, with the names of its new dims.
template <class Op, class OldNames, class NewNames>
struct derived_mesh {
  static constexpr auto layout = derivation<Op>::exact.value;
  using names_type = typename derive_names<Op, OldNames, NewNames, std::make_index_sequence<layout.ndims>>::type;
  using type = basic_mesh<layout, names_type>;
};

}  // namespace detail

template <auto L, class Names>
class basic_mesh : private detail::mesh_values<L.ndynamic> {
  static_assert(detail::check_mesh_names<Names>());
  using values_base = detail::mesh_values<L.ndynamic>;
  using checks = detail::mesh_checks<L, Names>;
  template <auto, class>
  friend class basic_mesh;
  template <dim_spec...>
  friend class mesh;

  template <fixed_string N>
  static constexpr int index = checks::template index<N>;

 public:
  using names_type = Names;
  /// The layout: every dim's modes (shape : stride) over the root's rank space.
  static constexpr auto layout = L;
  /// Number of dims (aliases excluded), as PyTorch's ndim.
  static constexpr int ndim = L.nprimary;
  /// Number of dims including aliases.
  static constexpr int ndim_with_aliases = L.ndims;
  /// True if every size is static: the object is empty and every query is constexpr.
  static constexpr bool is_static = L.is_static();

  /// A fully static mesh: an empty object (dynamic meshes take their sizes, see mesh).
  DEVMESH_HOST_DEVICE constexpr basic_mesh()
    requires is_static
  {}

  /// Index of dim N (aliases after the mesh's own dims); unknown names do not compile.
  template <fixed_string N>
  DEVMESH_HOST_DEVICE static constexpr int dim_index() {
    return index<N>;
  }
  /// Name of dim d (host only).
  static constexpr std::string_view name(int d) { return Names::views[d]; }

  // ---- the layout ----------------------------------------------------------------------
  /// Shape of mode m (modes of all dims, numbered in dim order; see layout.hpp).
  DEVMESH_HOST_DEVICE constexpr int mode_shape(int m) const { return value(L.shape[m]); }
  /// Stride of mode m in the root's rank space.
  DEVMESH_HOST_DEVICE constexpr int mode_stride(int m) const { return value(L.stride[m]); }
  /// Dim d's layout (aliases included), values resolved: CuTe's (shape : stride) of the dim.
  DEVMESH_HOST_DEVICE constexpr devmesh::dim_layout<L.nmodes> dim_layout(int d) const {
    devmesh::dim_layout<L.nmodes> out{};
    for (int m = L.first[d]; m < L.first[d + 1]; ++m) {
      out.shape[out.count] = mode_shape(m);
      out.stride[out.count++] = mode_stride(m);
    }
    return out;
  }

  // ---- sizes ---------------------------------------------------------------------------
  /// Size of dim d (by index, aliases included).
  DEVMESH_HOST_DEVICE constexpr int dim_size(int d) const {
    int n = 1;
    for (int m = L.first[d]; m < L.first[d + 1]; ++m) n *= mode_shape(m);
    return n;
  }
  /// Number of ranks in the mesh (product of its dims), as PyTorch's size().
  DEVMESH_HOST_DEVICE constexpr int size() const {
    int n = 1;
    for (int m = 0; m < L.first[ndim]; ++m) n *= mode_shape(m);
    return n;
  }
  /// Size of the named dim (mesh dim or alias).
  template <fixed_string N>
  DEVMESH_HOST_DEVICE constexpr int size() const {
    return dim_size(index<N>);
  }
  /// Size of dim d, 0 <= d < ndim (PyTorch's size(mesh_dim)).
  DEVMESH_HOST_DEVICE constexpr int size(int d) const {
    if (d < 0 || d >= ndim) fail_dim_index(d);  // devmesh: dim index out of range
    return dim_size(d);
  }
  /// The sizes of the mesh's dims (aliases excluded), as PyTorch's mesh.shape.
  DEVMESH_HOST_DEVICE constexpr std::array<int, ndim> shape() const {
    std::array<int, ndim> s{};
    for (int d = 0; d < ndim; ++d) s[d] = dim_size(d);
    return s;
  }
  /// Number of ranks of the root mesh this mesh was derived from (its rank space).
  DEVMESH_HOST_DEVICE constexpr int root_size() const { return value(L.root); }

  // ---- rank <-> coordinate -------------------------------------------------------------
  /// Coordinate of rank r along dim d (by index). Unchecked: r must be in [0, root_size()).
  DEVMESH_HOST_DEVICE constexpr int coordinate_unchecked(int r, int d) const {
    int c = 0;
    for (int m = L.first[d]; m < L.first[d + 1]; ++m) c = c * mode_shape(m) + digit(r, m);
    return c;
  }
  /// Coordinate of global rank r in the (sub)mesh that contains it, row-major as PyTorch.
  DEVMESH_HOST_DEVICE constexpr std::array<int, ndim> coordinate(int r) const {
    check_rank(r);
    // Expanded over the dims at compile time: each coordinate is then a constant-index
    // digit extraction (a loop over d is not unrolled by g++ -O2).
    return coordinates_of(r, std::make_integer_sequence<int, ndim>{});
  }
  /// Local rank of global rank r along the named dim (PyTorch get_local_rank).
  template <fixed_string N>
  DEVMESH_HOST_DEVICE constexpr int local_rank(int r) const {
    check_rank(r);
    return coordinate_of<index<N>>(r);
  }
  /// Global rank at coordinate c, in the (sub)mesh that contains rank `member` (default:
  /// the one containing rank 0; for a root mesh there is only one).
  DEVMESH_HOST_DEVICE constexpr int rank_at(const std::array<int, ndim>& c, int member = 0) const {
    check_rank(member);
    int r = base_of(member, 0, L.first[ndim]);
    for (int d = 0; d < ndim; ++d) {
      if (c[d] < 0 || c[d] >= dim_size(d)) fail_coordinate(d, c[d]);  // devmesh: coordinate out of range
      int rest = c[d];
      for (int m = L.first[d + 1] - 1; m >= L.first[d]; --m) {
        r += (rest % mode_shape(m)) * mode_stride(m);
        rest /= mode_shape(m);
      }
    }
    return r;
  }

  // ---- groups --------------------------------------------------------------------------
  /// The ranks of the submesh spanned by dims Ns... that contains rank r, row-major in the
  /// order given (so a transposed order gives the transposed rank order). O(ndim).
  template <fixed_string... Ns>
  DEVMESH_HOST_DEVICE constexpr auto group(int r) const {
    using sel = typename checks::template selection<Ns...>;
    if constexpr (!sel::ok) {
      checks::template check_selection<Ns...>();
      return group(r);  // after the diagnostic: a harmless fallback, no cascade
    } else {
      check_rank(r);
      constexpr auto modes = sel::modes;  // a local copy: device code cannot read the static
      return group_over<sel::count>(r, modes.m);
    }
  }
  /// The ranks of this mesh (all its dims) that contain rank r: PyTorch's mesh tensor,
  /// flattened, on rank r.
  DEVMESH_HOST_DEVICE constexpr auto group(int r) const {
    check_rank(r);
    constexpr auto modes = detail::mode_list<L.first[ndim]>(0);
    return group_over<L.first[ndim]>(r, modes.m);
  }
  /// (color, key) for splitting a communicator into the groups of dims Ns...: color is the
  /// group's first rank, key the index of r in it (so the split keeps the mesh's order).
  template <fixed_string... Ns>
  DEVMESH_HOST_DEVICE constexpr split_args comm_split(int r) const {
    using sel = typename checks::template selection<Ns...>;
    if constexpr (!sel::ok) {
      checks::template check_selection<Ns...>();
      return {0, 0};  // after the diagnostic: a harmless fallback, no cascade
    } else {
      check_rank(r);
      constexpr auto modes = sel::modes;
      return split_over(r, modes.m, sel::count);
    }
  }
  /// (color, key) for dim d by index (aliases included): for code that loops over dims.
  DEVMESH_HOST_DEVICE constexpr split_args comm_split(int r, int d) const {
    check_rank(r);
    if (d < 0 || d >= L.ndims) fail_dim_index(d, L.ndims);
    // Dispatch to a compile-time dim: every index into the layout is then a constant
    // (and g++ 12 -O2 has no out-of-range path to warn about with -Warray-bounds).
    return split_of_dim(r, d, std::make_integer_sequence<int, L.ndims>{});
  }

  // ---- deriving meshes -----------------------------------------------------------------
  /// The submesh spanned by dims Ns... (any dims, aliases too, in any order). Its groups
  /// are this mesh's groups; its rank order follows the order given.
  template <fixed_string... Ns>
  DEVMESH_HOST_DEVICE constexpr auto slice() const {
    if constexpr (sizeof...(Ns) == 0) {
      detail::require<false, error::slice_without_dims<typename detail::as_existing<Names>::type>>();
      return *this;
    } else if constexpr (!checks::template selection<Ns...>::ok) {
      return *this;  // a diagnostic has fired; a harmless fallback, no cascade
    } else {
      return derive<slice_op<Ns...>, names<>>();
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
      return derive<flatten_all_op, names<name_t<Alias>>>();
    } else if constexpr (!checks::template check_flatten<Alias, Ns...>()) {
      return *this;
    } else {
      return derive<flatten_op<Ns...>, names<name_t<Alias>>>();
    }
  }
  /// Splits dim N into the given dims (PyTorch _unflatten), in its place. The product of
  /// their sizes must equal N's size; one of them may be dynamic and is then inferred.
  template <fixed_string N, dim_spec... New>
  constexpr auto unflatten() const {
    if constexpr (!checks::template check_unflatten<N, New...>()) {
      return *this;  // a diagnostic has fired; a harmless fallback, no cascade
    } else {
      using op = unflatten_op<N, New...>;
      if constexpr (!checks::template check_cut<N, op::cut.error_dim, op::sizes[op::cut.error_dim < 0 ? 0 : op::cut.error_dim]>()) {
        return *this;  // a diagnostic has fired
      } else {
        check_unflatten_sizes(index<N>, op::sizes);  // devmesh: the new sizes do not multiply to the dim's size
        return derive<op, names<typename New::name_type...>>();
      }
    }
  }
  /// This mesh's dims, then b's, as one mesh (PyTorch's _concatenate; aliases are not
  /// kept). Both must be meshes of one root whose dims share no ranks' digits (e.g.
  /// m["dp"] and m.flatten<"cp_tp", "cp", "tp">()["cp_tp"], not m["dp"] and
  /// m.flatten<"dp_cp", "dp", "cp">()["dp_cp"]): a compile error naming the two dims where
  /// the sizes are static, else mesh_error. Dim names must differ (a compile error).
  template <auto L2, class N2>
  constexpr auto concatenate(const basic_mesh<L2, N2>& b) const {
    using op = concat_op<L2>;
    using result = typename detail::derived_mesh<op, Names, detail::first_names<L2.nprimary, N2>>::type;
    if constexpr (!check_concatenation<L2, N2>()) {
      return *this;  // a diagnostic has fired; a harmless fallback, no cascade
    } else {
      check_concatenation_values(b);
      int inputs[L.ndynamic + L2.ndynamic + 1]{};
      for (int k = 0; k < L.ndynamic; ++k) inputs[k] = value(detail::dynamic_slot(k));
      for (int k = 0; k < L2.ndynamic; ++k) inputs[L.ndynamic + k] = b.value(detail::dynamic_slot(k));
      if constexpr (result::is_static)
        return result{};
      else
        return result(evaluate<op>(inputs));
    }
  }

 protected:
  DEVMESH_HOST_DEVICE constexpr explicit basic_mesh(const values_base& v) : values_base(v) {}

 private:
  /// A layout value: static (> 0) or a slot of this object's run-time values.
  DEVMESH_HOST_DEVICE constexpr int value(int v) const {
    if constexpr (is_static)
      return v;
    else
      return v > 0 ? v : this->values_base::v[-1 - v];
  }
  // The operations, as types (see detail::derivation): each computes its draft once.
  template <fixed_string... Ns>
  struct slice_op {
    static constexpr auto draft() {
      constexpr int sel[] = {index<Ns>...};
      return detail::slice<L.ndynamic>(L, sel);
    }
  };
  template <fixed_string... Ns>
  struct flatten_op {
    static constexpr auto draft() {
      constexpr int sel[] = {index<Ns>...};
      return detail::flatten_alias<L.ndynamic>(L, sel);
    }
  };
  struct flatten_all_op {
    static constexpr auto draft() { return detail::flatten_all<L.ndynamic>(L); }
  };
  template <auto L2>
  struct concat_op {
    static constexpr auto draft() { return detail::concatenate<L.ndynamic + L2.ndynamic>(L, L2); }
  };
  /// concatenate's compile-time checks, where both meshes are static: one root size, and no
  /// dim of one sharing digits with a dim of the other (the first such pair, by name).
  template <auto L2, class N2>
  static constexpr bool check_concatenation() {
    if constexpr (is_static && basic_mesh<L2, N2>::is_static) {
      using all_a = typename detail::as_existing<Names>::as_dims;
      using all_b = typename detail::as_existing<N2>::as_dims;
      if constexpr (L.root != L2.root) {
        detail::require<false, error::concatenated_roots_differ<all_a, all_b>>();
        return false;
      } else {
        constexpr auto bad = detail::first_shared_digits(L, L2);
        if constexpr (bad.first >= 0)
          detail::require<false, error::concatenated_dims_overlap<detail::name_of<Names, bad.first>,
                                                                  detail::name_of<N2, bad.second>, all_b>>();
        return bad.first < 0;
      }
    } else {
      return true;
    }
  }
  /// concatenate's run-time checks (values): one root size, no shared digits.
  template <auto L2, class N2>
  constexpr void check_concatenation_values(const basic_mesh<L2, N2>& b) const {
    if (root_size() != b.root_size())
      detail::throw_mesh_error(detail::message() << DEVMESH_MSG_CONCAT_ROOTS ": " << root_size() << " and "
                                                 << b.root_size() << " ranks");
    for (int i = 0; i < ndim; ++i)
      for (int j = 0; j < basic_mesh<L2, N2>::ndim; ++j)
        for (int m = L.first[i]; m < L.first[i + 1]; ++m)
          for (int n = L2.first[j]; n < L2.first[j + 1]; ++n)
            if (detail::modes_overlap(mode_shape(m), mode_stride(m), b.mode_shape(n), b.mode_stride(n)))
              detail::throw_mesh_error(detail::message() << DEVMESH_MSG_CONCAT_OVERLAP ": dims '" << name(i) << "' and '"
                                                         << basic_mesh<L2, N2>::name(j) << "'");
  }
  template <fixed_string N, class... New>
  struct unflatten_op {
    static constexpr int sizes[] = {New::size...};
    static constexpr auto cut = detail::unflatten<L.ndynamic>(L, index<N>, sizes);
    static constexpr auto draft() { return cut.value; }
  };

  /// The run-time values of the mesh an operation's draft describes: draft slot k is
  /// inputs[k] (the inputs come first) or the product or quotient of two earlier slots;
  /// exact.from picks the slots. Unrolled at compile time: straight-line code.
  template <class Op>
  DEVMESH_HOST_DEVICE static constexpr auto evaluate(const int* inputs) {
    constexpr auto e = detail::derivation<Op>::exact;  // local copies: device code cannot read the statics
    constexpr int slots = detail::derivation<Op>::draft.slots;
    detail::mesh_values<e.value.ndynamic> out{};
    if constexpr (e.value.ndynamic > 0 && detail::derivation<Op>::copies_only) {
      for (int j = 0; j < e.value.ndynamic; ++j) out.v[j] = inputs[e.from[j]];
    } else if constexpr (e.value.ndynamic > 0) {
      int slot[slots > 0 ? slots : 1]{};
      evaluate_slots<Op>(slot, inputs, std::make_integer_sequence<int, slots>{});
      for (int j = 0; j < e.value.ndynamic; ++j) out.v[j] = slot[e.from[j]];
    }
    return out;
  }
  template <class Op, int... K>
  DEVMESH_HOST_DEVICE static constexpr void evaluate_slots(int* slot, const int* inputs, std::integer_sequence<int, K...>) {
    ((slot[K] = evaluate_slot<Op, K>(slot, inputs)), ...);
  }
  template <class Op, int K>
  DEVMESH_HOST_DEVICE static constexpr int evaluate_slot(const int* slot, const int* inputs) {
    constexpr int op = detail::derivation<Op>::draft.op[K];
    if constexpr (op == detail::input) {
      return inputs[K];
    } else {
      constexpr int a = detail::derivation<Op>::draft.arg_a[K], b = detail::derivation<Op>::draft.arg_b[K];
      const int x = a > 0 ? a : slot[-1 - a];  // a recipe's arguments are static or earlier slots
      const int y = b > 0 ? b : slot[-1 - b];
      return op == detail::times ? x * y : x / y;
    }
  }
  /// The mesh an operation on this mesh's layout gives (its inputs are this mesh's values).
  template <class Op, class NewNames>
  DEVMESH_HOST_DEVICE constexpr auto derive() const {
    using result = typename detail::derived_mesh<Op, Names, NewNames>::type;
    if constexpr (result::is_static)
      return result{};
    else if constexpr (is_static)
      return result(evaluate<Op>(nullptr));
    else
      return result(evaluate<Op>(this->values_base::v));
  }
  /// Throws unless the new sizes multiply to dim d's size (a dynamic one divides it).
  template <int K>
  constexpr void check_unflatten_sizes(int d, const int (&sizes)[K]) const {
    const int whole = dim_size(d);
    long long known = 1;
    bool inferred = false;
    for (int s : sizes) {
      if (s == dynamic_size)
        inferred = true;
      else
        known *= s;
    }
    if (!(inferred ? whole % known == 0 : known == whole)) detail::throw_unflatten_error(name(d), whole, known, inferred);
  }

  /// Digit of rank r in mode m.
  DEVMESH_HOST_DEVICE constexpr int digit(int r, int m) const { return (r / mode_stride(m)) % mode_shape(m); }
  template <int D>
  DEVMESH_HOST_DEVICE constexpr int coordinate_of(int r) const {
    return coordinate_unchecked(r, D);
  }
  template <int... D>
  DEVMESH_HOST_DEVICE constexpr std::array<int, ndim> coordinates_of(int r, std::integer_sequence<int, D...>) const {
    return {coordinate_of<D>(r)...};
  }
  /// r minus its digits in modes [begin, end): the first rank of r's group over them.
  DEVMESH_HOST_DEVICE constexpr int base_of(int r, int begin, int end) const {
    int base = r;
    for (int m = begin; m < end; ++m) base -= digit(r, m) * mode_stride(m);
    return base;
  }
  /// (color, key) of r over the given modes: its group's first rank and its index there.
  DEVMESH_HOST_DEVICE constexpr split_args split_over(int r, const int* modes, int n) const {
    split_args out{r, 0};
    for (int i = 0; i < n; ++i) {
      const int dg = digit(r, modes[i]);
      out.key = out.key * mode_shape(modes[i]) + dg;
      out.color -= dg * mode_stride(modes[i]);
    }
    return out;
  }
  template <int K>
  DEVMESH_HOST_DEVICE constexpr rank_group<K> group_over(int r, const int* modes) const {
    int sizes[K > 0 ? K : 1]{};
    int strides[K > 0 ? K : 1]{};
    for (int i = 0; i < K; ++i) {
      sizes[i] = mode_shape(modes[i]);
      strides[i] = mode_stride(modes[i]);
    }
    return rank_group<K>(split_over(r, modes, K).color, sizes, strides);
  }
  template <int D>
  DEVMESH_HOST_DEVICE constexpr split_args split_of(int r) const {
    constexpr auto modes = detail::mode_list<L.first[D + 1] - L.first[D]>(L.first[D]);
    return split_over(r, modes.m, L.first[D + 1] - L.first[D]);
  }
  template <int... D>
  DEVMESH_HOST_DEVICE constexpr split_args split_of_dim(int r, int d, std::integer_sequence<int, D...>) const {
    split_args out{r, 0};
    ((d == D ? (void)(out = split_of<D>(r)) : (void)0), ...);
    return out;
  }

  DEVMESH_HOST_DEVICE constexpr void check_rank(int r) const {
#if !defined(DEVMESH_NO_RANK_CHECKS)
    if (r < 0 || r >= root_size()) fail_rank(r, root_size());  // devmesh: rank out of range
#else
    (void)r;
#endif
  }
  // Not constexpr: reaching one in a constant expression is a compile error naming it
  // (g++ and clang also quote the calling line, whose comment says what went wrong).
  [[noreturn]] DEVMESH_HOST_DEVICE static void fail_rank(int r, int n) {
#if DEVMESH_DEVICE_PASS
    (void)r, (void)n;
    __trap();
    __builtin_unreachable();
#else
    detail::throw_rank_error(r, n);
#endif
  }
  [[noreturn]] DEVMESH_HOST_DEVICE void fail_coordinate(int d, int c) const {
#if DEVMESH_DEVICE_PASS
    (void)d, (void)c;
    __trap();
    __builtin_unreachable();
#else
    detail::throw_coordinate_error(name(d), c, dim_size(d));
#endif
  }
  [[noreturn]] DEVMESH_HOST_DEVICE static void fail_dim_index(int d, int n = ndim) {
#if DEVMESH_DEVICE_PASS
    (void)d, (void)n;
    __trap();
    __builtin_unreachable();
#else
    detail::throw_dim_index_error(d, n);
#endif
  }
};

/// a's dims, then b's, then the rest's, as one mesh (PyTorch's DeviceMesh._concatenate), for
/// layouts and device meshes alike: concatenate(m["dp"_dim], m["tp"_dim]).
template <class A, class B, class... Rest>
constexpr auto concatenate(const A& a, const B& b, const Rest&... rest)
  requires requires { a.concatenate(b); }
{
  if constexpr (sizeof...(Rest) == 0)
    return a.concatenate(b);
  else
    return concatenate(a.concatenate(b), rest...);
}

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
    const auto c = m.dim_layout(d).coalesce();
    for (int i = 0; i < c.count; ++i) {
      mix(static_cast<std::size_t>(c.shape[i]));
      mix(static_cast<std::size_t>(c.stride[i]));
    }
    mix(0x9e3779b9U);  // a dim boundary
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

#if defined(DEVMESH_POP_ARRAY_BOUNDS)
#pragma GCC diagnostic pop
#undef DEVMESH_POP_ARRAY_BOUNDS
#endif
