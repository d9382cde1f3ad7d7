// devmesh/redistribute/distribute.hpp: DTensor's ways in and out of a spec, on redistribute's
// executor (executor.hpp): distribute (a full tensor on every rank, or on one root, to this rank's block),
// full_tensor (the whole tensor on every rank) and check_from_local (PyTorch's
// from_local(run_check=True): every rank's block is the spec's, agreed).
#pragma once
#include <cstddef>
#include <ranges>
#include <type_traits>
#include <utility>

#include "../core/diagnostics.hpp"
#include "../runtime/device_mesh.hpp"
#include "../runtime/element_type.hpp"
#include "../sharding/dynamic_spec.hpp"
#include "../sharding/plan.hpp"
#include "../sharding/plan_cost.hpp"
#include "../sharding/spec.hpp"
#include "call.hpp"
#include "executor.hpp"
#include "redistribute.hpp"

namespace devmesh {

namespace detail {

/// spec with its Partial dims replicated: what a root sends (the last local step makes the
/// Partial blocks, zeros where a sum must not count twice).
template <class Layout, class S>
dynamic_sharding<Layout> without_partial(const basic_sharding<Layout, S>& spec) {
  auto t = spec.table();
  for (int d = 0; d < Layout::ndim; ++d)
    if (t.at[d].is_partial()) t.at[d] = placement::replicated();
  return spec_of_table(spec.mesh(), normalized(t, basic_sharding<Layout, S>::application_order));
}

}  // namespace detail

namespace detail {
/// full_tensor (Full) and distribute from every rank: redistribute from `from` to `to` after the
/// std::vector<bool> check, which names the public call (`agree`: no dm::no_call_check).
template <bool Full, class Layout, class Comm, class S1, class S2, class E, class In, class Out>
void redistribute_as(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S1>& from,
                     const basic_sharding<Layout, S2>& to, const E& ext, const In& in, Out& out,
                     typename Comm::stream_type stream, bool agree) {
  // Any range gets here, so that a misuse is devmesh's message (redistribute's, or this one).
  constexpr bool bits = packed_bools<In> || packed_bools<Out>;
  static_assert(!Full || !bits, "devmesh: full_tensor: local and full must be contiguous ranges, and std::vector<bool> "
                                "is not one (it packs its bools into bits): use std::array<bool, N>, a "
                                "std::unique_ptr<bool[]> or a std::span<bool> over bools, or "
                                "std::vector<std::uint8_t>");
  static_assert(Full || !bits, "devmesh: distribute: full and local must be contiguous ranges, and std::vector<bool> "
                               "is not one (it packs its bools into bits): use std::array<bool, N>, a "
                               "std::unique_ptr<bool[]> or a std::span<bool> over bools, or "
                               "std::vector<std::uint8_t>");
  if constexpr (!bits) redistribute_call(mesh, from, to, ext, in, out, stream, agree);
}
}  // namespace detail

/// PyTorch's DTensor.full_tensor(): `full` (the tensor's row-major elements, on every rank)
/// from this rank's block `local` under `spec`; redistribute to every dim Replicate.
template <class Layout, class Comm, class S, class E, std::ranges::range In, std::ranges::range Out>
void full_tensor(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S>& spec, const E& ext,
                 const In& local, Out&& full, typename Comm::stream_type stream = {}) {
  detail::redistribute_as<true>(mesh, spec, sharding<Layout>(spec.mesh()), ext, local, full, stream, true);
}
/// full_tensor without the agreement on the call (no_call_check_t).
template <class Layout, class Comm, class S, class E, std::ranges::range In, std::ranges::range Out>
void full_tensor(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S>& spec, const E& ext,
                 const In& local, Out&& full, no_call_check_t, typename Comm::stream_type stream = {}) {
  detail::redistribute_as<true>(mesh, spec, sharding<Layout>(spec.mesh()), ext, local, full, stream, false);
}

/// PyTorch's distribute_tensor(..., src_data_rank=None): every rank holds the whole tensor
/// `full` and keeps its block under `spec` in `local`. No data moves (a Partial spec keeps the
/// value on coordinate 0 of its dims, zeros elsewhere, so the sum is exact); by default the
/// ranks agree on the call first, as redistribute's do (options.check_sharding_calls).
template <class Layout, class Comm, class S, class E, std::ranges::range In, std::ranges::range Out>
void distribute(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S>& spec, const E& ext,
                const In& full, Out&& local, typename Comm::stream_type stream = {}) {
  detail::redistribute_as<false>(mesh, sharding<Layout>(spec.mesh()), spec, ext, full, local, stream, true);
}
/// distribute from every rank without the agreement on the call (no_call_check_t).
template <class Layout, class Comm, class S, class E, std::ranges::range In, std::ranges::range Out>
void distribute(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S>& spec, const E& ext,
                const In& full, Out&& local, no_call_check_t, typename Comm::stream_type stream = {}) {
  detail::redistribute_as<false>(mesh, sharding<Layout>(spec.mesh()), spec, ext, full, local, stream, false);
}

namespace detail {
/// distribute(..., root)'s work, on contiguous buffers (the public function's checks first).
template <class Layout, class Comm, class S, class E, class In, class Out>
void distribute_from(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S>& spec, const E& ext,
                     const In& full, Out& local, int root, typename Comm::stream_type stream) {
  using T = std::ranges::range_value_t<Out>;
  static_assert(std::is_same_v<std::remove_cv_t<std::ranges::range_value_t<In>>, T>,
                "devmesh: distribute: full and local must hold the same element type");
  static_assert(runs_redistribute<Comm, T>,
                "devmesh: distribute needs a backend with the v-collectives all_to_allv and reduce_scatterv and a "
                "memory space for its stream type (redistribute/memory.hpp): the MPI and NCCL backends");
  require_member(mesh, "distribute");
  const auto sent = without_partial(spec);
  const auto last = plan_redistribute(sent, spec);  // local steps only; refuses what redistribute refuses
  spec.check(ext);
  const placement_table<Layout::ndim_with_aliases> whole{};  // every dim replicated: the root's tensor
  const mesh_data_of<Layout> values(mesh.layout());
  const auto shape = ext.shape();
  const auto& to = spec.table();
  redistribute_runtime<Comm>::distribute_from_root(
      group_site_of(mesh),
      {values.data(), whole, to, plan_data(last), shape, element_type_of<T>, std::ranges::data(full),
       std::ranges::size(full), std::ranges::data(local), std::ranges::size(local),
       specs_on_mesh(mesh, spec, spec)},
      sent.table(), root, stream);
}
}  // namespace detail

/// PyTorch's distribute_tensor(..., src_data_rank=root): only the rank at index `root` of the
/// mesh (row-major over its dims; a root mesh's rank) reads `full`, the others may pass an
/// empty range; every rank gets its block under `spec` in `local`. First one bounded agreement
/// over the mesh, whatever the check mode (only the root can check `full`'s size, and a rank's
/// error must reach every rank), then one collective: a broadcast where the spec shards
/// nothing, else an all_to_allv in which the root sends each rank exactly its block.
template <class Layout, class Comm, class S, class E, std::ranges::range In, std::ranges::range Out>
void distribute(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S>& spec, const E& ext,
                const In& full, Out&& local, int root, typename Comm::stream_type stream = {}) {
  constexpr bool bits = detail::packed_bools<In> || detail::packed_bools<Out>;
  static_assert(!bits, "devmesh: distribute: full and local must be contiguous ranges, and std::vector<bool> is not "
                       "one (it packs its bools into bits): use std::array<bool, N>, a std::unique_ptr<bool[]> or a "
                       "std::span<bool> over bools, or std::vector<std::uint8_t>");
  static_assert(bits || (std::ranges::contiguous_range<In> && std::ranges::contiguous_range<Out>),
                "devmesh: distribute: full and local must be contiguous ranges (std::vector, std::array, std::span, a "
                "C array) of one element type");
  if constexpr (!bits && std::ranges::contiguous_range<In> && std::ranges::contiguous_range<Out>)
    detail::distribute_from(mesh, spec, ext, full, local, root, stream);
}

/// The checks of PyTorch's DTensor.from_local(..., run_check=True): this rank's block `local`
/// has the size spec gives it, on every rank, and every rank names the same spec, extents and
/// element type; else every rank throws mesh_error naming the ranks. One bounded agreement
/// over the mesh, whatever the check mode. (PyTorch also broadcasts Replicate blocks from
/// rank 0; devmesh leaves the values as they are.)
template <class Layout, class Comm, class S, class E, std::ranges::contiguous_range In>
void check_from_local(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S>& spec, const E& ext,
                      const In& local) {
  using T = std::remove_cv_t<std::ranges::range_value_t<In>>;
  detail::require_member(mesh, "from_local");
  spec.check(ext);
  const detail::mesh_data_of<Layout> values(mesh.layout());
  const auto shape = ext.shape();
  detail::redistribute_runtime<Comm>::check_from_local(detail::group_site_of(mesh), values.data(), spec.table(), shape,
                                                       detail::type_name_v<T>, std::ranges::size(local));
}

}  // namespace devmesh
