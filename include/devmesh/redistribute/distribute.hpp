// devmesh/redistribute/distribute.hpp: DTensor's ways in and out of a spec, on redistribute's
// steps: distribute (a full tensor on every rank, or on one root, to this rank's block),
// full_tensor (the whole tensor on every rank) and check_from_local (PyTorch's
// from_local(run_check=True): every rank's block is the spec's, agreed).
#pragma once
#include <algorithm>
#include <cstddef>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../core/diagnostics.hpp"
#include "../runtime/device_mesh.hpp"
#include "../sharding/dynamic_spec.hpp"
#include "../sharding/plan.hpp"
#include "../sharding/spec.hpp"
#include "redistribute.hpp"
#include "steps.hpp"

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

/// distribute's collective: `now` becomes this rank's block under `sent` (no Partial) of the
/// tensor `src` that the rank at index `root` of `group` (the whole mesh's) holds: a broadcast
/// where `sent` shards nothing, else an all_to_allv in which the root sends each rank its block.
template <class Layout, class Comm, class E, class T, class B>
void scatter_from_root(const device_mesh<Layout, Comm>& mesh, const dynamic_sharding<Layout>& whole,
                       const dynamic_sharding<Layout>& sent, const E& ext, const T* src, int root,
                       const std::vector<int>& group, typename B::scratch& now, B& b) {
  (void)mesh.flattened_comm(all_dims_of<Layout>());  // made now, by every rank, before the branches
  const int pos = mesh.position(), me = static_cast<int>(std::find(group.begin(), group.end(), pos) - group.begin());
  now.resize(static_cast<std::size_t>(sent.local_size(ext, pos)));
  bool sharded = false;
  for (int d = 0; d < Layout::ndim; ++d) sharded = sharded || sent.table().at[d].is_shard();
  if (!sharded) {  // every rank's block is the whole tensor
    if (me == root) b.copy(now.data(), src, now.size());
    return collective_on_dims<T>(mesh, all_dims_of<Layout>(), "broadcast", now.size(), [&](const auto& cc, auto... w) {
      cc.broadcast(now.data(), now.size(), root, b.stream, w...);
    });
  }
  const std::size_t n = group.size();
  std::vector<std::size_t> send_counts(n), recv_counts(n), packed;
  if (me == root) {
    std::size_t total = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (static_cast<int>(i) != me) total += send_counts[i] = static_cast<std::size_t>(sent.local_size(ext, group[i]));
    b.send.resize(total);
    auto own = b.runs(src, now.data());
    auto pack = b.runs(src, b.send.data());
    tensor_index at = 0;
    for (std::size_t i = 0; i < n; ++i)
      for_each_shared_run(whole, pos, sent, group[i], ext, [&](tensor_index k, tensor_index o, tensor_index len) {
        if (static_cast<int>(i) == me) return own(k, o, len);
        pack(k, at, len);
        at += len;
      });
    own.flush(), pack.flush();
  } else {
    recv_counts[static_cast<std::size_t>(root)] = now.size();
  }
  collective_on_dims<T>(mesh, all_dims_of<Layout>(), "all_to_allv", now.size(), [&](const auto& cc, auto... w) {
    cc.all_to_allv(b.send.data(), std::span<const std::size_t>(send_counts), std::span<const std::size_t>(packed),
                   now.data(), std::span<const std::size_t>(recv_counts), std::span<const std::size_t>(packed),
                   element_type_of<T>, b.stream, w...);
  });
}

}  // namespace detail

/// PyTorch's DTensor.full_tensor(): `full` (the tensor's row-major elements, on every rank)
/// from this rank's block `local` under `spec`; redistribute to every dim Replicate.
template <class Layout, class Comm, class S, class E, std::ranges::contiguous_range In,
          std::ranges::contiguous_range Out>
void full_tensor(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S>& spec, const E& ext,
                 const In& local, Out&& full, typename Comm::stream_type stream = {}) {
  redistribute(mesh, spec, dynamic_sharding<Layout>(spec.mesh()), ext, local, std::forward<Out>(full), stream);
}

/// PyTorch's distribute_tensor(..., src_data_rank=None): every rank holds the whole tensor
/// `full` and keeps its block under `spec` in `local`. No communication (a Partial spec
/// keeps the value on coordinate 0 of its dims, zeros elsewhere, so the sum is exact).
template <class Layout, class Comm, class S, class E, std::ranges::contiguous_range In,
          std::ranges::contiguous_range Out>
void distribute(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S>& spec, const E& ext,
                const In& full, Out&& local, typename Comm::stream_type stream = {}) {
  redistribute(mesh, dynamic_sharding<Layout>(spec.mesh()), spec, ext, full, std::forward<Out>(local), stream);
}

/// PyTorch's distribute_tensor(..., src_data_rank=root): only the rank at index `root` of the
/// mesh (row-major over its dims; a root mesh's rank) reads `full`, the others may pass an
/// empty range; every rank gets its block under `spec` in `local`. First one bounded agreement
/// over the mesh, whatever the check mode (only the root can check `full`'s size, and a rank's
/// error must reach every rank), then one collective: a broadcast where the spec shards
/// nothing, else an all_to_allv in which the root sends each rank exactly its block.
template <class Layout, class Comm, class S, class E, std::ranges::contiguous_range In,
          std::ranges::contiguous_range Out>
void distribute(const device_mesh<Layout, Comm>& mesh, const basic_sharding<Layout, S>& spec, const E& ext,
                const In& full, Out&& local, int root, typename Comm::stream_type stream = {}) {
  using T = std::ranges::range_value_t<Out>;
  using space = detail::memory_space_t<Comm>;
  static_assert(std::is_same_v<std::remove_cv_t<std::ranges::range_value_t<In>>, T>,
                "devmesh: distribute: full and local must hold the same element type");
  static_assert(detail::runs_redistribute<Comm, T>,
                "devmesh: distribute needs a backend with the v-collectives all_to_allv and reduce_scatterv and a "
                "memory space for its stream type (redistribute/memory.hpp): the MPI and NCCL backends");
  if (!mesh.is_member())
    throw mesh_error("devmesh: distribute on " + to_string(mesh) + ": this rank is not a member of the mesh");
  space::check_usable("distribute");
  const auto& m = mesh.layout();
  const dynamic_sharding<Layout> whole(spec.mesh());
  const auto sent = detail::without_partial(spec);
  const auto last = plan_redistribute(sent, spec);  // local steps only; refuses what redistribute refuses
  const int pos = mesh.position();
  std::vector<int> group;
  const int me = detail::group_positions(m, detail::all_dims_of<Layout>(), pos, group);
  const std::size_t n_full = std::ranges::size(full), n_local = std::ranges::size(local);
  const auto call = [&] {
    return detail::redistribute_call<T>(mesh, whole, spec, ext) + ", from the rank at index " + std::to_string(root);
  };
  std::string error;
  if (root < 0 || root >= static_cast<int>(group.size()))
    error = call() + ": the root index is not in [0, " + std::to_string(group.size()) + ")";
  else
    error = me == root ? detail::redistribute_error(call, mesh, whole, spec, ext, std::ranges::data(full), n_full,
                                                    std::ranges::data(local), n_local, sizeof(T))
                       : detail::redistribute_error(call, mesh, spec, spec, ext, nullptr, n_local, nullptr, n_local,
                                                    sizeof(T));  // full is not read here
  detail::agree_on_call(mesh, call, error, true);  // only the root can check full: always agreed (a one-off call)
  T* dst = std::ranges::data(local);
  detail::with_step_buffers<T, space>(stream, [&](auto& b) {
    detail::scatter_from_root(mesh, whole, sent, ext, std::ranges::data(full), root, group, b.recv, b);
    detail::run_plan(mesh, last, ext, std::span<const T>(b.recv.data(), b.recv.size()), std::span<T>(dst, n_local), b);
  });
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
  if (!mesh.is_member())
    throw mesh_error("devmesh: from_local on " + to_string(mesh) + ": this rank is not a member of the mesh");
  std::string call = "devmesh: from_local " + to_string(spec) + " on " + to_string(mesh.layout()) + ", extents (";
  for (int t = 0; t < E::rank_value; ++t) call += (t ? ", " : "") + std::to_string(ext.extent(t));
  call += "), element type " + std::string(detail::type_name<T>());
  const tensor_index want = spec.local_size(ext, mesh.position());
  const auto n = static_cast<tensor_index>(std::ranges::size(local));
  std::string error;
  if (n != want)
    error = call + ", rank " + std::to_string(mesh.rank()) + ": the local block has " + std::to_string(n) +
            " elements; the block of position " + std::to_string(mesh.position()) + " has " + std::to_string(want);
  detail::agree_on_call(mesh, call, error, true);
}

}  // namespace devmesh
