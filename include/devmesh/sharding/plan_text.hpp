// devmesh/sharding/plan_text.hpp: a plan (plan.hpp) as text, one step per line, specs in
// PyTorch's spelling (text.hpp):
//   1. all_gather over (tp): S(0),S(1) -> S(0),R  (Shard to Replicate: the group's blocks gathered)
#pragma once
#include <string>

#include "plan.hpp"
#include "plan_cost.hpp"
#include "text.hpp"

namespace devmesh {

/// The steps of plan p on mesh m, numbered, one per line ("(nothing to do)" for none).
template <class Mesh, int N>
std::string to_string(const redistribute_plan<N>& p, const Mesh& m) {
  std::string out;
  for (int i = 0; i < p.count; ++i) {
    const auto& s = p[i];
    out += std::to_string(i + 1) + ". " + step_name(s.kind);
    if (s.communicates()) {
      out += " over (";
      bool first = true;
      for (int d = 0; d < Mesh::ndim; ++d)
        if (s.on(d)) (out += first ? "" : ", ") += Mesh::names_type::views[d], first = false;
      out += ")";
      if (s.kind == step_kind::all_reduce || s.kind == step_kind::reduce_scatter)
        (out += " ") += reduction_name(s.op);
    }
    out += ": " + to_string(detail::spec_of_table(m, s.before)) + " -> " + to_string(detail::spec_of_table(m, s.after));
    out += std::string("  (") + s.why + ")\n";
  }
  return out.empty() ? "(nothing to do)\n" : out;
}

}  // namespace devmesh
