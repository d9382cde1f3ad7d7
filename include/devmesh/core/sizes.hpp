// devmesh/core/sizes.hpp: the one size resolver. "At most one size may be unknown and is
// inferred from a total; static sizes must match; every size is positive; the product fits
// an int" is one function, resolve_sizes, used at compile time (a root's static sizes, an
// unflatten's new dims) and at run time (the mesh constructor, for_world, parse_mesh, an
// unflatten of a dynamic dim, the algebra's inferred size). Its callers turn a fault into
// their diagnostic or message; the run-time messages of the mesh's own callers are built
// here, once.
#pragma once
#include <climits>
#include <span>
#include <string_view>

#include "config.hpp"
#include "diagnostics.hpp"

namespace devmesh::detail {

/// What resolve_sizes found wrong, in the order it looks: per dim (in dim order) an unknown
/// size too many, a size that is not positive or differs from the dim's static size; then
/// the product; then the total.
enum class size_fault : int {
  none,
  too_many_unknown,   // more unknown sizes than allowed (dim: the first one too many)
  non_positive,       // dim's size is not positive
  static_mismatch,    // dim's size differs from its static size
  overflow,           // the sizes multiply to more than INT_MAX
  total_mismatch,     // no unknown size, and the sizes do not multiply to the total
  not_multiple,       // the total is not a positive multiple of the known sizes' product
  inferred_mismatch,  // the inferred size differs from that dim's static size
};

/// No total given: the unknown size (if any) stays unknown. (Not an int: every int is a
/// total to check, for_world(-1) included.)
inline constexpr long long no_total = LLONG_MIN;

/// What resolve_sizes reads: n sizes, at most `unknowns` of them unknown (dynamic_size).
struct size_request {
  const int* given = nullptr;  // per dim: its size, or dynamic_size if unknown
  int n = 0;
  // Per dim: its static size or dynamic_size (empty: none). A span, not a pointer tested
  // against nullptr: GCC does not fold `&object != nullptr` in a constant expression under
  // -fsanitize=undefined (it keeps null-pointer checks), and the static sizes are objects.
  std::span<const int> fixed{};
  long long total = no_total;  // what the sizes multiply to (then the unknown one is inferred)
  int unknowns = 1;            // how many sizes may be unknown; 0: dynamic_size is a bad size
};

/// What resolve_sizes found: the fault (none if the sizes are fine) and the dim at fault,
/// the unknown dim and, once the total is known, its size; the known sizes' product.
struct resolved_sizes {
  size_fault fault = size_fault::none;
  int dim = -1;              // the dim at fault (too_many_unknown: the second unknown one)
  int inferred = -1;         // the (first) unknown dim, or -1
  int inferred_size = 0;     // its size, when a total was given and the fault is none
  long long known = 1;       // the product of the known sizes, saturated at INT_MAX + 1
  int inferred_static = dynamic_size;  // the unknown dim's static size, if it has one
  /// True if the sizes are fine.
  DEVMESH_HOST_DEVICE constexpr bool ok() const { return fault == size_fault::none; }
};

/// The first half of resolve_sizes: the given sizes alone (per dim, then their product).
/// Where the sizes are constants and only the total is known at run time, a caller resolves
/// them at compile time and leaves the run time resolve_total, a division.
DEVMESH_HOST_DEVICE constexpr resolved_sizes resolve_given(const size_request& q) {
  resolved_sizes r{};
  int unknown = 0;
  for (int d = 0; d < q.n && r.ok(); ++d) {
    const int s = q.given[d];
    const int st = q.fixed.empty() ? dynamic_size : q.fixed[static_cast<std::size_t>(d)];
    if (s == dynamic_size && q.unknowns > 0) {
      if (++unknown > q.unknowns) r = {size_fault::too_many_unknown, d, r.inferred};
      if (r.inferred < 0) r.inferred = d, r.inferred_static = st;
    } else if (s <= 0) {
      r = {size_fault::non_positive, d, r.inferred};
    } else if (st != dynamic_size && st != s) {
      r = {size_fault::static_mismatch, d, r.inferred};
    }
  }
  for (int d = 0; d < q.n && r.ok(); ++d) {
    if (q.given[d] > 0) r.known *= q.given[d];
    if (r.known > INT_MAX) r = {size_fault::overflow, -1, r.inferred, 0, INT_MAX + 1LL};
  }
  return r;
}

/// The second half of resolve_sizes: given sizes resolved by resolve_given (r), against a
/// total: the product must be it, or, with an unknown size, a positive multiple of the known
/// ones; the inferred size must match that dim's static size (as resolve_given found it).
DEVMESH_HOST_DEVICE constexpr resolved_sizes resolve_total(resolved_sizes r, long long total) {
  if (!r.ok() || total == no_total) return r;
  if (r.inferred < 0) {
    if (r.known != total) r.fault = size_fault::total_mismatch;
  } else if (total <= 0 || total % r.known != 0) {
    r.fault = size_fault::not_multiple;
  } else {
    r.inferred_size = static_cast<int>(total / r.known);
    const int st = r.inferred_static;
    if (st != dynamic_size && st != r.inferred_size) r.fault = size_fault::inferred_mismatch;
  }
  return r;
}

/// The one size resolver (see the file comment); no allocation, usable in constant
/// expressions and device code.
DEVMESH_HOST_DEVICE constexpr resolved_sizes resolve_sizes(const size_request& q) {
  return resolve_total(resolve_given(q), q.total);
}

// The run-time messages of the mesh's own callers, built once (not per mesh type).

/// The mesh constructor's sizes (one per dim, none unknown) are wrong: a dim's size is not
/// positive or differs from its static size, or the sizes overflow.
[[noreturn]] inline void throw_sizes_error(const resolved_sizes& r, const std::string_view* names,
                                           const int* static_sizes, const int* sizes, int n) {
  message m;
  if (r.fault == size_fault::overflow) {
    m << DEVMESH_MSG_OVERFLOW ": the sizes (";
    for (int b = 0; b < n; ++b) m << (b ? ", " : "") << names[b] << "=" << sizes[b];
    throw_mesh_error(m << ") multiply to more than " << INT_MAX);
  }
  const int d = r.dim;
  if (r.fault == size_fault::non_positive)
    throw_mesh_error(m << DEVMESH_MSG_NON_POSITIVE ": got " << sizes[d] << " for dim '" << names[d] << "'");
  throw_mesh_error(m << DEVMESH_MSG_STATIC_SIZE_MISMATCH ": dim '" << names[d] << "' is " << static_sizes[d]
                     << ", got " << sizes[d]);
}

/// for_world: the static sizes do not fit the world (dynamic_dim: the dim to infer, if any).
[[noreturn]] inline void throw_world_error(const resolved_sizes& r, int world, std::string_view dynamic_dim) {
  message m;
  m << DEVMESH_MSG_WORLD_MISMATCH ": world size " << world;
  if (r.inferred < 0)
    m << " differs from the mesh size " << r.known;
  else
    m << " is not a positive multiple of the static dims' product " << r.known << " (dynamic dim '" << dynamic_dim
      << "' cannot be inferred)";
  throw_mesh_error(m);
}

/// unflatten: the new sizes do not multiply to (or, one inferred, do not divide) dim's size.
[[noreturn]] inline void throw_unflatten_error(const resolved_sizes& r, std::string_view dim, int whole) {
  throw_mesh_error(message() << DEVMESH_MSG_UNFLATTEN_PRODUCT ": dim '" << dim << "' has size " << whole
                             << (r.inferred >= 0 ? ", not divisible by the static new sizes' product "
                                                 : ", the new dims multiply to ")
                             << r.known);
}

/// unflatten with run-time sizes: the sizes given for the new dims (names[j], sizes[j], n of
/// them; dynamic_size: inferred; fixed[j]: their static sizes) do not fit dim's size `whole`.
[[noreturn]] inline void throw_new_sizes_error(const resolved_sizes& r, std::string_view dim, int whole,
                                               const std::string_view* names, const int* sizes, const int* fixed,
                                               int n) {
  message m;
  const auto list = [&] {
    m << " (";
    for (int j = 0; j < n; ++j) {
      m << (j ? ", " : "") << names[j];
      if (sizes[j] == dynamic_size) m << " inferred";
      else m << "=" << sizes[j];
    }
    m << ")";
  };
  switch (r.fault) {
    case size_fault::too_many_unknown:
      m << DEVMESH_MSG_UNFLATTEN_TWO_DYNAMIC ": for dim '" << dim << "'";
      break;
    case size_fault::static_mismatch:
      m << DEVMESH_MSG_STATIC_SIZE_MISMATCH ": new dim '" << names[r.dim] << "' of dim '" << dim << "' is "
        << fixed[r.dim] << ", got " << sizes[r.dim];
      break;
    case size_fault::inferred_mismatch:
      m << DEVMESH_MSG_STATIC_SIZE_MISMATCH ": new dim '" << names[r.inferred] << "' is " << fixed[r.inferred]
        << ", inferred " << whole / r.known << " from dim '" << dim << "' of size " << whole;
      break;
    case size_fault::overflow:
      m << DEVMESH_MSG_OVERFLOW ": the new sizes of dim '" << dim << "'";
      break;
    default:
      m << DEVMESH_MSG_UNFLATTEN_PRODUCT ": dim '" << dim << "' has size " << whole
        << (r.inferred >= 0 ? ", not divisible by the other new sizes' product " : ", the new dims multiply to ")
        << r.known;
  }
  list();
  throw_mesh_error(m);
}

/// unflatten with run-time sizes: a size that is not a positive int (not dynamic_size).
[[noreturn]] inline void throw_new_size_error(std::string_view name, long long v) {
  message m;
  m << (v > INT_MAX ? DEVMESH_MSG_SIZE_RANGE : DEVMESH_MSG_NON_POSITIVE) << ": got " << v << " for new dim '" << name
    << "' (dm::dynamic_size: inferred)";
  throw_mesh_error(m);
}

}  // namespace devmesh::detail
