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
#include <vector>

#include "../core/diagnostics.hpp"
#include "../runtime/backend.hpp"
#include "../runtime/element_type.hpp"
#include "../runtime/device_mesh.hpp"
#include "../sharding/plan.hpp"
#include "../sharding/spec.hpp"
#include "../sharding/text.hpp"
#include "kept.hpp"
#include "links.hpp"
#include "memory.hpp"
#include "steps.hpp"

namespace devmesh {

namespace detail {

/// What the steps (steps.hpp) need: the v-collectives, and a memory space for the backend's
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

/// The plan's steps in a few words ("reduce_scatter(tp) all_gather(dp)"): what the ranks
/// compare, with DEVMESH_CHECK_COLLECTIVES, besides the call (every rank must choose the same).
template <class Mesh, int N>
std::string plan_summary(const Mesh& m, const redistribute_plan<N>& plan) {
  std::string s;
  for (const auto& step : plan) {
    (s += s.empty() ? "" : " ") += step_name(step.kind);
    if (!step.communicates()) continue;
    s += "(";
    for (int d = 0, n = 0; d < Mesh::ndim; ++d)
      if (step.on(d)) (s += n++ ? "," : "") += m.name(d);
    s += ")";
  }
  return s.empty() ? "nothing" : s;
}

/// Throws mesh_error, alike on every rank, when a step of the plan averages integers on a
/// device backend: NCCL's average is for floating types (MPI's rounds: mpi/average.hpp).
template <class Comm, class T, class Call, int N>
void check_average_type(const Call& call, const redistribute_plan<N>& plan) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<memory_space_t<Comm>, host_memory>)
    for (const auto& s : plan)
      if ((s.kind == step_kind::all_reduce || s.kind == step_kind::reduce_scatter) && s.op == reduction::avg)
        throw mesh_error(call() + ": a Partial(avg) of an integer type on the NCCL backend (ncclAvg is for floating "
                                  "types; reduce a sum and divide, or use a floating type)");
}

/// The call as every rank must describe it alike: the specs, the mesh, the extents, the type.
template <class T, class Layout, class Comm, class S1, class S2, class E>
std::string redistribute_call(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S1>& from,
                              const basic_sharding<Layout, S2>& to, const E& ext) {
  std::string s = "devmesh: redistribute " + to_string(from) + " -> " + to_string(to) + " on " +
                  to_string(mesh.layout()) + ", extents (";
  for (int t = 0; t < E::rank_value; ++t) s += (t ? ", " : "") + std::to_string(ext.extent(t));
  return s + "), element type " + std::string(type_name<T>());
}

/// What is wrong with this rank's part of the call ("" if nothing): sizes that do not match
/// the specs, overlapping buffers, specs on another mesh. `call()` describes the call (made
/// only for a message).
template <class Call, class Layout, class Comm, class S1, class S2, class E>
std::string redistribute_error(const Call& call, const device_mesh<Layout, Comm>& mesh,
                               const basic_sharding<Layout, S1>& from, const basic_sharding<Layout, S2>& to,
                               const E& ext, const void* in, std::size_t n_in, const void* out, std::size_t n_out,
                               std::size_t element) {
  const auto at = [&] { return call() + ", rank " + std::to_string(mesh.rank()) + ": "; };
  if constexpr (!Layout::is_static) {
    // same_modes first: the mesh as written, without coalescing every dim (a spec made from
    // mesh.layout() has it; == for a mesh written otherwise)
    const auto on_mesh = [&](const auto& spec) {
      return spec.mesh().same_modes(mesh.layout()) || spec.mesh() == mesh.layout();
    };
    if (!on_mesh(from) || !on_mesh(to)) return at() + "the specs are on a mesh of other sizes than the device mesh's";
  }
  const int pos = mesh.position();
  const auto held = [&](const char* what, std::size_t n, const auto& spec) -> std::string {
    const tensor_index want = spec.local_size(ext, pos);
    if (static_cast<tensor_index>(n) == want) return {};
    return at() + what + " has " + std::to_string(n) + " elements; the block of position " + std::to_string(pos) +
           " under " + to_string(spec) + " has " + std::to_string(want);
  };
  if (std::string e = held("in", n_in, from); !e.empty()) return e;
  if (std::string e = held("out", n_out, to); !e.empty()) return e;
  const auto* a = static_cast<const unsigned char*>(in);
  const auto* b = static_cast<const unsigned char*>(out);
  if (a && b && n_in && n_out && a < b + n_out * element && b < a + n_in * element)
    return at() + "in and out overlap (redistribute does not work in place)";
  return {};
}

/// Throws mesh_error, alike on every rank, when a block some rank of the mesh holds during
/// the plan has more elements than the backend's counts can say (Comm::max_count: MPI's int
/// counts). Only tensors of more than max_count elements can (O(steps x ranks) then; nothing
/// otherwise, and nothing on a backend without a max_count: NCCL's counts are size_t).
template <class Call, class Layout, class Comm, int N, class E>
void check_counts_fit(const Call& call, const device_mesh<Layout, Comm>& mesh, const redistribute_plan<N>& plan,
                      const E& ext) {
  if constexpr (requires { Comm::max_count; }) {
    constexpr auto max_count = static_cast<tensor_index>(Comm::max_count);
    if (ext.size() <= max_count) return;
    const auto& m = mesh.layout();
    for (const auto& s : plan)
      for (const auto* t : {&s.before, &s.after}) {
        const auto spec = spec_of_table(m, *t);
        for_each_in_group(m, all_dims_of<Layout>(), mesh.position(), [&](int, int q) {
          if (const tensor_index n = spec.local_size(ext, q); n > max_count)
            throw mesh_error(call() + ": a block of " + std::to_string(n) + " elements (position " +
                             std::to_string(q) + ", " + to_string(spec) + ") does not fit the backend's counts (at most " +
                             std::to_string(max_count) + ")");
        });
      }
  }
}

}  // namespace detail

/// Moves this rank's block `in` of a tensor of global extents ext, laid out as spec `from`
/// says, to its block `out` under spec `to` (both blocks row-major, contiguous ranges of one
/// element type, in the backend's memory: host memory for MPI, device memory for NCCL, where
/// every copy and collective is enqueued on `stream` and the call returns without waiting
/// for them, as NCCL's collectives do). Collective over the mesh: every rank calls it with
/// the same specs and extents. Sizes that do not match the specs, overlapping buffers or a
/// non-member throw mesh_error before any communication (on every rank with
/// DEVMESH_CHECK_COLLECTIVES=1, which also checks that the ranks describe the call alike); so
/// do, on every rank, the pairs plan_redistribute refuses (chunking::padded specs, placements
/// on an alias), blocks too large for MPI's int counts and integer averages on NCCL.
template <class Layout, class Comm, class S1, class S2, class E, std::ranges::contiguous_range In,
          std::ranges::contiguous_range Out>
void redistribute(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S1>& from,
                  const basic_sharding<Layout, S2>& to, const E& ext, const In& in, Out&& out,
                  typename Comm::stream_type stream = {}) {
  using T = std::ranges::range_value_t<Out>;
  using space = detail::memory_space_t<Comm>;
  constexpr bool same_type = std::is_same_v<std::remove_cv_t<std::ranges::range_value_t<In>>, T>;
  constexpr bool writable = !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<Out>>>;
  constexpr bool runs = detail::runs_redistribute<Comm, T>;
  static_assert(same_type, "devmesh: redistribute: in and out must hold the same element type");
  static_assert(writable, "devmesh: redistribute: out must be writable");
  static_assert(runs, "devmesh: redistribute needs a backend with the v-collectives all_to_allv and reduce_scatterv "
                      "and a memory space for its stream type (redistribute/memory.hpp): the MPI and NCCL backends");
  if constexpr (same_type && writable && runs) {  // else the static_assert alone: no cascade of errors after it
    const auto* src = std::ranges::data(in);
    T* dst = std::ranges::data(out);
    const std::size_t n_in = std::ranges::size(in), n_out = std::ranges::size(out);
    if (!mesh.is_member())
      throw mesh_error("devmesh: redistribute on " + to_string(mesh) + ": this rank is not a member of the mesh");
    space::check_usable("redistribute");
    const auto call = [&] { return detail::redistribute_call<T>(mesh, from, to, ext); };
    // by modelled time over the mesh's links; refusals throw on every rank
    const auto& plan = detail::kept_plan(from, to, plan_model<Layout::ndim_with_aliases>{}.tensor(ext, sizeof(T)),
                                         mesh.links_key(), [&](auto& model) {
                                           const auto links = mesh_links(mesh);
                                           for (int d = 0; d < Layout::ndim; ++d)
                                             model.links[d] = links[static_cast<std::size_t>(d)].cost;
                                         });
    detail::check_counts_fit(call, mesh, plan, ext);  // so do blocks too large for the backend's counts
    detail::check_average_type<Comm, T>(call, plan);  // and integer averages on NCCL
    // with the check mode the ranks also agree on the plan (the links in the options are a rank's own)
    const auto agreed = [&] { return call() + ", plan " + detail::plan_summary(mesh.layout(), plan); };
    detail::agree_on_call(mesh, agreed,
                          detail::redistribute_error(call, mesh, from, to, ext, src, n_in, dst, n_out, sizeof(T)));
    detail::with_step_buffers<T, space>(stream, [&](auto& b) {
      detail::run_plan(mesh, plan, ext, std::span<const T>(src, n_in), std::span<T>(dst, n_out), b);
    });
  }
}

}  // namespace devmesh
