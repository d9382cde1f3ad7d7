// devmesh/sharding/text.hpp: specs as PyTorch spells them (host only).
//
//   dm::parse_sharding("S(0),R", mesh)            one placement per mesh dim, in order
//   dm::parse_sharding("dp=S(0),tp=P(sum)", mesh) by name (aliases too); dims not named: R
//   dm::to_string(spec)                           "S(0),R" (the named form if an alias is placed)
//
// Placements: R, S(d), P(sum|avg|min|max), and _S(d,f), PyTorch's _StridedShard(dim=d,
// split_factor=f), kept as written (placement::strided): PyTorch prints it for an explicit
// shard order (FSDP over TP: "_S(0,4),S(0)"), and to_string prints an order that way. Spaces
// around tokens are allowed. Hostile input (any length,
// any bytes) gets a mesh_error that quotes the spec and names the entry; nothing else.
#pragma once
#include <algorithm>
#include <climits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../core/diagnostics.hpp"
#include "dynamic_spec.hpp"

namespace devmesh {

namespace detail {

/// One parsed entry: the dim it names ("" in the positional form) and its placement.
struct spec_entry {
  std::string_view name;
  devmesh::placement p;
};

/// The spec text, for messages, cut to a readable length and with unprintable bytes escaped.
template <class = void>
std::string quoted_spec(std::string_view s) {
  std::string q = "'";
  for (std::size_t i = 0; i < s.size() && i < 80; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      q += static_cast<char>(c);
    } else {
      const char hex[] = "0123456789abcdef";
      ((q += "\\x") += hex[c >> 4]) += hex[c & 15];
    }
  }
  return q + (s.size() > 80 ? "...'" : "'");
}

[[noreturn]] inline void throw_spec_error(std::string_view spec, const std::string& what) {
  throw mesh_error("devmesh: sharding spec " + quoted_spec(spec) + ": " + what);
}

inline std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// A decimal integer in [0, limit], or -1.
inline long long small_number(std::string_view s, long long limit) {
  s = trimmed(s);
  if (s.empty() || s.size() > 10) return -1;
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v <= limit ? v : -1;
}

/// "X(args)" -> args, if s is exactly that.
inline bool call_of(std::string_view s, std::string_view head, std::string_view& args) {
  if (s.size() < head.size() + 2 || s.substr(0, head.size()) != head || s[head.size()] != '(' || s.back() != ')')
    return false;
  args = s.substr(head.size() + 1, s.size() - head.size() - 2);
  return true;
}

/// The largest tensor dim a spec may name: far above any real tensor's rank, low enough that
/// nothing downstream overflows.
inline constexpr long long max_tensor_dim_in_text = 1 << 20;

/// One placement: R | S(d) | P(op) | _S(d,f); false if it is none of them.
template <class = void>
bool parse_placement(std::string_view s, spec_entry& e) {
  s = trimmed(s);
  std::string_view a;
  if (s == "R") return e.p = devmesh::placement::replicated(), true;
  if (call_of(s, "S", a)) {
    const long long d = small_number(a, max_tensor_dim_in_text);
    return d >= 0 && (e.p = devmesh::placement::sharded(static_cast<int>(d)), true);
  }
  if (call_of(s, "P", a)) {
    for (reduction k : {reduction::sum, reduction::avg, reduction::min, reduction::max})
      if (trimmed(a) == reduction_name(k)) return e.p = devmesh::placement::partial_of(k), true;
    return false;
  }
  if (call_of(s, "_S", a)) {
    const auto comma = a.find(',');
    if (comma == std::string_view::npos) return false;
    const long long d = small_number(a.substr(0, comma), max_tensor_dim_in_text);
    const long long f = small_number(a.substr(comma + 1), INT_MAX);
    if (d < 0 || f < 1) return false;
    e.p = devmesh::placement::strided(static_cast<int>(d), f);
    return true;
  }
  return false;
}

/// The spec's entries, split at the commas outside parentheses; `limit` entries at most.
template <class = void>
std::vector<spec_entry> parse_entries(std::string_view spec, int limit) {
  if (spec.size() > 4096) throw_spec_error(spec, "longer than 4096 characters");
  std::vector<spec_entry> out;
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= spec.size(); ++i) {
    if (i < spec.size() && spec[i] == '(') ++depth;
    if (i < spec.size() && spec[i] == ')' && --depth < 0) throw_spec_error(spec, "a ')' without its '('");
    if (i < spec.size() && (spec[i] != ',' || depth > 0)) continue;
    const std::string_view text = spec.substr(start, i - start);
    start = i + 1;
    if (static_cast<int>(out.size()) == limit)
      throw_spec_error(spec, "more than " + std::to_string(limit) + " entries (one per dim of the mesh at most)");
    spec_entry e;
    std::string_view value = text;
    if (const auto eq = text.find('='); eq != std::string_view::npos) {
      e.name = trimmed(text.substr(0, eq));
      value = text.substr(eq + 1);
    }
    if (!parse_placement(value, e))
      throw_spec_error(spec, "entry " + std::to_string(out.size() + 1) + " " + quoted_spec(trimmed(text)) +
                                 ": expected R, S(d), P(sum|avg|min|max) or _S(d,f), optionally after 'dim='");
    out.push_back(e);
  }
  if (depth != 0) throw_spec_error(spec, "a '(' without its ')'");
  return out;
}

}  // namespace detail

namespace detail {

/// One placement as PyTorch prints it; f > 1: _S(d,f).
template <class = void>
std::string placement_text(devmesh::placement p, long long f) {
  if (p.is_replicate()) return "R";
  if (p.is_partial()) return std::string("P(") + reduction_name(p.op) + ")";
  if (f > 1) return "_S(" + std::to_string(p.tensor_dim) + "," + std::to_string(f) + ")";
  return "S(" + std::to_string(p.tensor_dim) + ")";
}

/// A spec's text (to_string's) from its table on a mesh given as values: dim d's name names[d]
/// and size sizes[d] (the ndim mesh dims first, then the aliases), its application order o.
template <class = void>
std::string spec_text(const table_view& t, const std::string_view* names, int ndim, const int* sizes,
                      const order_view& o) {
  bool alias_placed = false;
  for (int d = ndim; d < t.ndims; ++d) alias_placed = alias_placed || t.placed[d];
  std::string out;
  for (int d = 0; d < t.ndims; ++d) {
    if (alias_placed ? !t.placed[d] : d >= ndim) continue;
    if (!out.empty()) out += ',';
    if (alias_placed) (out += names[d]) += '=';
    out += placement_text(t.at[d], split_factor_of(t, o, sizes, d));
  }
  return out;
}

}  // namespace detail

/// The spec PyTorch spells `spec` (see the file comment) on `mesh`. Throws mesh_error on text
/// that is not a spec, on unknown or repeated dims, and on a positional spec with the wrong
/// number of entries. Tensor dims are checked
/// against a tensor's rank by the spec's queries (check()), as for every spec.
template <class Mesh>
dynamic_sharding<Mesh> parse_sharding(std::string_view spec, const Mesh& mesh) {
  using Names = typename Mesh::names_type;
  const auto entries = detail::parse_entries(spec, Mesh::ndim_with_aliases);
  const bool named = !entries.empty() && !entries.front().name.empty();
  int index[Mesh::ndim_with_aliases > 0 ? Mesh::ndim_with_aliases : 1]{};
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].name.empty() == named)
      detail::throw_spec_error(spec, "mixes named entries (dim=...) and positional ones: use one form");
    index[i] = static_cast<int>(i);
    if (named) {
      index[i] = -1;
      for (int d = 0; d < Mesh::ndim_with_aliases; ++d)
        if (Names::views[d] == entries[i].name) index[i] = d;
      if (index[i] < 0) {
        detail::message m;
        m << DEVMESH_MSG_PLACEMENT_UNKNOWN_DIM ": " << detail::quoted_spec(entries[i].name).c_str()
          << " in sharding spec " << detail::quoted_spec(spec).c_str();  // quoted: any bytes, printable
        detail::throw_mesh_error(detail::list_dims<Names>(m, Mesh::ndim));
      }
    }
  }
  if (!named && static_cast<int>(entries.size()) != Mesh::ndim)
    detail::throw_spec_error(spec, std::to_string(entries.size()) + " placements for a mesh of " +
                                       std::to_string(Mesh::ndim) + " dims: give one per dim, or name them (dim=...)");
  dynamic_sharding<Mesh> s(mesh);
  for (std::size_t i = 0; i < entries.size(); ++i) s.place(index[i], entries[i].p);
  return s;
}

/// The spec as PyTorch spells it: one placement per mesh dim, "S(0),R" (an explicit order as
/// _S(d,f)); if an alias carries a placement, the named form of every placed dim,
/// "dp_cp=S(0),tp=R". parse_sharding reads either back to an equal spec.
template <class Mesh, class Source>
std::string to_string(const basic_sharding<Mesh, Source>& s) {
  constexpr int N = Mesh::ndim_with_aliases;
  int sizes[N > 0 ? N : 1]{};
  for (int d = 0; d < N; ++d) sizes[d] = s.mesh().size(d);
  const auto table = s.table();
  constexpr auto order = basic_sharding<Mesh, Source>::application_order;
  return detail::spec_text(table, Mesh::names_type::views, Mesh::ndim, sizes, order);
}

}  // namespace devmesh
