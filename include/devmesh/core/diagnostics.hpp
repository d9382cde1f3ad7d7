// devmesh/core/diagnostics.hpp: every misuse devmesh can detect, in one place.
//
// Compile time: each misuse is a class template in devmesh::error whose template
// arguments carry the offending dim (name<'p', 'p'>, which g++ prints with the text
// "pp": see fixed_string.hpp) and the dims that exist. Instantiating it fires a
// static_assert whose message starts with "devmesh:"; g++, clang and nvcc all print the
// class with its arguments next to the message, which is how a C++20 literal message
// gets to "name the offending dim".
//
// Run time: the same checks on dynamic sizes throw devmesh::mesh_error with the same
// message text plus the values involved.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "config.hpp"
#include "fixed_string.hpp"

// The message texts, shared by static_assert (needs a literal) and exceptions.
#define DEVMESH_MSG_UNKNOWN_DIM \
  "devmesh: unknown dim: no dim of this mesh has this name (the name and the dims that exist are the arguments of error::unknown_dim<name, existing_dims<...>>)"
#define DEVMESH_MSG_DUPLICATE_DIM \
  "devmesh: duplicate dim name: every dim of a mesh needs its own name (see error::duplicate_dim_name<name, dims<...>>)"
#define DEVMESH_MSG_REPEATED_IN_SLICE \
  "devmesh: the same dim is named twice in one slice or group (see error::dim_repeated<name, requested<...>>)"
#define DEVMESH_MSG_SLICE_OVERLAP \
  "devmesh: a slice or group names an alias together with one of its own dims (see error::dims_overlap<alias, dim, requested<...>>)"
#define DEVMESH_MSG_FLATTEN_OVERLAP \
  "devmesh: a flatten names a dim twice, or an alias together with one of its own dims (see error::flatten_overlaps_itself<alias, dim, flattened<...>>)"
#define DEVMESH_MSG_NAME_TAKEN \
  "devmesh: the new dim name is already taken by a dim of this mesh (see error::name_taken<name, existing_dims<...>>)"
#define DEVMESH_MSG_UNFLATTEN_PRODUCT \
  "devmesh: unflatten: the product of the new dims' sizes differs from the size of the dim being split (see error::unflatten_product_mismatch<dim, dim_size, product>)"
#define DEVMESH_MSG_UNFLATTEN_SPLIT \
  "devmesh: unflatten: a new dim's size puts its end inside a dim of the one being split, where PyTorch cannot cut it (the end must divide, and be divided by, the ends of the coalesced mode it falls in); see error::unflatten_not_divisible<new dim, size, cut_from<dim>, inside<dim>, sizes_that_cut<...>>"
#define DEVMESH_MSG_UNFLATTEN_CUTS_DIM \
  "devmesh: unflatten of an alias in place: the new dims cut across a dim of this mesh that shares the alias's ranks (PyTorch unflattens only a mesh's own dim: slice the alias first, m.slice<\"alias\">()); see error::unflatten_cuts_mesh_dim<alias, mesh dim>"
#define DEVMESH_MSG_UNFLATTEN_DYNAMIC_FLAT \
  "devmesh: unflatten of an alias in place, whose ranks a dim of this mesh shares, needs static values to keep that dim whole; the diagnostic's dynamic<...> says which are dynamic (give them static sizes, or slice the alias first, m.slice<\"alias\">(), as PyTorch unflattens a 1-D mesh); see error::unflatten_needs_static_sizes<alias, shared_with<dim>, dynamic<...>>"
#define DEVMESH_MSG_UNFLATTEN_SIZE_COUNT \
  "devmesh: unflatten: wrong number of run-time sizes: pass one per dynamic new dim, or one per new dim (see error::unflatten_size_count<given, dynamic new dims, new dims>)"
#define DEVMESH_MSG_UNFLATTEN_TWO_DYNAMIC \
  "devmesh: unflatten: at most one new dim may have a dynamic size; it is inferred (see error::unflatten_two_dynamic<dim>)"
#define DEVMESH_MSG_UNFLATTEN_EMPTY \
  "devmesh: unflatten needs at least one new dim (see error::unflatten_without_dims<dim>)"
#define DEVMESH_MSG_NON_POSITIVE \
  "devmesh: a dim size must be positive, or devmesh::dynamic_size (see error::non_positive_size<name, size>)"
#define DEVMESH_MSG_EMPTY_NAME \
  "devmesh: a dim name must not be empty (see error::empty_dim_name<context>: the dim's size, or the dims of the mesh that gets the new name)"
#define DEVMESH_MSG_NO_DIMS "devmesh: a mesh needs at least one dim (see error::mesh_without_dims<dims<>>)"
#define DEVMESH_MSG_EMPTY_SLICE "devmesh: slice<>() needs at least one dim name (see error::slice_without_dims<existing_dims<...>>)"
#define DEVMESH_MSG_EMPTY_GROUP \
  "devmesh: group<>(r) and comm_split<>(r) need at least one dim name; group(r) without a template argument list is the whole mesh (see error::group_without_dims<existing_dims<...>>)"
#define DEVMESH_MSG_OVERFLOW \
  "devmesh: the mesh has more ranks than an int can count (see error::size_overflow<dims<...>>)"
#define DEVMESH_MSG_SIZE_TYPE \
  "devmesh: a mesh size must be an integer, not bool, a character, a floating-point number, a pointer, an enum or a class (see error::size_not_integer<dim, argument type>)"
#define DEVMESH_MSG_SIZE_RANGE "devmesh: a dim size does not fit in an int (ranks are int, as in MPI and NCCL)"
#define DEVMESH_MSG_UNPARSABLE_NAME \
  "devmesh: parse_mesh: a dim name with '=', ',', a space or a tab in it cannot be written in a mesh spec (see error::unparsable_dim_name<name, dims<...>>)"
#define DEVMESH_MSG_SIZE_COUNT \
  "devmesh: wrong number of sizes: pass one size per dynamic dim, or one per dim (see error::wrong_size_count<given, dynamic_dims, dims>)"
#define DEVMESH_MSG_FOR_WORLD_AMBIGUOUS \
  "devmesh: for_world() can infer at most one dynamic dim; pass the sizes to the constructor instead (see error::for_world_ambiguous<dynamic dims<...>>)"
#define DEVMESH_MSG_DEFAULT_DYNAMIC \
  "devmesh: a mesh with dynamic dims cannot be default-constructed: pass their sizes to the constructor, or use for_world(world) (see error::default_constructed_dynamic_mesh<dynamic dims<...>>)"
#define DEVMESH_MSG_CONCAT_OVERLAP \
  "devmesh: concatenate: a dim of one mesh shares ranks with a dim of the other, or their digits interleave, so the result would not be a mesh (see error::concatenated_dims_overlap<dim, dim, dims<...>>)"
#define DEVMESH_MSG_CONCAT_ROOTS \
  "devmesh: concatenate: the meshes are not of one root, their roots have different sizes (see error::concatenated_roots_differ<dims<...>, dims<...>>)"
#define DEVMESH_MSG_RANK_RANGE "devmesh: rank out of range"
#define DEVMESH_MSG_COORD_RANGE "devmesh: coordinate out of range"
#define DEVMESH_MSG_STATIC_SIZE_MISMATCH "devmesh: a size given for a static dim differs from its static size"
#define DEVMESH_MSG_WORLD_MISMATCH "devmesh: the mesh does not fit the world size"
#define DEVMESH_MSG_CONVERSION \
  "devmesh: mesh conversion: a static value of the target mesh type differs from the mesh's (see error::converted_value_differs<dim, what, target's value, mesh's value>)"
#define DEVMESH_MSG_UNSUPPORTED_TYPE \
  "devmesh: this element type has no datatype in this communicator backend (see error::unsupported_element_type<type, backend>)"

namespace devmesh {

/// Thrown for every run-time misuse of a mesh (bad dynamic size, position out of range, ...).
/// what() starts with "devmesh:" and carries the values involved.
class mesh_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Thrown when a communicator backend call fails (MPI error, NCCL error, timeout, ...).
/// what() starts with "devmesh:" and carries the backend's own error string.
class comm_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class...>
inline constexpr bool always_false = false;

/// Type-level lists printed inside diagnostics.
template <class... Names>
struct existing_dims {};
template <class... Names>
struct dims {};
template <class... Names>
struct requested {};
template <class... Names>
struct flattened {};
template <int V>
struct size_value {};
/// What unflatten diagnostics name (error::unflatten_not_divisible, unflatten_needs_static_sizes).
template <class Dim>
struct cut_from {};
template <class Dim>
struct inside {};
template <int... Sizes>
struct sizes_that_cut {};
template <class Dim>
struct shared_with {};
template <class... What>
struct dynamic {};
/// In dynamic<...>: the new dims whose sizes are given at run time.
template <class... NewDims>
struct sizes_given_at_run_time {};
/// What a conversion diagnostic compares (error::converted_value_differs): a mode's size (a
/// one-mode dim's size), a mode's stride, or the root's number of ranks.
struct size_of_mode {};
struct stride_of_mode {};
struct size_of_root {};

namespace error {
// Each template's fire() holds its static_assert; detail::require calls it on failure.
// Their template arguments are the message: compilers print them with the assertion.
template <class Name, class Existing>
struct unknown_dim {
  static constexpr void fire() { static_assert(always_false<Name>, DEVMESH_MSG_UNKNOWN_DIM); }
};
template <class Name, class Dims>
struct duplicate_dim_name {
  static constexpr void fire() { static_assert(always_false<Name>, DEVMESH_MSG_DUPLICATE_DIM); }
};
template <class Name, class Requested>
struct dim_repeated {
  static constexpr void fire() { static_assert(always_false<Name>, DEVMESH_MSG_REPEATED_IN_SLICE); }
};
template <class Alias, class Dim, class Requested>
struct dims_overlap {
  static constexpr void fire() { static_assert(always_false<Alias>, DEVMESH_MSG_SLICE_OVERLAP); }
};
template <class Dim, class Other, class Dims>
struct concatenated_dims_overlap {
  static constexpr void fire() { static_assert(always_false<Dim>, DEVMESH_MSG_CONCAT_OVERLAP); }
};
template <class DimsA, class DimsB>
struct concatenated_roots_differ {
  static constexpr void fire() { static_assert(always_false<DimsA>, DEVMESH_MSG_CONCAT_ROOTS); }
};
template <class Alias, class Dim, class Flattened>
struct flatten_overlaps_itself {
  static constexpr void fire() { static_assert(always_false<Alias>, DEVMESH_MSG_FLATTEN_OVERLAP); }
};
template <class Name, class Existing>
struct name_taken {
  static constexpr void fire() { static_assert(always_false<Name>, DEVMESH_MSG_NAME_TAKEN); }
};
template <class Dim, class DimSize, class Product>
struct unflatten_product_mismatch {
  static constexpr void fire() { static_assert(always_false<Dim>, DEVMESH_MSG_UNFLATTEN_PRODUCT); }
};
template <class NewDim, class Size, class CutFrom, class Inside, class SizesThatCut>
struct unflatten_not_divisible {
  static constexpr void fire() { static_assert(always_false<NewDim>, DEVMESH_MSG_UNFLATTEN_SPLIT); }
};
template <class Alias, class MeshDim>
struct unflatten_cuts_mesh_dim {
  static constexpr void fire() { static_assert(always_false<Alias>, DEVMESH_MSG_UNFLATTEN_CUTS_DIM); }
};
template <class Alias, class SharedWith, class Dynamic>
struct unflatten_needs_static_sizes {
  static constexpr void fire() { static_assert(always_false<Alias>, DEVMESH_MSG_UNFLATTEN_DYNAMIC_FLAT); }
};
template <class Given, class Dynamic, class All>
struct unflatten_size_count {
  static constexpr void fire() { static_assert(always_false<Given>, DEVMESH_MSG_UNFLATTEN_SIZE_COUNT); }
};
template <class Dim>
struct unflatten_two_dynamic {
  static constexpr void fire() { static_assert(always_false<Dim>, DEVMESH_MSG_UNFLATTEN_TWO_DYNAMIC); }
};
template <class Dim>
struct unflatten_without_dims {
  static constexpr void fire() { static_assert(always_false<Dim>, DEVMESH_MSG_UNFLATTEN_EMPTY); }
};
template <class Name, class Size>
struct non_positive_size {
  static constexpr void fire() { static_assert(always_false<Name>, DEVMESH_MSG_NON_POSITIVE); }
};
template <class Context>
struct empty_dim_name {
  static constexpr void fire() { static_assert(always_false<Context>, DEVMESH_MSG_EMPTY_NAME); }
};
template <class Dims>
struct mesh_without_dims {
  static constexpr void fire() { static_assert(always_false<Dims>, DEVMESH_MSG_NO_DIMS); }
};
template <class Existing>
struct slice_without_dims {
  static constexpr void fire() { static_assert(always_false<Existing>, DEVMESH_MSG_EMPTY_SLICE); }
};
template <class Existing>
struct group_without_dims {
  static constexpr void fire() { static_assert(always_false<Existing>, DEVMESH_MSG_EMPTY_GROUP); }
};
template <class Dims>
struct size_overflow {
  static constexpr void fire() { static_assert(always_false<Dims>, DEVMESH_MSG_OVERFLOW); }
};
template <class Dim, class Type>
struct size_not_integer {
  static constexpr void fire() { static_assert(always_false<Type>, DEVMESH_MSG_SIZE_TYPE); }
};
template <class Name, class Dims>
struct unparsable_dim_name {
  static constexpr void fire() { static_assert(always_false<Name>, DEVMESH_MSG_UNPARSABLE_NAME); }
};
template <class Given, class Dynamic, class All>
struct wrong_size_count {
  static constexpr void fire() { static_assert(always_false<Given>, DEVMESH_MSG_SIZE_COUNT); }
};
template <class DynamicDims>
struct default_constructed_dynamic_mesh {
  static constexpr void fire() { static_assert(always_false<DynamicDims>, DEVMESH_MSG_DEFAULT_DYNAMIC); }
};
template <class DynamicDims>
struct for_world_ambiguous {
  static constexpr void fire() { static_assert(always_false<DynamicDims>, DEVMESH_MSG_FOR_WORLD_AMBIGUOUS); }
};
template <class Dim, class What, class Target, class Mesh>
struct converted_value_differs {
  static constexpr void fire() { static_assert(always_false<Dim>, DEVMESH_MSG_CONVERSION); }
};
template <class T, class Backend>
struct unsupported_element_type {
  static constexpr void fire() { static_assert(always_false<T>, DEVMESH_MSG_UNSUPPORTED_TYPE); }
};
}  // namespace error

namespace detail {
/// The type a diagnostic prints for T: T itself, except that under g++ every name<'t', 'p'>
/// in it becomes name<fixed_string<3>{"tp"}>, which g++ prints with the text "tp" (clang
/// prints a class-type argument as numbers, {{116, 112, 0}}, and nvcc as chars, so they
/// keep name<'t', 'p'>). Only failing compiles compute it; no type the library uses has it.
template <class T>
struct spelled {
  using type = T;
};
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && !defined(__EDG__)
template <auto... C>
struct spelled<name<C...>> {
  using type = name<fixed_string<sizeof...(C) + 1>(name<C...>::chars)>;
};
template <template <class...> class L, class... A>
struct spelled<L<A...>> {
  using type = L<typename spelled<A>::type...>;
};
#endif
template <class T>
using spelled_t = typename spelled<T>::type;

/// Fires Error's static_assert (in Error::fire's body) when Ok is false; a no-op
/// otherwise. The assertion sits in a member function, not in the class body, so the
/// class stays valid and require() stays a constant expression after the failure:
/// compilation goes on with the caller's fallback value instead of a cascade of errors
/// (clang marks every expression that touches a class whose body failed as invalid).
template <bool Ok, class Error>
constexpr void require() {
  if constexpr (!Ok) spelled_t<Error>::fire();
}

/// Run-time counterpart: not constexpr on purpose, so that reaching it inside a constant
/// expression is a compile error that names it (position or coordinate out of range).
[[noreturn]] inline void throw_mesh_error(const std::string& what) { throw mesh_error(what); }

/// A run-time error message built in a fixed buffer (cut at 511 characters): the layout
/// queries' error paths use it instead of std::string concatenation, which every TU that
/// queries a mesh would otherwise compile and optimise again.
struct message {
  char text[512]{};
  int length = 0;
  message& operator<<(std::string_view s) {
    for (char c : s)
      if (length < 511) text[length++] = c;
    return *this;
  }
  message& operator<<(long long v) {
    char digits[24]{};
    int n = 0;
    const bool negative = v < 0;
    unsigned long long u = negative ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
    do digits[n++] = static_cast<char>('0' + u % 10); while ((u /= 10) != 0);
    if (negative) *this << std::string_view("-");
    while (n > 0) *this << std::string_view(&digits[--n], 1);
    return *this;
  }
  message& operator<<(int v) { return *this << static_cast<long long>(v); }
};
[[noreturn]] inline void throw_mesh_error(const message& m) { throw mesh_error(m.text); }

// The messages of the layout queries' run-time errors, built once here rather than in every
// mesh type's members, which only forward.
[[noreturn, gnu::noinline]] inline void throw_rank_error(int position, int n) {
  throw_mesh_error(message() << DEVMESH_MSG_RANK_RANGE ": rank " << position << " is not in [0, " << n << ")");
}
[[noreturn, gnu::noinline]] inline void throw_coordinate_error(std::string_view dim, int c, int n) {
  throw_mesh_error(message() << DEVMESH_MSG_COORD_RANGE ": coordinate " << c << " along dim '" << dim
                             << "' is not in [0, " << n << ")");
}
/// A dim index out of [0, n): the message lists the dims (the first nprimary of names) and
/// the aliases (the rest), so that the index can be read against them.
[[noreturn, gnu::noinline]] inline void throw_dim_index_error(int d, const std::string_view* names, int nprimary,
                                                              int n) {
  message m;
  m << "devmesh: dim index " << d << " is not in [0, " << n << ") (dims: ";
  for (int i = 0; i < n; ++i) m << (i == 0 ? "" : i == nprimary ? "; aliases: " : ", ") << names[i];
  throw_mesh_error(m << ")");
}
// The forms mesh members call, in host and device code: not constexpr, so reaching one in a
// constant expression is a compile error naming it (g++ and clang also quote the calling
// line, whose comment says what went wrong); in device code (no exceptions) they trap.
/// Coordinate c along dim d (of Names) is not in [0, n).
template <class Names>
[[noreturn]] DEVMESH_HOST_DEVICE void fail_coordinate(int d, int c, int n) {
#if DEVMESH_DEVICE_PASS
  (void)d, (void)c, (void)n;
  __trap();
  __builtin_unreachable();
#else
  throw_coordinate_error(Names::views[d], c, n);
#endif
}
/// Dim index d is not in [0, ndims) of a mesh whose dims are Names (the first nprimary).
template <class Names, int NPrimary, int NDims>
[[noreturn]] DEVMESH_HOST_DEVICE void fail_dim_index(int d) {
#if DEVMESH_DEVICE_PASS
  (void)d;
  __trap();
  __builtin_unreachable();
#else
  throw_dim_index_error(d, Names::views, NPrimary, NDims);
#endif
}
/// A dim name given at run time that the mesh does not have: the compile-time diagnostic's
/// text, the name, and the dims (the first nprimary of names) and aliases that exist.
[[noreturn, gnu::noinline]] inline void throw_unknown_dim(std::string_view name, const std::string_view* names,
                                                          int nprimary, int n) {
  message m;
  m << DEVMESH_MSG_UNKNOWN_DIM ": '" << name << "': the dims are ";
  for (int i = 0; i < n; ++i) m << (i == 0 ? "" : i == nprimary ? " (aliases: " : ", ") << names[i];
  throw_mesh_error(m << (n > nprimary ? ")" : ""));
}
}  // namespace detail

}  // namespace devmesh
