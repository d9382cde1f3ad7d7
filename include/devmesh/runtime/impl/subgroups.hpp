// devmesh/runtime/impl/subgroups.hpp: mesh_runtime::subgroup, groups that are not a dim
// (PyTorch's new_subgroups_by_enumeration; Megatron's embedding groups, the first and last
// stage of each pipeline group): in every group of a dim, the members at chosen local ranks,
// one communicator per group. Agreed first (the choice and the mesh, with this rank's own
// refusal), made by one split over the root's control communicator, agreed after: a rank that
// chose otherwise, or whose choice is refused, makes every rank throw; nothing waits forever.
#pragma once
#include <algorithm>
#include <mutex>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "../mesh_runtime.hpp"
#include "consensus.hpp"
#include "descriptor.hpp"
#include "dim_groups.hpp"
#include "mesh_state.hpp"

namespace devmesh::detail {

/// The local ranks `picks` of a group of n ranks, negative ones from the end, checked: in
/// range, at least one, none given twice. Two spellings of one rank (0 and -1 on a dim of one,
/// Megatron's first and last stage when pp = 1) are that rank once. Returns why not ("" when
/// they are fine) and fills `out`.
inline std::string chosen_local_ranks(std::span<const int> picks, int n, const std::string& what,
                                      const std::string& dim, std::vector<int>& out) {
  if (picks.empty()) return "devmesh: " + what + ": no local rank chosen in dim '" + dim + "'";
  for (std::size_t i = 0; i < picks.size(); ++i) {
    const int p = picks[i], q = p < 0 ? p + n : p;
    if (q < 0 || q >= n)
      return "devmesh: " + what + ": local rank " + std::to_string(p) + " is not in [" + std::to_string(-n) + ", " +
             std::to_string(n) + "): the groups of dim '" + dim + "' have " + std::to_string(n) + " ranks";
    if (std::find(picks.begin(), picks.begin() + static_cast<std::ptrdiff_t>(i), p) != picks.begin() + static_cast<std::ptrdiff_t>(i))
      return "devmesh: " + what + ": local rank " + std::to_string(p) + " of dim '" + dim + "' is given twice";
    if (std::find(out.begin(), out.end(), q) == out.end()) out.push_back(q);
  }
  return {};
}

template <communicator Comm>
Comm mesh_runtime<Comm>::subgroup(state& st, const layout_ref& layout, int d, std::span<const int> picks,
                                  const char* what) {
  mesh_state<Comm>& s = full_state(st);
  const std::lock_guard<std::mutex> one_at_a_time(s.creating);  // steps on the control comm, one thread at a time
  const layout_description m = describe_layout(layout);
  const dim_groups g = groups_of(m.view, d);
  std::vector<int> chosen;
  const std::string refused = chosen_local_ranks(picks, g.size(), what, g.name, chosen);
  std::string text = "the subgroups of dim ";  // appended: g++ 12 -O3 warns (-Wrestrict) on "..." + string&&
  (text += g.name) += " at local ranks";
  for (int q : chosen) (text += ' ') += std::to_string(q);
  const std::string step = std::string(what) + ": " + text.substr(4);
  const deadline dl = s.start_step();
  const step_outcome mine[] = {{step, refused}};
  const descriptor asked = describe(m, text + " " + s.options_of(g.name));
  agree_all(*s.control, step, std::span<const step_outcome>(mine), &asked, {}, dl);
  // This rank's place: its group's first position (the color), its index in `chosen` (the key).
  int color = no_color, key = 0;
  if (s.is_member()) {
    const split_args at = g.split(s.position);
    if (const auto it = std::find(chosen.begin(), chosen.end(), at.key); it != chosen.end())
      color = at.color, key = static_cast<int>(it - chosen.begin());
  }
  std::optional<Comm> out;
  std::string failed;
  try {
    out.emplace(s.control->split(color, key, named_options(s.options.for_dim(g.name), g.name + ".subgroup")));
  } catch (const std::exception& x) {
    if (!s.control->valid()) throw;  // a backend that aborted its parent agreed on it already
    failed = x.what();
  }
  const step_outcome made[] = {{step + ": the split", failed}};
  agree_all(*s.control, step, std::span<const step_outcome>(made), nullptr, {}, dl);
  return std::move(*out);
}

}  // namespace devmesh::detail
