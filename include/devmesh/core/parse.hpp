// devmesh/core/parse.hpp: mesh sizes from a user's string ("replicate=2,shard=4"), from the
// environment (DEVMESH_SHAPE) or from the command line (--mesh ...), into a dynamic mesh.
//
// The input is hostile: it comes from job scripts and users, so every malformed spec is
// rejected with a devmesh::mesh_error naming the dim and quoting the input, never UB.
// Grammar (docs/parse.md):
//   spec  := entry (',' entry)*          every dim of the mesh exactly once, any order
//   entry := name '=' size
//   name  := a dim's name, which has no '=', ',', space or tab (checked at compile time)
//   size  := [1-9][0-9]*                 plain decimal, fits in int
//          | '*' | 'auto' | '-1'         at most one dim: inferred from the world size
// Spaces and tabs around names, '=', sizes and ',' are ignored; any other byte that is
// not part of a name or size is an error.
#pragma once
#include <array>
#include <climits>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "diagnostics.hpp"
#include "mesh.hpp"
#include "sizes.hpp"

namespace devmesh {

namespace detail {

template <class M>
struct parsed_mesh_traits {
  static_assert(always_false<M>, "devmesh: parse_mesh needs a root mesh type, devmesh::mesh<dim<...>...>");
};
template <dim_spec... D>
struct parsed_mesh_traits<mesh<D...>> {
  static constexpr std::array<int, sizeof...(D)> static_sizes{D::size...};
  /// The first dim whose name cannot be written in a spec ('=', ',', a space or a tab in
  /// it), or -1.
  static constexpr int unwritable = [] {
    constexpr std::string_view names[] = {D::name.view()...};
    for (int d = 0; d < static_cast<int>(sizeof...(D)); ++d)
      if (names[d].find_first_of("=, \t") != std::string_view::npos) return d;
    return -1;
  }();
  /// Fires error::unparsable_dim_name<name, dims<...>> if a name cannot be written.
  static constexpr bool check_names() {
    if constexpr (unwritable >= 0)
      require<false, error::unparsable_dim_name<name_at<unwritable, typename D::name_type...>,
                                                 dims<typename D::name_type...>>>();
    return unwritable < 0;
  }
};

// The parser's functions are templates with an unused parameter (`template <class = void>`),
// not inline functions: a template's body, and the std::string code it uses, is compiled only
// in a TU that parses a spec, an inline function's in every TU that includes devmesh.hpp
// (under nvcc, twice; docs/benchmarks.md section 3).

/// The input as it may appear in a message: printable ASCII kept, other bytes as \xNN,
/// cut after 64 bytes (hostile input must not flood or corrupt a log).
template <class = void>
std::string quote_input(std::string_view s) {
  constexpr std::size_t limit = 64;
  constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size() && i < limit; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  out += '"';
  if (s.size() > limit) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

inline std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

template <class = void>
std::string list_names(std::span<const std::string_view> names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + std::string(names[i]);
  return out;
}

/// Marks a size to be inferred from the world size.
inline constexpr int inferred_size = 0;

/// What a mesh spec error needs to say where it happened.
struct spec_context {
  std::string_view spec;
  std::span<const std::string_view> names;

  template <class = void>
  [[noreturn]] void fail(const std::string& what) const {
    throw_mesh_error(what + " (in mesh spec " + quote_input(spec) + "; expected name=size,... for dims " +
                     list_names(names) + ")");
  }
  template <class = void>
  std::string dim_q(int d) const {
    return "'" + std::string(names[static_cast<std::size_t>(d)]) + "'";
  }
};

/// The size of dim d written as `value`: a positive decimal int, or inferred_size for '*',
/// 'auto' or '-1'.
template <class = void>
int parse_size_value(const spec_context& c, std::string_view value, int d) {
  if (value == "*" || value == "auto" || value == "-1") return inferred_size;
  const bool negative = value.front() == '-';
  const std::string_view digits = negative ? value.substr(1) : value;
  bool all_digits = !digits.empty();
  for (char ch : digits) all_digits = all_digits && ch >= '0' && ch <= '9';
  const std::string what = "devmesh: size " + quote_input(value) + " of dim " + c.dim_q(d);
  if (!all_digits) c.fail(what + " is not a decimal number (digits only; '*', 'auto' or '-1' to infer it)");
  if (negative) c.fail(what + " is negative");
  if (digits.size() > 1 && digits.front() == '0') c.fail(what + " has a leading zero");
  long long v = 0;
  for (char ch : digits) {
    v = v * 10 + (ch - '0');
    if (v > INT_MAX) c.fail(what + " does not fit in an int (max " + std::to_string(INT_MAX) + ")");
  }
  if (v == 0) c.fail("devmesh: size 0 of dim " + c.dim_q(d) + ": a dim size must be positive");
  return static_cast<int>(v);
}

/// The spec's name=size entries into `out` (dim order); every dim must be given once.
template <class = void>
void parse_entries(const spec_context& c, std::span<int> out) {
  const int n = static_cast<int>(c.names.size());
  for (int d = 0; d < n; ++d) out[static_cast<std::size_t>(d)] = -1;  // -1: not given
  if (trim_blanks(c.spec).empty()) c.fail("devmesh: empty mesh spec");
  int entry_no = 0;
  for (std::string_view rest = c.spec;;) {
    const auto comma = rest.find(',');
    const std::string_view entry = trim_blanks(rest.substr(0, comma));
    ++entry_no;
    if (entry.empty()) c.fail("devmesh: mesh spec entry " + std::to_string(entry_no) + " is empty (a stray ',')");
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) c.fail("devmesh: mesh spec entry " + quote_input(entry) + " is not name=size");
    const std::string_view name = trim_blanks(entry.substr(0, eq));
    const std::string_view value = trim_blanks(entry.substr(eq + 1));
    if (name.empty()) c.fail("devmesh: mesh spec entry " + quote_input(entry) + " has no dim name before '='");
    if (name.find_first_of(" \t") != std::string_view::npos)
      c.fail("devmesh: dim name " + quote_input(name) + " in mesh spec has a space or tab in it (no dim name has one)");
    int d = 0;
    while (d < n && c.names[static_cast<std::size_t>(d)] != name) ++d;
    if (d == n) c.fail("devmesh: unknown dim " + quote_input(name) + " in mesh spec; the dims are " + list_names(c.names));
    int& size = out[static_cast<std::size_t>(d)];
    if (size != -1) c.fail("devmesh: dim " + c.dim_q(d) + " is given twice in mesh spec");
    if (value.empty()) c.fail("devmesh: dim " + c.dim_q(d) + " has no size after '='");
    size = parse_size_value(c, value, d);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  std::string missing;
  for (int d = 0; d < n; ++d)
    if (out[static_cast<std::size_t>(d)] == -1) missing += (missing.empty() ? "" : ", ") + c.dim_q(d);
  if (!missing.empty()) c.fail("devmesh: mesh spec lacks dim(s) " + missing + ": every dim needs a size");
}

/// The parsed sizes against the mesh's static sizes and the world (world < 0: none given),
/// by resolve_sizes; infers the one inferred size. The messages name the spec's entries.
template <class = void>
void check_parsed_sizes(const spec_context& c, std::span<const int> static_sizes, int world, std::span<int> out) {
  for (int& s : out)
    if (s == inferred_size) s = dynamic_size;  // resolve_sizes' mark of an unknown size
  const auto r = resolve_sizes({.given = out.data(),
                                .n = static_cast<int>(out.size()),
                                .fixed = static_sizes,
                                .total = world < 0 ? no_total : world});
  const auto size_of = [&](int d) { return std::to_string(out[static_cast<std::size_t>(d)]); };
  const auto static_of = [&](int d) { return std::to_string(static_sizes[static_cast<std::size_t>(d)]); };
  if (r.fault == size_fault::too_many_unknown)
    c.fail("devmesh: dims " + c.dim_q(r.inferred) + " and " + c.dim_q(r.dim) +
           " both ask for an inferred size; at most one dim can be inferred");
  if (r.fault == size_fault::static_mismatch)
    c.fail(DEVMESH_MSG_STATIC_SIZE_MISMATCH ": dim " + c.dim_q(r.dim) + " is " + static_of(r.dim) +
           ", the mesh spec gives " + size_of(r.dim));
  if (r.fault == size_fault::overflow)
    c.fail("devmesh: the mesh has more ranks than an int can count: the sizes multiply to more than " +
           std::to_string(INT_MAX));
  if (world < 0 && r.inferred >= 0)
    c.fail("devmesh: dim " + c.dim_q(r.inferred) + " asks for an inferred size, which needs the world size");
  if (world < 0) return;
  if (world == 0) c.fail(DEVMESH_MSG_WORLD_MISMATCH ": the world size is 0");
  if (r.fault == size_fault::total_mismatch)
    c.fail(DEVMESH_MSG_WORLD_MISMATCH ": the mesh spec gives " + std::to_string(r.known) + " ranks, the world size is " +
           std::to_string(world));
  if (r.fault == size_fault::not_multiple)
    c.fail(DEVMESH_MSG_WORLD_MISMATCH ": world size " + std::to_string(world) +
           " is not a multiple of the other dims' product " + std::to_string(r.known) + ", so dim " +
           c.dim_q(r.inferred) + " cannot be inferred");
  if (r.fault == size_fault::inferred_mismatch)
    c.fail(DEVMESH_MSG_STATIC_SIZE_MISMATCH ": dim " + c.dim_q(r.inferred) + " is " + static_of(r.inferred) +
           ", inferred from the world size " + std::to_string(world) + ": " + std::to_string(r.inferred_size));
  if (r.inferred >= 0) out[static_cast<std::size_t>(r.inferred)] = r.inferred_size;
}

/// Parses `spec` into one size per dim (dim order) in `out`. `names` are the dims,
/// `static_sizes` their static sizes (or dynamic_size); world < 0: no world size given.
/// Not over a mesh type: the fuzzer drives it with arbitrary names, too.
template <class = void>
void parse_sizes(std::string_view spec, std::span<const std::string_view> names, std::span<const int> static_sizes,
                 int world, std::span<int> out) {
  const spec_context c{spec, names};
  parse_entries(c, out);
  check_parsed_sizes(c, static_sizes, world, out);
}

template <class M>
M parse_checked_mesh(std::string_view spec, int world) {
  constexpr int n = M::ndim;
  std::array<std::string_view, n> names{};
  for (int d = 0; d < n; ++d) names[static_cast<std::size_t>(d)] = M::names_type::views[d];
  std::array<int, n> sizes{};
  parse_sizes(spec, names, parsed_mesh_traits<M>::static_sizes, world, sizes);
  if constexpr (M::is_static)
    return M{};
  else
    return [&]<std::size_t... d>(std::index_sequence<d...>) { return M(sizes[d]...); }(std::make_index_sequence<n>{});
}

template <class M>
M parse_mesh_impl(std::string_view spec, int world) {
  if constexpr (!parsed_mesh_traits<M>::check_names())
    throw_mesh_error(DEVMESH_MSG_UNPARSABLE_NAME);  // after the diagnostic: no cascade
  else
    return parse_checked_mesh<M>(spec, world);
}

}  // namespace detail

/// The mesh of type M whose sizes `spec` gives ("replicate=2,shard=4"): every dim once,
/// any order, static dims with their static size. Throws mesh_error on any bad input.
template <class M>
M parse_mesh(std::string_view spec) {
  return detail::parse_mesh_impl<M>(spec, -1);
}

/// As parse_mesh(spec), and the mesh must span world_size ranks; one dim may be given as
/// '*', 'auto' or '-1' and is then inferred ("replicate=*,shard=4" on 8 ranks: 2).
template <class M>
M parse_mesh(std::string_view spec, int world_size) {
  if (world_size < 0)
    detail::throw_mesh_error(DEVMESH_MSG_WORLD_MISMATCH ": the world size is negative: " +
                             std::to_string(world_size));
  return detail::parse_mesh_impl<M>(spec, world_size);
}

/// The mesh that environment variable `var` (e.g. DEVMESH_SHAPE) gives for world_size
/// ranks. Throws mesh_error if it is unset, or set to a bad spec (an empty one included).
template <class M>
M mesh_from_env(const char* var, int world_size) {
  const char* value = std::getenv(var);
  if (value == nullptr)
    detail::throw_mesh_error("devmesh: environment variable " + std::string(var) +
                             " is not set (expected a mesh spec such as name=size,...)");
  try {
    return parse_mesh<M>(value, world_size);
  } catch (const mesh_error& e) {
    throw mesh_error(std::string(e.what()) + " [from environment variable " + var + "]");
  }
}

/// As mesh_from_env(var, world_size), with `fallback` parsed when var is unset.
template <class M>
M mesh_from_env(const char* var, int world_size, std::string_view fallback) {
  if (std::getenv(var) == nullptr) return parse_mesh<M>(fallback, world_size);
  return mesh_from_env<M>(var, world_size);
}

/// The value of command-line option `flag` ("--mesh X" or "--mesh=X"), or nullopt if
/// absent. Stops at "--". Throws mesh_error if the flag lacks a value or appears twice.
template <class = void>
std::optional<std::string_view> find_mesh_arg(int argc, const char* const* argv, std::string_view flag = "--mesh") {
  std::optional<std::string_view> found;
  for (int i = 1; i < argc && argv[i] != nullptr; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    std::optional<std::string_view> value;
    if (arg == flag) {
      if (i + 1 >= argc || argv[i + 1] == nullptr || std::string_view(argv[i + 1]).starts_with("-"))
        detail::throw_mesh_error("devmesh: " + std::string(flag) + " needs a value, e.g. " + std::string(flag) +
                                 " name=size,...");
      value = argv[++i];
    } else if (arg.size() > flag.size() && arg.starts_with(flag) && arg[flag.size()] == '=') {
      value = arg.substr(flag.size() + 1);
    }
    if (value) {
      if (found) detail::throw_mesh_error("devmesh: " + std::string(flag) + " is given twice on the command line");
      found = value;
    }
  }
  return found;
}

/// The mesh the command line gives with `flag` ("--mesh replicate=2,shard=4" or
/// "--mesh=..."), checked against world_size; nullopt if the flag is absent.
template <class M>
std::optional<M> mesh_from_args(int argc, const char* const* argv, int world_size,
                                std::string_view flag = "--mesh") {
  const auto spec = find_mesh_arg(argc, argv, flag);
  if (!spec) return std::nullopt;
  try {
    return parse_mesh<M>(*spec, world_size);
  } catch (const mesh_error& e) {
    throw mesh_error(std::string(e.what()) + " [from command-line option " + std::string(flag) + "]");
  }
}

/// The spec that parse_mesh reads back into m: "replicate=2,shard=4" (dims in order).
template <auto L, class Names>
std::string to_spec(const basic_mesh<L, Names>& m) {
  std::string out;
  for (int d = 0; d < basic_mesh<L, Names>::ndim; ++d)
    out += (d ? "," : "") + std::string(Names::views[d]) + "=" + std::to_string(m.dim_size(d));
  return out;
}

}  // namespace devmesh
