// devmesh/core/mesh_checks.hpp: the compile-time checks of every named query and derivation
// of a mesh with layout L and names Names. Each misuse fires exactly one diagnostic from
// diagnostics.hpp (the first failing check); the callers then return a harmless fallback
// so that no cascade of unrelated errors follows.
#pragma once
#include <climits>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "algebra.hpp"
#include "cut.hpp"
#include "diagnostics.hpp"
#include "dim.hpp"
#include "fixed_string.hpp"
#include "layout.hpp"
#include "names.hpp"
#include "sizes.hpp"

namespace devmesh::detail {

/// The modes of dims `dims`, concatenated in that order (Count of them).
template <int Count, int D, int M, int K>
constexpr mode_array<Count> selected_modes(const layout<D, M>& l, const int (&dims)[K]) {
  mode_array<Count> r{};
  int n = 0;
  for (int k = 0; k < K; ++k)
    for (int m = l.first[dims[k]]; m < l.first[dims[k] + 1] && n < Count; ++m) r.m[n++] = m;
  return r;
}

template <class Names>
constexpr bool check_mesh_names() {
  constexpr int dup = first_duplicate(Names{});
  if constexpr (dup >= 0)
    require<false, error::duplicate_dim_name<name_of<Names, dup>, typename as_existing<Names>::as_dims>>();
  return true;  // the diagnostic (if any) has fired: a second, plain assertion would only add noise
}

template <auto L, class Names>
struct mesh_checks {
  using existing = typename as_existing<Names>::type;

  // Reads `check` so that the unknown_dim requirement is instantiated (a static member
  // that is never named is never instantiated, and the error would be skipped).
  template <fixed_string N>
  static constexpr int index = dim_index<Names, name_t<N>>::check ? dim_index<Names, name_t<N>>::value : 0;

  /// selection's repeat check, run only when Check (the names are known, and more than one).
  template <bool Check, fixed_string... Ns>
  static constexpr bool repeat_free() {
    if constexpr (Check)
      return check_no_repeat<name_t<Ns>...>();
    else
      return true;
  }
  /// selection's overlap diagnostic (dims A and B share a mode), if A >= 0.
  template <int A, int B, fixed_string... Ns>
  static constexpr bool report_overlap() {
    if constexpr (A >= 0)
      require<false, error::dims_overlap<name_of<Names, A>, name_of<Names, B>, requested<name_t<Ns>...>>>();
    return A < 0;
  }

  /// Dims Ns... as a selection: their modes, concatenated, most significant first. One
  /// diagnostic per misuse: unknown names first, then repeats, then overlaps (one dim, the
  /// common case, can have neither).
  template <fixed_string... Ns>
  struct selection {
    static constexpr int ndims = static_cast<int>(sizeof...(Ns));
    static constexpr bool known =
        ((dim_index<Names, name_t<Ns>>::check && dim_index<Names, name_t<Ns>>::found >= 0) && ... && true);
    static constexpr bool no_repeat = repeat_free<known && (ndims > 1), Ns...>() && known;
    static constexpr int dims[ndims > 0 ? ndims : 1] = {index<Ns>...};
    static constexpr int count = ((L.first[index<Ns> + 1] - L.first[index<Ns>]) + ... + 0);
    // auto, not mode_array<count>: nvcc's cudafe++ would write the initializer's conversion
    // as mode_array<mesh_checks::selection::count>, which clang (as nvcc's host compiler) refuses.
    static constexpr auto modes = selected_modes<count>(L, dims);
    // Two requested dims that share a mode: an alias and one of its own dims.
    static constexpr dim_pair overlap = no_repeat && ndims > 1 ? first_overlap(L, dims) : dim_pair{-1, -1};
    static constexpr bool disjoint = report_overlap<overlap.first, overlap.second, Ns...>();
    /// All checks passed; otherwise a diagnostic has fired and callers return a fallback.
    static constexpr bool ok = sizeof...(Ns) > 0 && known && no_repeat && disjoint;
  };
  /// Fires the diagnostic for an empty selection (the others fire inside selection<>).
  template <fixed_string... Ns>
  static constexpr void check_selection() {
    if constexpr (sizeof...(Ns) == 0) require<false, error::group_without_dims<existing>>();
  }

  template <fixed_string Alias>
  static constexpr bool check_new_name() {
    constexpr bool taken = find_name<name_t<Alias>>(Names{}) >= 0;
    if constexpr (Alias.size() == 0) {
      require<false, error::empty_dim_name<existing>>();
      return false;
    } else {
      require<!taken, error::name_taken<name_t<Alias>, existing>>();
      return !taken;
    }
  }

  template <fixed_string Alias, fixed_string... Ns>
  static constexpr bool check_flatten() {
    // Not selection<>: a flatten's overlap diagnostic names the flatten, not a slice.
    constexpr bool known = ((dim_index<Names, name_t<Ns>>::check && dim_index<Names, name_t<Ns>>::found >= 0) && ...);
    constexpr int dup = first_duplicate(names<name_t<Ns>...>{});
    if constexpr (!known) {
      return false;  // unknown_dim has fired
    } else if constexpr (dup >= 0) {
      require<false, error::flatten_overlaps_itself<name_t<Alias>, name_at<dup, name_t<Ns>...>, flattened<name_t<Ns>...>>>();
      return false;
    } else {
      constexpr int dims[] = {index<Ns>...};
      constexpr auto ov = first_overlap(L, dims);
      if constexpr (ov.first >= 0)
        require<false, error::flatten_overlaps_itself<name_t<Alias>, name_of<Names, ov.second>, flattened<name_t<Ns>...>>>();
      return ov.first < 0;
    }
  }

  /// An unflatten of dim N into New...: N known, at least one new dim, new dims valid. With
  /// RunTimeSizes the sizes are checked at run time; else as check_new_sizes.
  template <fixed_string N, bool RunTimeSizes, class... New>
  static constexpr bool check_unflatten() {
    if constexpr (dim_index<Names, name_t<N>>::found < 0) {
      (void)index<N>;
      return false;  // unknown_dim has fired
    } else if constexpr (sizeof...(New) == 0) {
      require<false, error::unflatten_without_dims<name_t<N>>>();
      return false;
    } else {
      return check_new_dims<N, RunTimeSizes, New...>();
    }
  }

  /// The new dims of an unflatten of dim N: valid, not repeated, not taken (N's own name
  /// may be reused), and (unless RunTimeSizes) at most one dynamic, fitting in an int,
  /// multiplying to N's size.
  template <fixed_string N, bool RunTimeSizes, class... New>
  static constexpr bool check_new_dims() {
    constexpr int d = index<N>;
    constexpr bool valid_dims = ((New::name.size() > 0 && (New::size > 0 || New::size == dynamic_size)) && ...);
    constexpr bool repeats = first_duplicate(names<typename New::name_type...>{}) >= 0;
    constexpr int clash = [] {
      constexpr int found[] = {find_name<typename New::name_type>(Names{})...};
      for (int f : found)
        if (f >= 0 && f != d) return f;
      return -1;
    }();
    if constexpr (!valid_dims) {
      return false;  // the bad new dim's own check (empty name, non-positive size) has fired
    } else if constexpr (repeats) {
      (void)check_no_repeat<typename New::name_type...>();
      return false;
    } else if constexpr (clash >= 0) {
      require<false, error::name_taken<name_of<Names, clash>, existing>>();
      return false;
    } else if constexpr (RunTimeSizes) {
      return true;
    } else {
      return check_new_sizes<N, New...>();
    }
  }
  /// check_new_dims' sizes (resolve_sizes against N's size where it is static; an inferred
  /// size, or a dynamic dim, is checked at run time).
  template <fixed_string N, class... New>
  static constexpr bool check_new_sizes() {
    constexpr int d = index<N>;
    constexpr int new_sizes[] = {New::size...};
    constexpr long long whole = L.static_dim(d) ? L.static_dim_size(d) : no_total;
    constexpr auto r = resolve_sizes({.given = new_sizes, .n = sizeof...(New), .total = whole});
    if constexpr (r.fault == size_fault::too_many_unknown) {
      require<false, error::unflatten_two_dynamic<name_t<N>>>();
    } else if constexpr (r.fault == size_fault::overflow) {  // the dynamic one is >= 1: it can never fit
      require<false, error::size_overflow<dims<typename New::name_type...>>>();
    } else if constexpr (r.fault == size_fault::total_mismatch) {
      require<false, error::unflatten_product_mismatch<name_t<N>, size_value<static_cast<int>(whole)>,
                                                       size_value<static_cast<int>(r.known)>>>();
    }
    return r.ok() || r.fault == size_fault::not_multiple;  // not_multiple: an inferred size, at run time
  }

  /// The dim (other than d) with mode m of d as one of its modes, else d: what a diagnostic
  /// names as the dim a cut falls inside.
  static constexpr int dim_with_mode(int d, int m) {
    for (int e = 0; e < L.ndims; ++e)
      if (e != d && L.count(e) == 1 && L.same_mode(L.first[e], m)) return e;
    for (int e = 0; e < L.ndims; ++e)
      if (e != d && L.dim_has(e, m)) return e;
    return d;
  }
  /// Dim d's modes as values (d static).
  static constexpr dim_layout<L.nmodes> static_layout(int d) {
    dim_layout<L.nmodes> out{};
    for (int m = L.first[d]; m < L.first[d + 1]; ++m) out.shape[out.count] = L.shape[m], out.stride[out.count++] = L.stride[m];
    return out;
  }
  /// sizes_that_cut<...> for new dim sizes above `below` in static dim d: the sizes that would work.
  template <int D, long long Below>
  struct sizes_that_work {
    static constexpr auto list = [] {
      struct result {
        int n = 0;
        int v[16]{};
      } r{};
      r.n = sizes_that_would_cut(static_layout(D), Below, r.v);
      return r;
    }();
    template <std::size_t... I>
    static auto make(std::index_sequence<I...>) -> sizes_that_cut<list.v[I]...>;
    using type = decltype(make(std::make_index_sequence<static_cast<std::size_t>(list.n)>{}));
  };

  /// Fires the diagnostic for an unflatten of dim N (into New...) whose compile-time cut Op
  /// fails: a new size PyTorch cannot cut, or an alias in place that would cut a mesh dim.
  template <fixed_string N, class Op, class... New>
  static constexpr bool check_cut() {
    constexpr auto& c = Op::cut;
    constexpr int d = index<N>;
    if constexpr (c.error_dim >= 0) {
      using new_dim = name_at<c.error_dim, typename New::name_type...>;
      constexpr int in = dim_with_mode(d, L.first[d] + c.error_mode);
      require<false, error::unflatten_not_divisible<new_dim, size_value<Op::sizes[c.error_dim]>, cut_from<name_t<N>>,
                                                    inside<name_of<Names, in>>, typename sizes_that_work<d, c.below>::type>>();
      return false;
    } else if constexpr (c.straddled >= 0) {
      require<false, error::unflatten_cuts_mesh_dim<name_t<N>, name_of<Names, c.straddled>>>();
      return false;
    } else {
      return true;
    }
  }

  /// The mesh dims that share dim d's modes and have a dynamic size or stride, as dims<...>.
  template <int D>
  struct dynamic_sharing {
    static constexpr auto list = [] {
      struct result {
        int n = 0;
        int v[L.ndims > 0 ? L.ndims : 1]{};
      } r{};
      for (int e = 0; e < L.nprimary; ++e) {
        bool dynamic_values = false;
        for (int m = L.first[e]; m < L.first[e + 1]; ++m) dynamic_values = dynamic_values || L.shape[m] < 0 || L.stride[m] < 0;
        if (e != D && L.overlap(e, D) && dynamic_values) r.v[r.n++] = e;
      }
      return r;
    }();
    template <std::size_t... I>
    static auto make(std::index_sequence<I...>) -> dynamic<name_of<Names, list.v[I]>...>;
    using type = decltype(make(std::make_index_sequence<static_cast<std::size_t>(list.n)>{}));
  };
  /// An unflatten of dim N cut at run time (its sizes are run-time values, RunTimeSizes, or its
  /// modes' are): fires unflatten_needs_static_sizes if a mesh dim shares N's modes, which
  /// only a compile-time cut can keep whole.
  template <fixed_string N, bool RunTimeSizes, class... New>
  static constexpr bool check_run_time_cut() {
    constexpr int d = index<N>;
    constexpr int shared = L.count(d) > 1 ? first_sharing_dim(L, d) : -1;
    if constexpr (shared >= 0) {
      using what = std::conditional_t<RunTimeSizes, dynamic<sizes_given_at_run_time<typename New::name_type...>>,
                                      typename dynamic_sharing<d>::type>;
      require<false, error::unflatten_needs_static_sizes<name_t<N>, shared_with<name_of<Names, shared>>, what>>();
    }
    return shared < 0;
  }
};

}  // namespace devmesh::detail
