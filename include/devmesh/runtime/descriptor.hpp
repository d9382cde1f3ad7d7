// devmesh/runtime/descriptor.hpp: what the ranks compare before creating anything (init,
// flatten, unflatten, a lazy dim's first use): the mesh as bytes (its names and layout
// values) and the options, digested (consensus.hpp's check_same). Text is made only for
// the messages of a mismatch.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "../core/print.hpp"
#include "comm_cache.hpp"
#include "layout_view.hpp"
#include "consensus.hpp"
#include "options.hpp"
#include "rank_placement.hpp"

namespace devmesh::detail {

/// Appends n ints to `out` as bytes (the payload is compared between ranks of one
/// program's builds, so the native byte order is the same everywhere).
inline void append_ints(std::string& out, const int* v, std::size_t n) {
  out.append(reinterpret_cast<const char*>(v), n * sizeof(int));
}

/// A mesh as bytes: its view (names, every dim's modes with the values resolved), then the
/// modes as its type writes them (static values, and slots for dynamic ones), so that two
/// meshes of equal values but different types differ too.
template <class Layout>
std::string layout_payload(const layout_view& v) {
  std::string out;
  const int head[] = {v.root_size, v.ndim, v.dims()};
  append_ints(out, head, 3);
  for (const auto& name : v.names) {
    const int n = static_cast<int>(name.size());
    append_ints(out, &n, 1);
    out += name;
  }
  append_ints(out, v.first.data(), v.first.size());
  append_ints(out, v.shape.data(), v.shape.size());
  append_ints(out, v.stride.data(), v.stride.size());
  constexpr auto L = Layout::layout;
  append_ints(out, L.shape, L.nmodes);
  append_ints(out, L.stride, L.nmodes);
  return out;
}

/// What the ranks must agree on before creating communicators for m: its payload and
/// `details` (the options, the step); its text only for messages.
template <class Layout>
descriptor layout_descriptor(const Layout& m, std::string details) {
  layout_view v = view_of(m);
  std::string payload = layout_payload<Layout>(v);
  return {std::move(v), {}, std::move(details), std::move(payload)};
}

/// What every rank must agree on besides the layout: the backend, the mode, the contract
/// settings and the backend options that can describe themselves.
template <communicator Comm>
std::string options_descriptor(const device_mesh_options<Comm>& o, bool check_collectives, std::string_view how) {
  std::string s = "[" + std::string(Comm::backend_name()) + ", " + std::string(how) + (o.lazy ? ", lazy" : "") +
                  (check_collectives ? ", check_collectives" : "") + (o.share_equal_groups ? ", share_equal_groups" : "");
  const std::string def = describe_options(o.defaults);
  if (!def.empty()) s += ", options " + def;
  for (const auto& [name, opts] : o.per_dim) {
    const std::string d = describe_options(opts);
    s += ", " + name + (d.empty() ? std::string() : "{" + d + "}");
  }
  if (!is_identity_map(o.rank_map)) s += ", rank map " + rank_map_string(o.rank_map);
  if (o.topology.value()) s += ", topology";
  if (!o.intra_node.value().empty()) {
    s += ", intra_node";
    for (const auto& name : o.intra_node.value()) s += " '" + name + "'";
  }
  if (o.node_major.value()) s += ", node_major";
  return s + "]";
}

}  // namespace devmesh::detail
