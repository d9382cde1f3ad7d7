// devmesh/core/conversion.hpp: static <-> dynamic mesh conversion, as std::extents does it.
// A mesh converts to another mesh type with the same names and the same layout structure
// (the same dims and aliases, the same number of modes per dim) whose values agree. Each
// value of the target layout (every mode's shape and stride, the root's size) is static or a
// slot; the conversion fills the target's slots from the mesh's values and checks the rest:
//   - implicit when nothing is left to check at run time: every static value of the target
//     is static and equal in the mesh (static -> dynamic, or a type to itself);
//   - explicit otherwise (dynamic -> static): the mesh's values are checked, a mesh_error
//     naming the dim and both values if one differs (a trap in device code);
//   - a compile error naming the dim where both values are static and differ.
#pragma once
#include <string_view>
#include <type_traits>

#include "config.hpp"
#include "diagnostics.hpp"
#include "indexed_mesh.hpp"
#include "layout.hpp"
#include "names.hpp"

namespace devmesh::detail {

// A layout's values, numbered as positions of one list: the shapes of modes [0, M), their
// strides [M, 2M), the root's size 2M. Shapes come first, so that a conversion whose sizes
// differ reports a size (a root's strides follow from its sizes).
template <int D, int M>
DEVMESH_HOST_DEVICE constexpr int layout_value(const layout<D, M>& l, int p) {
  return p < M ? l.shape[p] : p < 2 * M ? l.stride[p - M] : l.root;
}
template <auto L>
DEVMESH_HOST_DEVICE constexpr int mesh_value(const indexed_mesh<L>& m, int p) {
  return p < L.nmodes ? m.mode_shape(p) : p < 2 * L.nmodes ? m.mode_stride(p - L.nmodes) : m.root_size();
}

template <auto A, auto B>
constexpr bool same_structure_of() {
  if constexpr (!std::is_same_v<decltype(A), decltype(B)>) {
    return false;
  } else {
    if (A.nprimary != B.nprimary) return false;
    for (int d = 0; d <= A.ndims; ++d)
      if (A.first[d] != B.first[d]) return false;
    return true;
  }
}
/// True if layouts A and B have the same structure: the same dims and aliases, the same
/// modes per dim (their values may differ). A variable, not a function: nvcc 13 fails a
/// constructor's deduction on a constexpr function call over class-type NTTPs in its
/// requires-clause, and takes a variable.
template <auto A, auto B>
inline constexpr bool same_structure = same_structure_of<A, B>();

/// What a conversion checks at run time, per value: nothing, the target's static value, or
/// the target's slot (a slot used twice: both places need one value).
enum class conversion_check : int { none, against_static, against_slot };

/// Layout l with every value its own slot, numbered as layout_value numbers the values (slot
/// q is value q): the type of a mesh rebuilt from values alone (basic_mesh::from_values).
template <int D, int M>
constexpr layout<D, M> all_dynamic(const layout<D, M>& l) {
  layout<D, M> out = l;
  for (int m = 0; m < M; ++m) out.shape[m] = dynamic_slot(m), out.stride[m] = dynamic_slot(M + m);
  out.root = dynamic_slot(2 * M);
  out.ndynamic = 2 * M + 1;
  return out;
}

/// How a mesh of layout From converts to one of layout To (same structure), computed once.
template <auto To, auto From>
struct conversion {
  static constexpr int nvalues = 2 * To.nmodes + 1;
  struct plan_type {
    conversion_check check[nvalues]{};
    int from[To.ndynamic > 0 ? To.ndynamic : 1]{};  // target slot k: the value that fills it
    int mismatch = -1;                              // the first value static in both and different
    bool checked_at_run_time = false;
  };
  static constexpr plan_type plan = [] {
    plan_type p{};
    for (int& f : p.from) f = -1;
    for (int q = 0; q < nvalues; ++q) {
      const int t = layout_value(To, q), s = layout_value(From, q);
      const int want = t > 0 ? t : p.from[-1 - t] >= 0 ? layout_value(From, p.from[-1 - t]) : s;
      if (t < 0 && p.from[-1 - t] < 0) {
        p.from[-1 - t] = q;
      } else if (want > 0 && s > 0) {
        if (want != s && p.mismatch < 0) p.mismatch = q;
      } else if (want != s) {  // a slot of the mesh against a static value or another slot
        p.check[q] = t > 0 ? conversion_check::against_static : conversion_check::against_slot;
        p.checked_at_run_time = true;
      }
    }
    return p;
  }();
  /// The target's value that differs (valid if plan.mismatch >= 0), and the mesh's.
  static constexpr int wanted = plan.mismatch < 0 ? 0
                                : layout_value(To, plan.mismatch) > 0
                                    ? layout_value(To, plan.mismatch)
                                    : layout_value(From, plan.from[-1 - layout_value(To, plan.mismatch)]);
  static constexpr int found = plan.mismatch < 0 ? 0 : layout_value(From, plan.mismatch);
};

template <auto>
struct same_layout_tag {};
template <auto To, auto From>
constexpr bool conversion_checked_at_run_time() {
  if constexpr (std::is_same_v<same_layout_tag<To>, same_layout_tag<From>> || !same_structure<To, From>)
    return false;  // a copy, or no conversion: no plan to compute
  else
    return conversion<To, From>::plan.checked_at_run_time;
}
/// True if a mesh of layout From converts to one of layout To only with checks at run time:
/// the explicit converting constructor takes it, else the implicit one. (A variable, for nvcc 13, as same_structure;
/// computed without a plan where the layouts are one, or of different structures, since an
/// explicit-specifier is evaluated for every candidate, copies included.)
template <auto To, auto From>
inline constexpr bool explicit_conversion = conversion_checked_at_run_time<To, From>();

/// True if a mesh of layout From converts to another type of layout To: the same structure,
/// and not the same layout (a copy).
template <auto To, auto From>
inline constexpr bool converts = !std::is_same_v<same_layout_tag<To>, same_layout_tag<From>> && same_structure<To, From>;

/// The dim (primary first) that has mode m of layout L.
template <int D, int M>
constexpr int dim_of_mode(const layout<D, M>& l, int m) {
  for (int d = 0; d < D; ++d)
    if (l.first[d] <= m && m < l.first[d + 1]) return d;
  return 0;
}

/// Fires the diagnostic for value q of To (static in both, and different).
template <auto To, class Names, int Q, int Want, int Got>
constexpr void report_conversion_mismatch() {
  constexpr int M = To.nmodes;
  if constexpr (Q == 2 * M) {
    require<false, error::converted_value_differs<typename as_existing<Names>::as_dims, size_of_root,
                                                  size_value<Want>, size_value<Got>>>();
  } else {
    using what = std::conditional_t<(Q < M), size_of_mode, stride_of_mode>;
    require<false, error::converted_value_differs<name_of<Names, dim_of_mode(To, Q < M ? Q : Q - M)>, what,
                                                  size_value<Want>, size_value<Got>>>();
  }
}

/// The run-time failure, built once here: value q of the target's layout (a mode's size or
/// stride, `single`: its dim has one mode; or the root's size, dim empty) is `want`, the mesh has `got`.
[[noreturn]] inline void throw_conversion_error(std::string_view dim, bool stride, bool single, int want, int got) {
  message m;
  m << DEVMESH_MSG_CONVERSION ": ";
  if (dim.empty())
    m << "the root has " << got << " ranks";
  else
    m << "dim '" << dim << "' has " << (single ? "" : "a mode of ") << (stride ? "stride " : "size ") << got;
  throw_mesh_error(m << ", the target type needs " << want);
}
// Not constexpr: in a constant expression a failing check is a compile error naming it.
template <auto To, class Names>
[[noreturn]] DEVMESH_HOST_DEVICE void fail_conversion(int q, int want, int got) {
#if DEVMESH_DEVICE_PASS
  (void)q, (void)want, (void)got;
  __trap();
  __builtin_unreachable();
#else
  constexpr int M = To.nmodes;
  const int d = q == 2 * M ? -1 : dim_of_mode(To, q < M ? q : q - M);
  throw_conversion_error(d < 0 ? std::string_view() : Names::views[d], q >= M, d >= 0 && To.count(d) == 1, want, got);
#endif
}

/// The run-time values of a mesh of layout To converted from `from` (checked, see above).
template <auto To, class Names, auto From>
DEVMESH_HOST_DEVICE constexpr mesh_values<To.ndynamic> converted_values(const indexed_mesh<From>& from) {
  using c = conversion<To, From>;
  constexpr auto plan = c::plan;  // a local copy: device code cannot read the static
  mesh_values<To.ndynamic> out{};
  if constexpr (plan.mismatch >= 0) {
    report_conversion_mismatch<To, Names, plan.mismatch, c::wanted, c::found>();
  } else {
    if constexpr (To.ndynamic > 0)
      for (int k = 0; k < To.ndynamic; ++k) out.v[k] = mesh_value(from, plan.from[k]);
    if constexpr (plan.checked_at_run_time) {
      for (int q = 0; q < c::nvalues; ++q) {
        if (plan.check[q] == conversion_check::none) continue;
        const int t = layout_value(To, q);
        const int want = t > 0 ? t : mesh_value(from, plan.from[-1 - t]);
        const int got = mesh_value(from, q);
        if (got != want) fail_conversion<To, Names>(q, want, got);  // devmesh: a value differs from the target type's
      }
    }
  }
  return out;
}

}  // namespace devmesh::detail
