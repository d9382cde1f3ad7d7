// devmesh/redistribute/impl/executor.hpp: every definition of redistribute_runtime<Comm>
// (redistribute/executor.hpp), and the instantiation a backend's library makes of it.
// Header-only, the declaration header includes this one; compiled, only the backends'
// impl/src.hpp do.
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "../../runtime/impl/mesh_runtime.hpp"
#include "../executor.hpp"
#include "../memory.hpp"
#include "blocks.hpp"
#include "buffers.hpp"
#include "checks.hpp"
#include "steps.hpp"

namespace devmesh::detail {

/// For calls made of several collectives over a mesh: with `always` (options.check_sharding_calls,
/// on by default; distribute from a root and check_from_local whatever it says) or the check mode
/// (DEVMESH_CHECK_COLLECTIVES=1), every rank of the mesh first agrees, in one bounded all-reduce
/// over the whole mesh's group, that none has a `local_error` (else every rank throws mesh_error
/// naming the failed ranks) and that all describe the call alike, with its number on the group
/// (`call()`; else every rank throws naming who differs). Neither: a local_error throws on this
/// rank only, as a typed collective's checks do.
template <communicator Comm>
void agree_on_call(const group_site<Comm>& on, const mesh_data& m, text_ref call, const std::string& local_error,
                   bool always) {
  if (!on.check && !always) {
    if (!local_error.empty()) throw mesh_error(local_error);
    return;
  }
  mesh_runtime<Comm>::agree_on_call(on.state, on.entry(all_dims(m)), call(), local_error);
}

/// The most elements the backend's counts can say, or 0 for no limit (Comm::max_count: MPI's int).
template <class Comm>
constexpr std::size_t max_count_of() {
  if constexpr (requires { Comm::max_count; }) return Comm::max_count;
  else return 0;
}

template <communicator Comm>
void redistribute_runtime<Comm>::redistribute(const site& on, const call_data& c, stream s) {
  using space = memory_space_t<Comm>;
  space::check_usable("redistribute");
  const int pos = on.state.position;
  const auto call = [&] { return call_text(c); };
  check_counts_fit(c, pos, max_count_of<Comm>(), call);  // refused alike on every rank
  check_average_type(c, !std::is_same_v<space, host_memory>, call);  // so are integer averages on NCCL
  // the ranks also agree on the plan (chosen by the links, a rank's own options)
  const auto agreed = [&] { return call_text(c) + ", plan " + plan_summary(c); };
  agree_on_call(on, c.mesh, agreed,
                blocks_error(c, pos, on.state.world_rank, call, c.from, c.to, c.in, c.n_in, c.out, c.n_out),
                c.agree && on.state.check_sharding_calls);
  const step_run<Comm> r{on, c.mesh, pos, c.extents, c.type};
  with_step_buffers<space>(s, c.type.size, [&](auto& b) {
    run_plan(r, c.plan, {static_cast<const std::byte*>(c.in), c.n_in}, {static_cast<std::byte*>(c.out), c.n_out}, b);
  });
}

template <communicator Comm>
void redistribute_runtime<Comm>::distribute_from_root(const site& on, const call_data& c, const table_view& sent,
                                                      int root, stream s) {
  using space = memory_space_t<Comm>;
  space::check_usable("distribute");
  const int pos = on.state.position;
  group_counts g;
  g.me = group_positions(c.mesh, all_dims(c.mesh), pos, g.group);
  const auto call = [&] { return call_text(c) + ", from the rank at index " + std::to_string(root); };
  std::string error;
  if (root < 0 || root >= static_cast<int>(g.group.size()))
    error = call() + ": the root index is not in [0, " + std::to_string(g.group.size()) + ")";
  else if (g.me == root)
    error = blocks_error(c, pos, on.state.world_rank, call, c.from, c.to, c.in, c.n_in, c.out, c.n_out);
  else  // full is not read here
    error = blocks_error(c, pos, on.state.world_rank, call, c.to, c.to, nullptr, c.n_out, nullptr, c.n_out);
  agree_on_call(on, c.mesh, call, error, true);  // only the root can check full: always agreed (a one-off call)
  const step_run<Comm> r{on, c.mesh, pos, c.extents, c.type};
  with_step_buffers<space>(s, c.type.size, [&](auto& b) {
    {
      step_blocks blocks(c.mesh, c.extents, c.from, sent, 2 * static_cast<int>(g.group.size()));
      scatter_from_root(r, blocks, sent, static_cast<const std::byte*>(c.in), root, g, b);
    }
    const std::size_t n = b.recv.size() / c.type.size;
    run_plan(r, c.plan, {b.recv.data(), n}, {static_cast<std::byte*>(c.out), c.n_out}, b);
  });
}

template <communicator Comm>
void redistribute_runtime<Comm>::check_from_local(const site& on, const mesh_data& m, const table_view& spec,
                                                  std::span<const tensor_index> extents, std::string_view type,
                                                  std::size_t n) {
  const std::string call = from_local_text(m, spec, extents, type);
  const std::string error = from_local_error(call, m, spec, extents, on.state.position, on.state.world_rank, n);
  agree_on_call(on, m, [&] { return call; }, error, true);
}

}  // namespace devmesh::detail

// The compiled executor of backend Comm: redistribute_runtime<Comm>. In one translation unit per
// backend (its impl/src.hpp), next to DEVMESH_INSTANTIATE_RUNTIME.
#define DEVMESH_INSTANTIATE_REDISTRIBUTE(Comm) template struct devmesh::detail::redistribute_runtime<Comm>
