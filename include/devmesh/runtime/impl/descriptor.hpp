// devmesh/runtime/impl/descriptor.hpp: what the ranks compare before creating anything (init,
// flatten, unflatten, a lazy dim's first use): the mesh as bytes (its names and layout
// values) and the options, digested (consensus.hpp's check_same). Text is made only for
// the messages of a mismatch.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "../../core/print.hpp"
#include "../mesh_runtime.hpp"
#include "../layout_view.hpp"
#include "consensus.hpp"
#include "../options.hpp"
#include "../rank_placement.hpp"

namespace devmesh::detail {

/// What the ranks must agree on before creating communicators for a mesh: its payload and
/// `details` (the options, the step); its text only for messages.
inline descriptor describe(const layout_description& m, std::string details) {
  return {m.view, {}, std::move(details), m.payload};
}

/// What every rank must agree on besides the layout: the backend, the mode, the contract
/// settings and the backend options that can describe themselves.
template <communicator Comm>
std::string options_descriptor(const device_mesh_options<Comm>& o, bool check_collectives, bool check_sharding_calls,
                               std::string_view how) {
  std::string s = "[" + std::string(Comm::backend_name()) + ", " + std::string(how) + (o.lazy ? ", lazy" : "") +
                  (check_collectives ? ", check_collectives" : "") +
                  (check_sharding_calls ? "" : ", no check_sharding_calls") +
                  (o.share_equal_groups ? ", share_equal_groups" : "");
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
