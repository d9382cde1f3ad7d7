// devmesh/mesh.hpp: mesh<dim<...>...>, the typed layout of a device mesh.
//
// basic_mesh<S, Names> is every mesh: S is a detail::structure (which atoms each dim
// has, see structure.hpp), Names the dims' names. Static sizes live in S, so a fully
// static mesh is an empty object and every query is a constant expression; dynamic
// sizes are stored per atom, as std::extents does. Named queries resolve the name at
// compile time, so at run time they are the bare digit arithmetic.
#pragma once
#include <array>
#include <climits>
#include <concepts>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "config.hpp"
#include "diagnostics.hpp"
#include "dim.hpp"
#include "fixed_string.hpp"
#include "group.hpp"
#include "names.hpp"
#include "structure.hpp"

// g++ 12 at -O2 reports -Warray-bounds false positives on the structure lookups below once
// they are inlined into loops whose bounds it cannot see (GCC bug 105329 family); every
// index here comes from the compile-time structure. Scoped to this header.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#define DEVMESH_POP_ARRAY_BOUNDS 1
#endif

namespace devmesh {

template <auto S, class Names>
class basic_mesh;

namespace detail {

/// Per-atom sizes and strides held at run time when any size is dynamic.
template <int A, bool Dynamic>
struct atom_extents {
  int size[A]{};
  int stride[A]{};
};
template <int A>
struct atom_extents<A, false> {};

template <auto S>
inline constexpr bool all_static = [] {
  for (int i = 0; i < S.natoms; ++i)
    if (S.atom_size[i] == dynamic_size) return false;
  return true;
}();

/// The compacted structure for a scratch value (exact sizes as template arguments).
template <auto Scratch>
inline constexpr auto compacted = compact<Scratch.natoms, Scratch.ndims, Scratch.nentries>(Scratch);

/// The names of a derived mesh: dim j keeps its parent's name (source >= 0) or takes
/// the k-th new name (source == -(k+1)).
template <auto Src, class OldNames, class NewNames, class Seq>
struct derive_names;
template <auto Src, class... Old, class... New, std::size_t... J>
struct derive_names<Src, names<Old...>, names<New...>, std::index_sequence<J...>> {
  template <int j>
  static constexpr auto pick() {
    constexpr int s = Src.source[j];
    if constexpr (s >= 0)
      return name_at<s, Old...>{};
    else
      return name_at<-s - 1, New...>{};
  }
  using type = names<decltype(pick<static_cast<int>(J)>())...>;
};
template <auto Src, class OldNames, class NewNames>
using derived_names_t =
    typename derive_names<Src, OldNames, NewNames, std::make_index_sequence<Src.ndims>>::type;

/// A type a mesh size may be given as: an integer type, but not bool or a character type.
template <class T>
inline constexpr bool is_size_type =
    std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char> && !std::is_same_v<T, wchar_t> &&
    !std::is_same_v<T, char8_t> && !std::is_same_v<T, char16_t> && !std::is_same_v<T, char32_t>;

// Not constexpr: in a constant expression an out-of-range size is a compile error naming it.
template <class T>
[[noreturn]] void fail_size_range(T v, std::string_view dim) {
  throw_mesh_error(std::string(DEVMESH_MSG_SIZE_RANGE) + ": got " + std::to_string(v) + " for dim '" +
                   std::string(dim) + "'");
}

/// A size argument as an int; throws mesh_error naming the dim if it does not fit, quoting
/// the value as given (4294967298 stays 4294967298, not the 2 a cast would make of it).
template <class T>
constexpr int size_as_int(T v, std::string_view dim) {
  if (!std::in_range<int>(v)) fail_size_range(v, dim);
  return static_cast<int>(v);
}

template <class Names, class... N>
inline constexpr int indices_of[] = {dim_index<Names, N>::value...};

template <class Names, int I>
struct name_of_impl;
template <class... N, int I>
struct name_of_impl<names<N...>, I> {
  using type = name_at<I, N...>;
};
template <class Names, int I>
using name_of = typename name_of_impl<Names, I>::type;

/// Fires the diagnostic for a derived layout that overflows the fixed capacities (Sc is
/// the scratch value that recorded it); true if it fits.
template <auto Sc>
constexpr bool check_capacity() {
  if constexpr (Sc.error == dims_full)
    require<false, error::too_many_dims<size_value<Sc.error_a>, size_value<scratch_capacity>>>();
  else if constexpr (Sc.error == atoms_full)
    require<false, error::too_many_atoms<size_value<Sc.error_a>, size_value<scratch_capacity>>>();
  else if constexpr (Sc.error == entries_full)
    require<false, error::too_many_atom_entries<size_value<Sc.error_a>, size_value<scratch_entries>>>();
  return Sc.error != dims_full && Sc.error != atoms_full && Sc.error != entries_full;
}

template <auto S, class Names>
constexpr bool check_mesh_names() {
  constexpr int dup = first_duplicate(Names{});
  if constexpr (dup >= 0) require<false, error::duplicate_dim_name<name_of<Names, dup>, typename as_existing<Names>::as_dims>>();
  return true;  // the diagnostic (if any) has fired: a second, plain assertion would only add noise
}

}  // namespace detail

template <auto S, class Names>
class basic_mesh : private detail::atom_extents<S.natoms, !detail::all_static<S>> {
  static_assert(detail::check_mesh_names<S, Names>());
  using extents_base = detail::atom_extents<S.natoms, !detail::all_static<S>>;
  template <auto, class>
  friend class basic_mesh;

  // Reads `check` so that the unknown_dim requirement is instantiated (a static member
  // that is never named is never instantiated, and the error would be skipped).
  template <fixed_string N>
  static constexpr int index =
      detail::dim_index<Names, name_t<N>>::check ? detail::dim_index<Names, name_t<N>>::value : 0;

  // Atoms of dims Ns..., concatenated, most significant first.
  template <fixed_string... Ns>
  struct selection {
    // One diagnostic per misuse: unknown names first (each fires unknown_dim), then
    // repeats, then overlaps; a later check runs only if the earlier ones passed.
    static constexpr bool known = ((detail::dim_index<Names, name_t<Ns>>::check &&
                                    detail::dim_index<Names, name_t<Ns>>::found >= 0) && ... && true);
    static constexpr bool no_repeat = [] {
      if constexpr (known)
        return detail::check_no_repeat<name_t<Ns>...>();
      else
        return false;
    }();
    static constexpr int ndims = static_cast<int>(sizeof...(Ns));
    static constexpr int dims[ndims > 0 ? ndims : 1] = {index<Ns>...};
    static constexpr int count = [] {
      int n = 0;
      for (int i = 0; i < ndims; ++i) n += S.dim_count[dims[i]];
      return n;
    }();
    struct atoms_t {
      int a[count > 0 ? count : 1]{};
    };
    static constexpr atoms_t atoms = [] {
      atoms_t r{};
      int n = 0;
      for (int k = 0; k < ndims; ++k)
        for (int i = 0; i < S.dim_count[dims[k]]; ++i) r.a[n++] = S.dim_atoms[S.dim_first[dims[k]] + i];
      return r;
    }();
    // Two requested dims that share an atom: an alias and one of its own dims.
    static constexpr std::pair<int, int> overlap = [] {
      if (!no_repeat) return std::pair<int, int>{-1, -1};
      for (int i = 0; i < static_cast<int>(sizeof...(Ns)); ++i)
        for (int j = 0; j < i; ++j)
          for (int p = 0; p < S.dim_count[dims[i]]; ++p)
            for (int q = 0; q < S.dim_count[dims[j]]; ++q)
              if (S.dim_atoms[S.dim_first[dims[i]] + p] == S.dim_atoms[S.dim_first[dims[j]] + q])
                return std::pair<int, int>{dims[j], dims[i]};
      return std::pair<int, int>{-1, -1};
    }();
    static constexpr bool disjoint = [] {
      if constexpr (overlap.first >= 0)
        detail::require<false, error::dims_overlap<detail::name_of<Names, overlap.first>,
                                                   detail::name_of<Names, overlap.second>, requested<name_t<Ns>...>>>();
      return overlap.first < 0;
    }();
    /// All checks passed; otherwise a diagnostic has fired and callers return a fallback.
    static constexpr bool ok = sizeof...(Ns) > 0 && known && no_repeat && disjoint;
  };

 public:
  using names_type = Names;
  static constexpr auto structure = S;
  /// Number of dims (aliases excluded), as PyTorch's ndim.
  static constexpr int ndim = S.nprimary;
  /// Number of dims including aliases.
  static constexpr int ndim_with_aliases = S.ndims;
  /// True if every size is static: the object is empty and every query is constexpr.
  static constexpr bool is_static = detail::all_static<S>;

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

  // ---- sizes ---------------------------------------------------------------------------
  /// Size of atom a (a digit group of the root's row-major rank; see docs/design.md).
  DEVMESH_HOST_DEVICE constexpr int atom_size(int a) const {
    if constexpr (is_static)
      return S.atom_size[a];
    else
      return this->extents_base::size[a];
  }
  /// Stride of atom a in the root's rank space: the product of the sizes of the atoms after it.
  DEVMESH_HOST_DEVICE constexpr int atom_stride(int a) const {
    if constexpr (is_static) {
      int s = 1;
      for (int b = S.natoms - 1; b > a; --b) s *= S.atom_size[b];
      return s;
    } else {
      return this->extents_base::stride[a];
    }
  }
  /// Size of dim d (by index, aliases included).
  DEVMESH_HOST_DEVICE constexpr int dim_size(int d) const {
    int n = 1;
    for (int i = 0; i < S.dim_count[d]; ++i) n *= atom_size(S.dim_atoms[S.dim_first[d] + i]);
    return n;
  }
  /// Number of ranks in the mesh (product of its dims), as PyTorch's size().
  DEVMESH_HOST_DEVICE constexpr int size() const {
    int n = 1;
    for (int d = 0; d < ndim; ++d) n *= dim_size(d);
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
  DEVMESH_HOST_DEVICE constexpr int root_size() const {
    int n = 1;
    for (int a = 0; a < S.natoms; ++a) n *= atom_size(a);
    return n;
  }

  // ---- rank <-> coordinate -------------------------------------------------------------
  /// Coordinate of rank r along dim d (by index). Unchecked: r must be in [0, root_size()).
  DEVMESH_HOST_DEVICE constexpr int coordinate_unchecked(int r, int d) const {
    int c = 0;
    for (int i = 0; i < S.dim_count[d]; ++i) {
      const int a = S.dim_atoms[S.dim_first[d] + i];
      c = c * atom_size(a) + (r / atom_stride(a)) % atom_size(a);
    }
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
    constexpr auto atoms = all_primary_atoms();
    int r = base_of(member, atoms.a, primary_atom_count);
    for (int d = 0; d < ndim; ++d) {
      if (c[d] < 0 || c[d] >= dim_size(d)) fail_coordinate(d, c[d]);  // devmesh: coordinate out of range
      int rest = c[d];
      for (int i = S.dim_count[d] - 1; i >= 0; --i) {
        const int a = S.dim_atoms[S.dim_first[d] + i];
        r += (rest % atom_size(a)) * atom_stride(a);
        rest /= atom_size(a);
      }
    }
    return r;
  }

  // ---- groups --------------------------------------------------------------------------
  /// The ranks of the submesh spanned by dims Ns... that contains rank r, row-major in the
  /// order given (so a transposed order gives the transposed rank order). O(ndim).
  template <fixed_string... Ns>
  DEVMESH_HOST_DEVICE constexpr auto group(int r) const {
    using sel = selection<Ns...>;
    if constexpr (!sel::ok) {
      check_selection<Ns...>();
      return group(r);  // after the diagnostic: a harmless fallback, no cascade
    } else {
      check_rank(r);
      constexpr auto atoms = sel::atoms;  // a local copy: device code cannot read the static
      int sizes[sel::count > 0 ? sel::count : 1]{};
      int strides[sel::count > 0 ? sel::count : 1]{};
      for (int i = 0; i < sel::count; ++i) {
        sizes[i] = atom_size(atoms.a[i]);
        strides[i] = atom_stride(atoms.a[i]);
      }
      return rank_group<sel::count>(base_of(r, atoms.a, sel::count), sizes, strides);
    }
  }
  /// The ranks of this mesh (all its dims) that contain rank r: PyTorch's mesh tensor,
  /// flattened, on rank r.
  DEVMESH_HOST_DEVICE constexpr auto group(int r) const {
    check_rank(r);
    constexpr int n = primary_atom_count;
    int sizes[n > 0 ? n : 1]{};
    int strides[n > 0 ? n : 1]{};
    constexpr auto atoms = all_primary_atoms();
    for (int i = 0; i < n; ++i) {
      sizes[i] = atom_size(atoms.a[i]);
      strides[i] = atom_stride(atoms.a[i]);
    }
    return rank_group<n>(base_of(r, atoms.a, n), sizes, strides);
  }
  /// (color, key) for splitting a communicator into the groups of dims Ns...: color is the
  /// group's first rank, key the index of r in it (so the split keeps the mesh's order).
  template <fixed_string... Ns>
  DEVMESH_HOST_DEVICE constexpr split_args comm_split(int r) const {
    using sel = selection<Ns...>;
    if constexpr (!sel::ok) {
      check_selection<Ns...>();
      return {0, 0};  // after the diagnostic: a harmless fallback, no cascade
    } else {
      check_rank(r);
      constexpr auto atoms = sel::atoms;
      int key = 0;
      for (int i = 0; i < sel::count; ++i) {
        const int a = atoms.a[i];
        key = key * atom_size(a) + (r / atom_stride(a)) % atom_size(a);
      }
      return {base_of(r, atoms.a, sel::count), key};
    }
  }
  /// (color, key) for dim d by index (aliases included): for code that loops over dims.
  DEVMESH_HOST_DEVICE constexpr split_args comm_split(int r, int d) const {
    check_rank(r);
    if (d < 0 || d >= S.ndims) fail_dim_index(d, S.ndims);
    // Dispatch to a compile-time dim: every index into the structure is then a constant
    // (and g++ 12 -O2 has no out-of-range path to warn about with -Warray-bounds).
    return split_of_dim(r, d, std::make_integer_sequence<int, S.ndims>{});
  }


  // ---- deriving meshes -----------------------------------------------------------------
  /// The submesh spanned by dims Ns... (any dims, aliases too, in any order). Its groups
  /// are this mesh's groups; its rank order follows the order given.
  template <fixed_string... Ns>
  DEVMESH_HOST_DEVICE constexpr auto slice() const {
    if constexpr (sizeof...(Ns) == 0) {
      detail::require<false, error::slice_without_dims<typename detail::as_existing<Names>::type>>();
      return *this;
    } else if constexpr (!selection<Ns...>::ok) {
      return *this;  // a diagnostic has fired; a harmless fallback, no cascade
    } else {
      using D = derived<Ns...>;
      using result = basic_mesh<detail::compacted<D::sliced>, detail::derived_names_t<D::sliced, Names, names<>>>;
      return result(copy_extents());
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
  template <fixed_string Alias, fixed_string... Ns>
  DEVMESH_HOST_DEVICE constexpr auto flatten() const {
    if constexpr (!check_new_name<Alias>()) {
      return *this;  // a diagnostic has fired; a harmless fallback, no cascade
    } else if constexpr (sizeof...(Ns) == 0) {
      using D = derived<>;
      if constexpr (!detail::check_capacity<D::flat>()) {
        return *this;
      } else {
        using result = basic_mesh<detail::compacted<D::flat>, detail::derived_names_t<D::flat, Names, names<name_t<Alias>>>>;
        return result(copy_extents());
      }
    } else if constexpr (!check_flatten<Alias, Ns...>()) {
      return *this;
    } else if constexpr (!detail::check_capacity<derived<Ns...>::aliased>()) {
      return *this;  // only now: a wrong flatten's layout is not computed
    } else {
      using D = derived<Ns...>;
      using result =
          basic_mesh<detail::compacted<D::aliased>, detail::derived_names_t<D::aliased, Names, names<name_t<Alias>>>>;
      return result(copy_extents());
    }
  }
  /// Splits dim N into the given dims (PyTorch _unflatten), in its place. The product of
  /// their sizes must equal N's size; one of them may be dynamic and is then inferred.
  template <fixed_string N, dim_spec... New>
  constexpr auto unflatten() const {
    if constexpr (!check_unflatten<N, New...>()) {
      return *this;  // a diagnostic has fired; a harmless fallback, no cascade
    } else {
      constexpr int d = index<N>;
      using U = unflattened<N, New...>;
      constexpr const int* sizes = U::sizes;
      if constexpr (!check_unflatten_result<N, U::value>()) {
        return *this;  // a diagnostic has fired
      } else {
        constexpr auto S2 = detail::compacted<U::value>;
        using result = basic_mesh<S2, detail::derived_names_t<U::value, Names, names<typename New::name_type...>>>;
        if constexpr (result::is_static) {
          // A dynamic dim split into static sizes: the product is checked here, at run time.
          constexpr long long product = (1LL * ... * New::size);
          if (dim_size(d) != product)
            detail::throw_mesh_error(std::string(DEVMESH_MSG_UNFLATTEN_PRODUCT) + ": dim '" + std::string(name(d)) +
                                     "' has size " + std::to_string(dim_size(d)) + ", the new dims multiply to " +
                                     std::to_string(product));
          return result{};
        } else {
          // The split atom's run-time size: infer the one dynamic part, check the product.
          const int whole = dim_size(d);
          long long known = 1;
          int unknown = -1;
          for (int j = 0; j < static_cast<int>(sizeof...(New)); ++j) {
            if (sizes[j] == dynamic_size)
              unknown = j;
            else
              known *= sizes[j];
          }
          int actual[sizeof...(New)]{};
          for (int j = 0; j < static_cast<int>(sizeof...(New)); ++j) actual[j] = sizes[j];
          if (unknown >= 0) {
            if (whole % known != 0)
              detail::throw_mesh_error(std::string(DEVMESH_MSG_UNFLATTEN_PRODUCT) + ": dim '" +
                                       std::string(name(d)) + "' has size " + std::to_string(whole) +
                                       ", not divisible by the static new sizes' product " + std::to_string(known));
            actual[unknown] = static_cast<int>(whole / known);
          } else if (known != whole) {
            detail::throw_mesh_error(std::string(DEVMESH_MSG_UNFLATTEN_PRODUCT) + ": dim '" + std::string(name(d)) +
                                     "' has size " + std::to_string(whole) + ", the new dims multiply to " +
                                     std::to_string(known));
          }
          // Only a single-atom dim can be dynamic here: its atom became sizeof...(New) atoms.
          const int split = S.dim_atoms[S.dim_first[d]];
          int atom_sizes[S2.natoms]{};
          for (int a = 0, b = 0; a < S.natoms; ++a) {
            if (a == split)
              for (int j = 0; j < static_cast<int>(sizeof...(New)); ++j) atom_sizes[b++] = actual[j];
            else
              atom_sizes[b++] = atom_size(a);
          }
          return result::from_atom_sizes(atom_sizes);
        }
      }
    }
  }

  /// Builds the mesh from per-atom sizes (checked: positive, static ones match, fits int).
  /// A static mesh stores nothing, but its sizes are checked all the same. nullptr: no sizes
  /// (only after a diagnostic has fired).
  static constexpr basic_mesh from_atom_sizes(const int* sizes) {
    basic_mesh m(detail::atom_extents<S.natoms, !is_static>{});
    if (sizes == nullptr) return m;
    const int bad = first_bad_atom(sizes);
    if (bad >= 0) fail_atom_sizes(sizes, bad);  // devmesh: a size is not positive, not the static size, or overflows
    if constexpr (!is_static) {
      int stride = 1;
      for (int a = S.natoms - 1; a >= 0; --a) {
        m.extents_base::size[a] = sizes[a];
        m.extents_base::stride[a] = stride;
        stride *= sizes[a];
      }
    }
    return m;
  }

 protected:
  DEVMESH_HOST_DEVICE constexpr explicit basic_mesh(const extents_base& e) : extents_base(e) {}
  DEVMESH_HOST_DEVICE constexpr const extents_base& copy_extents() const { return *this; }

 private:
  // Derived structures, computed once per instantiation (static members, not locals:
  // C++20 constexpr functions cannot hold static variables).
  template <fixed_string... Ns>
  struct derived {
    static constexpr detail::scratch sliced = [] {
      if constexpr (sizeof...(Ns) > 0)
        return detail::slice(detail::expand(S), selection<Ns...>::dims);
      else
        return detail::expand(S);
    }();
    static constexpr detail::scratch aliased = [] {
      if constexpr (sizeof...(Ns) > 0)
        return detail::flatten_alias(detail::expand(S), selection<Ns...>::dims);
      else
        return detail::expand(S);
    }();
    static constexpr detail::scratch flat = detail::flatten_all(detail::expand(S));
  };
  template <fixed_string N, class... New>
  struct unflattened {
    static constexpr int sizes[sizeof...(New) + 1] = {New::size..., 0};
    static constexpr detail::scratch value = [] {
      if constexpr (sizeof...(New) == 0) {
        return detail::expand(S);
      } else {
        constexpr int k[] = {New::size...};
        return detail::unflatten(detail::expand(S), index<N>, k);
      }
    }();
  };

  template <int D>
  DEVMESH_HOST_DEVICE constexpr int coordinate_of(int r) const {
    constexpr int first = S.dim_first[D];
    constexpr int count = S.dim_count[D];
    int c = 0;
    for (int i = 0; i < count; ++i) {
      const int a = S.dim_atoms[first + i];
      c = c * atom_size(a) + (r / atom_stride(a)) % atom_size(a);
    }
    return c;
  }
  template <int... D>
  DEVMESH_HOST_DEVICE constexpr std::array<int, ndim> coordinates_of(int r, std::integer_sequence<int, D...>) const {
    return {coordinate_of<D>(r)...};
  }
  template <int D>
  DEVMESH_HOST_DEVICE constexpr split_args split_of(int r) const {
    constexpr int first = S.dim_first[D];
    constexpr int count = S.dim_count[D];
    int key = 0;
    int base = r;
    for (int i = 0; i < count; ++i) {
      const int a = S.dim_atoms[first + i];
      const int digit = (r / atom_stride(a)) % atom_size(a);
      key = key * atom_size(a) + digit;
      base -= digit * atom_stride(a);
    }
    return {base, key};
  }
  template <int... D>
  DEVMESH_HOST_DEVICE constexpr split_args split_of_dim(int r, int d, std::integer_sequence<int, D...>) const {
    split_args out{r, 0};
    ((d == D ? (void)(out = split_of<D>(r)) : (void)0), ...);
    return out;
  }

  static constexpr int primary_atom_count = [] {
    int n = 0;
    for (int d = 0; d < S.nprimary; ++d) n += S.dim_count[d];
    return n;
  }();
  struct primary_atoms_t {
    int a[primary_atom_count > 0 ? primary_atom_count : 1]{};
  };
  DEVMESH_HOST_DEVICE static constexpr primary_atoms_t all_primary_atoms() {
    primary_atoms_t r{};
    int n = 0;
    for (int d = 0; d < S.nprimary; ++d)
      for (int i = 0; i < S.dim_count[d]; ++i) r.a[n++] = S.dim_atoms[S.dim_first[d] + i];
    return r;
  }
  /// The first dim that uses atom a (for messages).
  static constexpr int atom_owner(int a) {
    for (int d = 0; d < S.ndims; ++d)
      for (int i = 0; i < S.dim_count[d]; ++i)
        if (S.dim_atoms[S.dim_first[d] + i] == a) return d;
    return 0;
  }

  /// r minus its digits in the given atoms: the first rank of r's group over them.
  DEVMESH_HOST_DEVICE constexpr int base_of(int r, const int* atoms, int n) const {
    int base = r;
    for (int i = 0; i < n; ++i) base -= ((r / atom_stride(atoms[i])) % atom_size(atoms[i])) * atom_stride(atoms[i]);
    return base;
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
    detail::throw_mesh_error(std::string(DEVMESH_MSG_RANK_RANGE) + ": rank " + std::to_string(r) +
                             " is not in [0, " + std::to_string(n) + ")");
#endif
  }
  [[noreturn]] DEVMESH_HOST_DEVICE void fail_coordinate(int d, int c) const {
#if DEVMESH_DEVICE_PASS
    (void)d, (void)c;
    __trap();
    __builtin_unreachable();
#else
    detail::throw_mesh_error(std::string(DEVMESH_MSG_COORD_RANGE) + ": coordinate " + std::to_string(c) +
                             " along dim '" + std::string(name(d)) + "' is not in [0, " +
                             std::to_string(dim_size(d)) + ")");
#endif
  }
  [[noreturn]] DEVMESH_HOST_DEVICE static void fail_dim_index(int d, int n = ndim) {
#if DEVMESH_DEVICE_PASS
    (void)d, (void)n;
    __trap();
    __builtin_unreachable();
#else
    detail::throw_mesh_error("devmesh: dim index " + std::to_string(d) + " is not in [0, " + std::to_string(n) + ")");
#endif
  }

  /// Fires the diagnostic for an empty selection (the others fire inside selection<>).
  template <fixed_string... Ns>
  static constexpr void check_selection() {
    if constexpr (sizeof...(Ns) == 0)
      detail::require<false, error::group_without_dims<typename detail::as_existing<Names>::type>>();
  }
  template <fixed_string Alias>
  static constexpr bool check_new_name() {
    constexpr bool taken = detail::find_name<name_t<Alias>>(Names{}) >= 0;
    if constexpr (Alias.size() == 0) {
      detail::require<false, error::empty_dim_name<typename detail::as_existing<Names>::type>>();
      return false;
    } else {
      detail::require<!taken, error::name_taken<name_t<Alias>, typename detail::as_existing<Names>::type>>();
      return !taken;
    }
  }
  template <fixed_string Alias, fixed_string... Ns>
  static constexpr bool check_flatten() {
    using sel = selection<Ns...>;
    constexpr int dup = detail::first_duplicate(names<name_t<Ns>...>{});
    if constexpr (!sel::known) {
      return false;  // unknown_dim has fired
    } else if constexpr (dup >= 0) {
      using n = detail::name_at<dup, name_t<Ns>...>;
      detail::require<false, error::flatten_overlaps_itself<name_t<Alias>, n, flattened<name_t<Ns>...>>>();
      return false;
    } else {
      // Inlined overlap check so that the error names the flatten, not a slice.
      constexpr auto ov = [] {
        for (int i = 0; i < static_cast<int>(sizeof...(Ns)); ++i)
          for (int j = 0; j < i; ++j)
            for (int p = 0; p < S.dim_count[sel::dims[i]]; ++p)
              for (int q = 0; q < S.dim_count[sel::dims[j]]; ++q)
                if (S.dim_atoms[S.dim_first[sel::dims[i]] + p] == S.dim_atoms[S.dim_first[sel::dims[j]] + q])
                  return std::pair<int, int>{sel::dims[j], sel::dims[i]};
        return std::pair<int, int>{-1, -1};
      }();
      if constexpr (ov.first >= 0)
        detail::require<false, error::flatten_overlaps_itself<name_t<Alias>, detail::name_of<Names, ov.second>,
                                                              flattened<name_t<Ns>...>>>();
      return ov.first < 0;
    }
  }
  template <fixed_string N, class... New>
  static constexpr bool check_unflatten() {
    constexpr int d = index<N>;
    if constexpr (detail::dim_index<Names, name_t<N>>::found < 0) {
      return false;  // unknown_dim has fired
    } else if constexpr (sizeof...(New) == 0) {
      detail::require<false, error::unflatten_without_dims<name_t<N>>>();
      return false;
    } else {
      // New names may reuse N's own name, but no other existing name, and no repeats.
      // One diagnostic per misuse: the first failing check fires, the others are skipped.
      constexpr bool valid_dims = ((New::name.size() > 0 && (New::size > 0 || New::size == dynamic_size)) && ...);
      constexpr bool repeats = detail::first_duplicate(names<typename New::name_type...>{}) >= 0;
      constexpr int clash = [] {
        constexpr int found[] = {detail::find_name<typename New::name_type>(Names{})...};
        for (int f : found)
          if (f >= 0 && f != d) return f;
        return -1;
      }();
      constexpr int ndyn = ((New::size == dynamic_size ? 1 : 0) + ...);
      constexpr int new_sizes[] = {New::size...};
      constexpr long long product = detail::saturating_product(new_sizes, sizeof...(New));  // dynamic: 1
      if constexpr (!valid_dims) {
        return false;  // the bad new dim's own check (empty name, non-positive size) has fired
      } else if constexpr (repeats) {
        (void)detail::check_no_repeat<typename New::name_type...>();
        return false;
      } else if constexpr (clash >= 0) {
        detail::require<false, error::name_taken<detail::name_of<Names, clash>,
                                                 typename detail::as_existing<Names>::type>>();
        return false;
      } else if constexpr (ndyn > 1) {
        detail::require<false, error::unflatten_two_dynamic<name_t<N>>>();
        return false;
      } else if constexpr (product > INT_MAX) {  // the dynamic one is >= 1: it can never fit
        detail::require<false, error::size_overflow<dims<typename New::name_type...>>>();
        return false;
      } else if constexpr (ndyn == 0 && is_static_dim(d)) {
        constexpr int whole = static_dim_size(d);
        detail::require<product == whole,
                        error::unflatten_product_mismatch<name_t<N>, size_value<whole>, size_value<static_cast<int>(product)>>>();
        return product == whole;
      } else {
        return true;
      }
    }
  }
  /// The first atom whose size is not positive or differs from its static size; natoms if
  /// the sizes multiply to more than INT_MAX; -1 if the sizes are fine.
  static constexpr int first_bad_atom(const int* sizes) {
    for (int a = 0; a < S.natoms; ++a)
      if (sizes[a] <= 0 || (S.atom_size[a] != dynamic_size && S.atom_size[a] != sizes[a])) return a;
    return detail::saturating_product(sizes, S.natoms) > INT_MAX ? S.natoms : -1;
  }
  // Not constexpr: in a constant expression (a static mesh given sizes) a bad size is a
  // compile error naming this function; at run time it throws, quoting the sizes as given.
  [[noreturn]] static void fail_atom_sizes(const int* sizes, int a) {
    if (a == S.natoms) {
      std::string given;
      for (int b = 0; b < S.natoms; ++b)
        given += (b ? ", " : "") + std::string(name(atom_owner(b))) + "=" + std::to_string(sizes[b]);
      detail::throw_mesh_error(std::string(DEVMESH_MSG_OVERFLOW) + ": the sizes (" + given +
                               ") multiply to more than " + std::to_string(INT_MAX));
    }
    const std::string dim = "dim '" + std::string(name(atom_owner(a))) + "'";
    if (sizes[a] <= 0)
      detail::throw_mesh_error(std::string(DEVMESH_MSG_NON_POSITIVE) + ": got " + std::to_string(sizes[a]) + " for " + dim);
    detail::throw_mesh_error(std::string(DEVMESH_MSG_STATIC_SIZE_MISMATCH) + ": " + dim + " is " +
                             std::to_string(S.atom_size[a]) + ", got " + std::to_string(sizes[a]));
  }
  /// Fires the diagnostic for an unflatten whose layout could not be built; true if it was.
  template <fixed_string N, auto Sc>
  static constexpr bool check_unflatten_result() {
    if constexpr (Sc.error == detail::not_divisible)
      detail::require<false, error::unflatten_not_divisible<name_t<N>, size_value<Sc.error_b>>>();
    else if constexpr (Sc.error == detail::needs_static)
      detail::require<false, error::unflatten_needs_static_sizes<name_t<N>>>();
    return detail::check_capacity<Sc>() && Sc.error == detail::ok;
  }
  static constexpr bool is_static_dim(int d) {
    for (int i = 0; i < S.dim_count[d]; ++i)
      if (S.atom_size[S.dim_atoms[S.dim_first[d] + i]] == dynamic_size) return false;
    return true;
  }
  static constexpr int static_dim_size(int d) {
    int n = 1;
    for (int i = 0; i < S.dim_count[d]; ++i) n *= S.atom_size[S.dim_atoms[S.dim_first[d] + i]];
    return n;
  }
};

namespace detail {
static_assert(scratch_capacity == 64, "devmesh: DEVMESH_MSG_TOO_MANY_DIMS and _ATOMS quote the limit: update them");
static_assert(scratch_entries == 512, "devmesh: DEVMESH_MSG_TOO_MANY_ENTRIES quotes the limit: update it");

template <dim_spec... Dims>
constexpr scratch root_scratch() {
  if constexpr (sizeof...(Dims) == 0) {
    return scratch{};
  } else if constexpr (sizeof...(Dims) > scratch_capacity) {
    require<false, error::too_many_dims<size_value<sizeof...(Dims)>, size_value<scratch_capacity>>>();
    return scratch{};  // an empty layout after the diagnostic: no out-of-bounds cascade
  } else {
    constexpr int sizes[] = {Dims::size...};
    return make_root(sizes);
  }
}

template <class... Dims>
constexpr bool check_root() {
  if constexpr (sizeof...(Dims) == 0) {
    require<false, error::mesh_without_dims<dims<typename Dims::name_type...>>>();
  } else {
    constexpr int sizes[] = {Dims::size...};
    constexpr long long product = saturating_product(sizes, sizeof...(Dims));  // dynamic sizes: 1
    require<(product <= INT_MAX), error::size_overflow<dims<typename Dims::name_type...>>>();
  }
  return true;  // the diagnostic (if any) has fired: a second, plain assertion would only add noise
}

template <class... Dims>
inline constexpr auto root_structure = compacted<root_scratch<Dims...>()>;

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
class mesh : public basic_mesh<detail::root_structure<Dims...>, names<typename Dims::name_type...>> {
  static_assert(detail::check_root<Dims...>());
  using base = basic_mesh<detail::root_structure<Dims...>, names<typename Dims::name_type...>>;
  static constexpr int num_dynamic = ((Dims::size == dynamic_size ? 1 : 0) + ... + 0);

 public:
  // Unconstrained on purpose (nvcc 13 crashes on a constrained constructor in a derived
  // class template). A dynamic mesh has no sizes to default to: constructing one this way
  // is a devmesh: diagnostic naming its dynamic dims, not a "deleted function" error.
  /// A fully static mesh (an empty object); for a mesh with dynamic dims this is a devmesh:
  /// diagnostic naming them: give their sizes, or use for_world.
  DEVMESH_HOST_DEVICE constexpr mesh() : base(static_extents()) {}

  /// Sizes for the dynamic dims, in order, or for every dim (static ones must match), as
  /// std::extents takes them; a fully static mesh takes every dim's size, checked. Sizes
  /// are integers: anything else (bool, char, double, a pointer, ...) is a devmesh:
  /// diagnostic naming the dim. Throws mesh_error on a size that does not fit in an int
  /// (quoting the value as given), is not positive, or differs from a static size.
  template <class... I>
    requires(sizeof...(I) > 0 && !(std::is_base_of_v<base, I> || ...))  // copies stay copies
  constexpr explicit mesh(I... sizes) : base(make(sizes...)) {}

  /// The mesh whose one dynamic dim (if any) is inferred so that it spans `world` ranks.
  /// Throws mesh_error if the static sizes do not divide world.
  static mesh for_world(int world) {
    if constexpr (num_dynamic > 1) {
      detail::require<false, error::for_world_ambiguous<dims<typename Dims::name_type...>>>();
      return mesh(base::from_atom_sizes(nullptr));
    } else {
      constexpr int static_sizes[] = {Dims::size...};
      long long fixed = 1;
      int dyn = -1;
      for (int i = 0; i < base::ndim; ++i) {
        if (static_sizes[i] == dynamic_size)
          dyn = i;
        else
          fixed *= static_sizes[i];
      }
      int sizes[base::ndim]{};
      for (int i = 0; i < base::ndim; ++i) sizes[i] = static_sizes[i];
      if (world <= 0 || world % fixed != 0 || (dyn < 0 && fixed != world))
        detail::throw_mesh_error(std::string(DEVMESH_MSG_WORLD_MISMATCH) + ": world size " + std::to_string(world) +
                                 (dyn < 0 ? " differs from the mesh size " + std::to_string(fixed)
                                          : " is not a positive multiple of the static dims' product " +
                                                std::to_string(fixed) + " (dynamic dim '" +
                                                std::string(base::name(dyn)) + "' cannot be inferred)"));
      if (dyn >= 0) sizes[dyn] = static_cast<int>(world / fixed);
      if constexpr (base::is_static)
        return mesh{};
      else
        return mesh(base::from_atom_sizes(sizes));
    }
  }

 private:
  constexpr explicit mesh(const base& b) : base(b) {}
  DEVMESH_HOST_DEVICE static constexpr detail::atom_extents<base::structure.natoms, !base::is_static> static_extents() {
    detail::require<base::is_static, error::default_constructed_dynamic_mesh<
                                         typename detail::dynamic_names<dims<>, Dims...>::type>>();
    return {};
  }
  template <class... I>
  static constexpr base make(I... given) {
    constexpr int n = static_cast<int>(sizeof...(I));
    if constexpr (n != num_dynamic && n != base::ndim) {
      detail::require<false, error::wrong_size_count<size_value<n>, size_value<num_dynamic>, size_value<base::ndim>>>();
      return base::from_atom_sizes(nullptr);
    } else if constexpr (!check_size_types<I...>()) {
      return base::from_atom_sizes(nullptr);  // no conversion after the diagnostic: no cascade
    } else {
      int in[n]{};
      int k = 0;
      ((in[k] = detail::size_as_int(given, base::name(dim_of_arg(k, n))), ++k), ...);
      constexpr int static_sizes[] = {Dims::size...};
      int sizes[base::ndim]{};
      for (int i = 0, j = 0; i < base::ndim; ++i)
        sizes[i] = n == base::ndim ? in[i] : static_sizes[i] == dynamic_size ? in[j++] : static_sizes[i];
      return base::from_atom_sizes(sizes);
    }
  }
  /// The dim that size argument k of n is for: dim k if n == ndim, else the k-th dynamic dim.
  static constexpr int dim_of_arg(int k, int n) {
    constexpr int static_sizes[] = {Dims::size...};
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
                                                     std::tuple_element_t<bad, std::tuple<I...>>>>();
    return bad < 0;
  }
};

}  // namespace devmesh

#if defined(DEVMESH_POP_ARRAY_BOUNDS)
#pragma GCC diagnostic pop
#undef DEVMESH_POP_ARRAY_BOUNDS
#endif
