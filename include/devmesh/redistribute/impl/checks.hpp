// devmesh/redistribute/impl/checks.hpp: what a redistribute call checks before it communicates,
// and how it says what is wrong: the call as every rank must describe it alike, this rank's
// blocks against the specs, blocks the backend's counts cannot say, integer averages on a
// device. Every message is built here, from the call's values (call.hpp), by functions compiled
// once: inline, in each backend's library (or header-only); the typed layer builds none.
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../../core/diagnostics.hpp"
#include "../../core/print.hpp"
#include "../../runtime/text_ref.hpp"
#include "../../sharding/text.hpp"
#include "../call.hpp"
#include "../memory.hpp"
#include "blocks.hpp"

namespace devmesh::detail {

/// Spec t on mesh m as to_string(spec) spells it ("S(0),R").
inline std::string spec_text(const mesh_data& m, const table_view& t) {
  int sizes[max_view_dims]{};
  for (int d = 0; d < t.ndims; ++d) sizes[d] = m.size(d);
  return spec_text(t, m.layout.names, m.layout.ndim, sizes, m.order);
}

/// "(8, 8)": a tensor's extents.
inline std::string extents_text(std::span<const tensor_index> ext) {
  std::string s = "(";
  for (std::size_t t = 0; t < ext.size(); ++t) s += (t ? ", " : "") + std::to_string(ext[t]);
  return s + ")";
}

/// The call as every rank must describe it alike: the specs, the mesh, the extents, the type.
inline std::string call_text(const call_data& c) {
  return "devmesh: redistribute " + spec_text(c.mesh, c.from) + " -> " + spec_text(c.mesh, c.to) + " on " +
         layout_string(c.mesh.layout) + ", extents " + extents_text(c.extents) + ", element type " +
         std::string(c.type.name);
}

/// The plan's steps in a few words ("reduce_scatter(tp) all_gather(dp)"): what the ranks
/// compare, with DEVMESH_CHECK_COLLECTIVES, besides the call: the plan is chosen by modelled
/// time over links that options.links gives per rank, so every rank must have chosen the same.
inline std::string plan_summary(const call_data& c) {
  std::string s;
  for (int i = 0; i < c.plan.count; ++i) {
    const step_data& step = c.plan.steps[i];
    (s += s.empty() ? "" : " ") += step_name(step.kind);
    if (step.kind == step_kind::local) continue;
    s += "(";
    for (int d = 0, n = 0; d < c.mesh.layout.ndim; ++d)
      if (step.group >> d & 1u) (s += n++ ? "," : "") += c.mesh.layout.names[d];
    s += ")";
  }
  return s.empty() ? "nothing" : s;
}

/// What is wrong with this rank's part of call c (position pos, world rank `rank`; "" if
/// nothing): specs on another mesh, blocks `in` and `out` (n_in, n_out elements) whose sizes
/// are not the blocks of `from` and `to`, overlapping blocks. `call()` describes the call
/// (made only for a message).
inline std::string blocks_error(const call_data& c, int pos, int rank, text_ref call, const table_view& from,
                                const table_view& to, const void* in, std::size_t n_in, const void* out,
                                std::size_t n_out) {
  const auto at = [&] { return call() + ", rank " + std::to_string(rank) + ": "; };
  if (!c.specs_on_mesh) return at() + "the specs are on a mesh of other sizes than the device mesh's";
  const auto held = [&](const char* what, std::size_t n, const table_view& spec) -> std::string {
    const tensor_index want = local_size(c.mesh, spec, pos, c.extents);
    if (static_cast<tensor_index>(n) == want) return {};
    return at() + what + " has " + std::to_string(n) + " elements; the block of position " + std::to_string(pos) +
           " under " + spec_text(c.mesh, spec) + " has " + std::to_string(want);
  };
  if (std::string e = held("in", n_in, from); !e.empty()) return e;
  if (std::string e = held("out", n_out, to); !e.empty()) return e;
  const auto* a = static_cast<const unsigned char*>(in);
  const auto* b = static_cast<const unsigned char*>(out);
  const std::size_t element = c.type.size;
  if (a && b && n_in && n_out && a < b + n_out * element && b < a + n_in * element)
    return at() + "in and out overlap (redistribute does not work in place)";
  return {};
}

/// Every dim of mesh m (its own: not the aliases), as a step's group bits.
inline unsigned all_dims(const mesh_data& m) { return (1u << m.layout.ndim) - 1u; }

/// Throws mesh_error, alike on every rank, when a block some rank of the mesh holds during
/// the plan has more elements than the backend's counts can say (`max_count`: MPI's int counts;
/// 0: no limit). Only tensors of more than max_count elements can (O(steps x ranks) then).
inline void check_counts_fit(const call_data& c, int pos, std::size_t max_count, text_ref call) {
  tensor_index total = 1;
  for (tensor_index e : c.extents) total = checked_mul(total, e, "redistribute (the tensor's element count)");
  const auto most = static_cast<tensor_index>(max_count);
  if (max_count == 0 || total <= most) return;
  std::vector<int> group;
  group_positions(c.mesh, all_dims(c.mesh), pos, group);
  for (int i = 0; i < c.plan.count; ++i)
    for (const table_view* t : {&c.plan.steps[i].before, &c.plan.steps[i].after})
      for (int q : group)
        if (const tensor_index n = local_size(c.mesh, *t, q, c.extents); n > most)
          throw mesh_error(call() + ": a block of " + std::to_string(n) + " elements (position " + std::to_string(q) +
                           ", " + spec_text(c.mesh, *t) + ") does not fit the backend's counts (at most " +
                           std::to_string(most) + ")");
}

/// True for the element types C++ calls integral (bool too): what an average cannot divide
/// as a float.
inline bool integral_type(element_type t) { return t.is_integer() || t.code == element_code::boolean; }

/// Throws mesh_error, alike on every rank, when a step of the plan averages integers on a
/// backend whose blocks are on a device: NCCL's average is for floating types (MPI's rounds:
/// mpi/average.hpp).
inline void check_average_type(const call_data& c, bool on_device, text_ref call) {
  if (!on_device || !integral_type(c.type)) return;
  for (int i = 0; i < c.plan.count; ++i) {
    const step_data& s = c.plan.steps[i];
    if ((s.kind == step_kind::all_reduce || s.kind == step_kind::reduce_scatter) && s.op == reduction::avg)
      throw mesh_error(call() + ": a Partial(avg) of an integer type on the NCCL backend (ncclAvg is for floating "
                                "types; reduce a sum and divide, or use a floating type)");
  }
}

/// check_from_local's call, "devmesh: from_local S(0),R on mesh(...), extents (8, 8), element
/// type float", and this rank's error ("" if its block of n elements is spec's at pos).
inline std::string from_local_text(const mesh_data& m, const table_view& spec, std::span<const tensor_index> ext,
                                   std::string_view type) {
  return "devmesh: from_local " + spec_text(m, spec) + " on " + layout_string(m.layout) + ", extents " +
         extents_text(ext) + ", element type " + std::string(type);
}
inline std::string from_local_error(const std::string& call, const mesh_data& m, const table_view& spec,
                                    std::span<const tensor_index> ext, int pos, int rank, std::size_t n) {
  const tensor_index want = local_size(m, spec, pos, ext);
  if (static_cast<tensor_index>(n) == want) return {};
  return call + ", rank " + std::to_string(rank) + ": the local block has " + std::to_string(n) +
         " elements; the block of position " + std::to_string(pos) + " has " + std::to_string(want);
}

}  // namespace devmesh::detail
