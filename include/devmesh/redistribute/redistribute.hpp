// devmesh/redistribute/redistribute.hpp: DTensor's redistribute on a device_mesh: a rank's
// block of a tensor under one spec becomes its block under another, by the plan of
// sharding/plan.hpp run step by step on the mesh's communicators (a step over several dims on
// their flattened group's, made once and cached: mesh_runtime<Comm>::dims_entry).
//
//   dm::redistribute(mesh, from, to, dm::dextents<2>(13, 6), in, out);   // every rank of mesh
//
// The plan is chosen by modelled time (sharding/plan_model.hpp) over the mesh's links
// (links.hpp: options.links, calibrate's measurements, or the topology's defaults) for the
// tensor's extents and element size. On backends with the v-collectives all_to_allv and
// reduce_scatterv: MPI (host memory) and NCCL (device memory and a stream: the steps' copies are
// enqueued on it too, memory.hpp).
// Every rank of the mesh calls it with the same specs and extents; a step over several dims
// that has no communicator yet makes one, collectively as flatten() does.
#pragma once
#include <cstddef>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "../core/diagnostics.hpp"
#include "../runtime/backend.hpp"
#include "../runtime/device_mesh.hpp"
#include "../runtime/element_type.hpp"
#include "../sharding/plan.hpp"
#include "../sharding/spec.hpp"
#include "call.hpp"
#include "executor.hpp"
#include "kept.hpp"
#include "links.hpp"
#include "memory.hpp"

namespace devmesh {

namespace detail {

/// What the steps (impl/steps.hpp) need: the v-collectives, and a memory space for the backend's
/// stream type (memory.hpp: the host's for a backend without streams, else Comm::memory_space).
template <class Comm, class T>
concept runs_redistribute = step_memory<memory_space_t<Comm>, typename Comm::stream_type> &&
                            requires(const Comm& c, const T* s, T* r, std::span<const std::size_t> n, op o) {
                              c.all_to_allv(s, n, n, r, n, n, element_type_of<T>, typename Comm::stream_type{});
                              c.reduce_scatterv(s, r, n, element_type_of<T>, o, typename Comm::stream_type{});
                            };

/// The plan from `from` to `to` by bytes (plan_redistribute(from, to)): for a static pair, read
/// in place; for a dynamic pair, kept by the calling thread for its next call with the same
/// specs on the same mesh (the last 8 kept), as PyTorch caches its plans. The reference is
/// valid until this thread keeps another plan. plan_redistribute itself always plans (what
/// bench/plan_redistribute times against PyTorch's planner); redistribute keeps plans chosen
/// by modelled time (the overload below).
template <class Mesh, class S1, class S2>
const auto& kept_plan(const basic_sharding<Mesh, S1>& from, const basic_sharding<Mesh, S2>& to) {
  if constexpr (plannable_statically<Mesh, S1, S2>()) {
    return static_plan<Mesh, S1, S2>;
  } else {
    constexpr int N = Mesh::ndim_with_aliases;
    struct kept {
      Mesh from_mesh, to_mesh;  // both: plan_of checks them (a key is all an entry was made from)
      placement_table<N> from, to;
      redistribute_plan<N> plan;
    };
    thread_local kept_last<kept> plans;
    const placement_table<N>& a = from.table();
    const placement_table<N>& b = to.table();
    if (const kept* k = plans.find([&](const kept& k) {
          return k.from == a && k.to == b && k.from_mesh.same_modes(from.mesh()) && k.to_mesh.same_modes(to.mesh());
        }))
      return k->plan;
    // refusals throw before anything is kept
    return plans.keep(kept{from.mesh(), to.mesh(), a, b, plan_of(from, to)}).plan;
  }
}

/// The plan from `from` to `to` chosen by modelled time for a tensor (`tensor`: a plan_model
/// whose tensor fields are set, its links not) over links that `links_key` identifies
/// (device_mesh::links_key: equal keys, equal links), kept by the calling thread for its next
/// call with the same specs, meshes, tensor and key (the last 8 kept): a training loop plans
/// once per shape. On a miss, fill_links(model) sets the model's links (links.hpp), then the
/// planner runs. The reference is valid until this thread keeps another plan.
template <class Mesh, class S1, class S2, class FillLinks>
const redistribute_plan<Mesh::ndim_with_aliases>& kept_plan(const basic_sharding<Mesh, S1>& from,
                                                            const basic_sharding<Mesh, S2>& to,
                                                            const plan_model<Mesh::ndim_with_aliases>& tensor,
                                                            std::pair<int, int> links_key, const FillLinks& fill_links) {
  constexpr int N = Mesh::ndim_with_aliases;
  struct kept {
    Mesh from_mesh, to_mesh;
    placement_table<N> from, to;
    plan_model<N> tensor;
    std::pair<int, int> links;
    redistribute_plan<N> plan;
  };
  thread_local kept_last<kept> plans;
  const placement_table<N>& a = from.table();
  const placement_table<N>& b = to.table();
  // the tensor by its rank, extents and element size (its bytes follow; its links are the key's)
  const auto same_tensor = [&](const plan_model<N>& t) {
    if (t.tensor_rank != tensor.tensor_rank || t.element_bytes != tensor.element_bytes) return false;
    for (int i = 0; i < plan_model<N>::max_exact_rank; ++i)
      if (t.shape[i] != tensor.shape[i]) return false;
    return t.element_bytes > 0 || t.tensor_bytes == tensor.tensor_bytes;
  };
  if (const kept* k = plans.find([&](const kept& k) {
        return k.from == a && k.to == b && k.links == links_key && same_tensor(k.tensor) &&
               k.from_mesh.same_modes(from.mesh()) && k.to_mesh.same_modes(to.mesh());
      }))
    return k->plan;
  auto model = tensor;
  fill_links(model);
  // refusals throw before anything is kept
  return plans.keep(kept{from.mesh(), to.mesh(), a, b, tensor, links_key, plan_of(from, to, &model)}).plan;
}

/// True if both specs are on the device mesh's values (specs on a mesh of dynamic sizes carry
/// their own; same_modes first: the mesh as written, without coalescing every dim, which a spec
/// made from mesh.layout() has; == for a mesh written otherwise).
template <class Layout, class Comm, class S1, class S2>
bool specs_on_mesh(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S1>& from,
                   const basic_sharding<Layout, S2>& to) {
  if constexpr (Layout::is_static) {
    return true;
  } else {
    const auto on_mesh = [&](const auto& spec) {
      return spec.mesh().same_modes(mesh.layout()) || spec.mesh() == mesh.layout();
    };
    return on_mesh(from) && on_mesh(to);
  }
}

/// Throws mesh_error if this rank is not a member of mesh (what names the call).
template <class Layout, class Comm>
void require_member(const device_mesh<Layout, Comm>& mesh, const char* what) {
  if (!mesh.is_member())
    throw mesh_error("devmesh: " + std::string(what) + " on " + to_string(mesh) + ": this rank is not a member of the mesh");
}

}  // namespace detail

namespace detail {
/// redistribute's work: its checks at compile time, its plan, then the executor's call
/// (`agree`: false for dm::no_call_check).
template <class Layout, class Comm, class S1, class S2, class E, std::ranges::range In, std::ranges::range Out>
void redistribute_call(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S1>& from,
                       const basic_sharding<Layout, S2>& to, const E& ext, const In& in, Out& out,
                       typename Comm::stream_type stream, bool agree) {
  using T = std::ranges::range_value_t<Out>;
  // bool elements move as bytes, as any other type; a std::vector<bool> holds no bools to move.
  constexpr bool bits = packed_bools<In> || packed_bools<Out>;
  constexpr bool contiguous = std::ranges::contiguous_range<In> && std::ranges::contiguous_range<Out>;
  constexpr bool same_type = std::is_same_v<std::remove_cv_t<std::ranges::range_value_t<In>>, T>;
  constexpr bool writable = !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<Out>>>;
  constexpr bool runs = runs_redistribute<Comm, T>;
  static_assert(!bits, "devmesh: redistribute: in and out must be contiguous ranges, and std::vector<bool> is not one "
                       "(it packs its bools into bits): use std::array<bool, N>, a std::unique_ptr<bool[]> or a "
                       "std::span<bool> over bools, or std::vector<std::uint8_t>");
  static_assert(bits || contiguous,
                "devmesh: redistribute: in and out must be contiguous ranges (std::vector, std::array, std::span, a C "
                "array) of one element type");
  static_assert(bits || !contiguous || same_type, "devmesh: redistribute: in and out must hold the same element type");
  static_assert(bits || !contiguous || writable, "devmesh: redistribute: out must be writable");
  static_assert(bits || !contiguous || runs,
                "devmesh: redistribute needs a backend with the v-collectives all_to_allv and reduce_scatterv "
                "and a memory space for its stream type (redistribute/memory.hpp): the MPI and NCCL backends");
  if constexpr (!bits && contiguous && same_type && writable && runs) {  // else one static_assert alone: no cascade
    require_member(mesh, "redistribute");
    from.check(ext), to.check(ext);  // a static spec's misuse is a compile error, a dynamic one's throws
    // A static pair's plan is a constant the compiler computes (by bytes, read in place: no
    // planner in the program, docs/sharding.md); a dynamic pair's is chosen by modelled time over
    // the mesh's links for this tensor and kept by the thread. Refusals throw on every rank.
    const auto& plan = [&]() -> const auto& {
      if constexpr (plannable_statically<Layout, S1, S2>()) {
        return kept_plan(from, to);
      } else {
        return kept_plan(from, to, plan_model<Layout::ndim_with_aliases>{}.tensor(ext, sizeof(T)), mesh.links_key(),
                         [&](auto& model) {
                           const auto links = mesh_links(mesh);
                           for (int d = 0; d < Layout::ndim; ++d)
                             model.links[d] = links[static_cast<std::size_t>(d)].cost;
                         });
      }
    }();
    const mesh_data_of<Layout> values(mesh.layout());
    const auto shape = ext.shape();
    const auto &a = from.table(), &b = to.table();
    redistribute_runtime<Comm>::redistribute(
        group_site_of(mesh),
        {values.data(), a, b, plan_data(plan), shape, element_type_of<T>, std::ranges::data(in),
         std::ranges::size(in), std::ranges::data(out), std::ranges::size(out), specs_on_mesh(mesh, from, to), agree},
        stream);
  }
}

}  // namespace detail

/// Moves this rank's block `in` of a tensor of global extents ext, laid out as spec `from`
/// says, to its block `out` under spec `to` (both blocks row-major, contiguous ranges of one
/// element type, in the backend's memory: host memory for MPI, device memory for NCCL, where
/// every copy and collective is enqueued on `stream` and the call returns without waiting
/// for them, as NCCL's collectives do). Collective over the mesh: every rank calls it with
/// the same specs and extents. Sizes that do not match the specs, overlapping buffers or a
/// non-member throw mesh_error before any communication, on every rank: by default
/// (options.check_sharding_calls) the ranks first agree on the call, in one small all-reduce
/// over the mesh: that none has such an error, that all describe it alike (specs, extents,
/// element type, plan) and that it is the same call's number on the mesh, else every rank
/// throws naming who differs. So do, on every rank, the pairs plan_redistribute refuses
/// (chunking::padded specs, placements on an alias), blocks too large for MPI's int counts
/// and integer averages on NCCL. The plan of two static specs is a compile-time constant (by
/// bytes); of dynamic specs, chosen by modelled time over the mesh's links for these extents
/// and sizeof(T) and kept by the thread; the agreement covers it.
template <class Layout, class Comm, class S1, class S2, class E, std::ranges::range In, std::ranges::range Out>
void redistribute(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S1>& from,
                  const basic_sharding<Layout, S2>& to, const E& ext, const In& in, Out&& out,
                  typename Comm::stream_type stream = {}) {
  detail::redistribute_call(mesh, from, to, ext, in, out, stream, true);
}

/// Passed to redistribute, distribute or full_tensor after the buffers: this call skips the
/// agreement of options.check_sharding_calls (the check mode, DEVMESH_CHECK_COLLECTIVES, still
/// agrees). Every rank must pass it alike: a rank that agrees waits for the others (bounded).
struct no_call_check_t {
  /// Explicit: `{}` is a stream, never this tag.
  explicit no_call_check_t() = default;
};
inline constexpr no_call_check_t no_call_check{};

/// redistribute without the agreement on the call (no_call_check_t).
template <class Layout, class Comm, class S1, class S2, class E, std::ranges::range In, std::ranges::range Out>
void redistribute(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S1>& from,
                  const basic_sharding<Layout, S2>& to, const E& ext, const In& in, Out&& out, no_call_check_t,
                  typename Comm::stream_type stream = {}) {
  detail::redistribute_call(mesh, from, to, ext, in, out, stream, false);
}

}  // namespace devmesh
