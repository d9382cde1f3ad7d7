// devmesh/redistribute/steps.hpp: one step of a redistribute plan (sharding/plan.hpp) run by
// one rank, from the block it holds under the step's `before` spec to the one it holds under
// `after`. Elements travel packed in global row-major order (sharding/block_overlap.hpp), so
// sender and receiver agree on them without sending indices; uneven and empty blocks use the
// backend's v-collectives (a count per rank), never padding.
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "../core/diagnostics.hpp"
#include "../runtime/backend.hpp"
#include "../sharding/block_overlap.hpp"
#include "../sharding/plan.hpp"
#include "../sharding/plan_cost.hpp"

namespace devmesh::detail {

/// A step that cannot be run as planned: a planner bug, never a user error (the simulator of
/// tests/sharding/redistribute_plan.cpp checks every plan it makes against the same rules).
[[noreturn]] inline void fail_step(const char* kind, const std::string& what) {
  throw mesh_error("devmesh: redistribute: internal error in a " + std::string(kind) + " step: " + what);
}

/// The positions of the step's group that holds `position`, in the order of the group's
/// communicator (row-major over the dims in mesh order), and the index of `position`.
template <class Mesh>
std::vector<int> group_positions(const Mesh& m, unsigned group, int position, int& me) {
  std::vector<int> q;
  for_each_in_group(m, group, position, [&](int i, int p) {
    if (p == position) me = i;
    q.push_back(p);
  });
  return q;
}

/// A local step: a slice, or a Partial target (zeros where the sum must not count twice).
template <class Mesh, int N, class E, class T>
void run_local(const Mesh& m, const plan_step<N>& s, const E& ext, int pos, const std::vector<T>& in,
               std::vector<T>& out) {
  const auto a = spec_of_table(m, s.before), b = spec_of_table(m, s.after);
  bool may_zero = false, zero_all = false;  // R -> P(sum): the value stays on coordinate 0 only
  for (int d = 0; d < Mesh::ndim; ++d) {
    if (!s.after.at[d].is_partial() || s.before.at[d].is_partial() || s.after.at[d].op != reduction::sum) continue;
    may_zero = true;
    zero_all = zero_all || (s.before.at[d].is_replicate() && m.coordinate_unchecked(pos, d) != 0);
  }
  out.assign(static_cast<std::size_t>(b.local_size(ext, pos)), T{});
  if (zero_all) return;
  const tensor_index kept = for_each_shared(a, pos, b, pos, ext, [&](tensor_index i, tensor_index o) {
    out[static_cast<std::size_t>(o)] = in[static_cast<std::size_t>(i)];
  });
  if (kept != static_cast<tensor_index>(out.size()) && !may_zero)
    fail_step("local", "the new block has elements the old one lacks");
  if (may_zero && kept != a.local_size(ext, pos))  // a Partial(sum) block keeps every element it held
    fail_step("local", "a block made Partial loses elements it held");
}

/// The communicator of the step's group, checked against the group the plan means.
template <class DeviceMesh>
const typename DeviceMesh::communicator_type& step_comm(const DeviceMesh& mesh, unsigned group, int size, int me) {
  const auto& c = mesh.flattened_comm(group);
  if (c.size() != size || c.rank() != me)
    fail_step("collective", "the group's communicator has " + std::to_string(c.size()) + " ranks, rank " +
                                std::to_string(c.rank()) + "; the plan's group has " + std::to_string(size) +
                                ", this rank at " + std::to_string(me));
  return c;
}

/// An all_reduce over the step's group: the block stays, its values are reduced.
template <class DeviceMesh, int N, class T>
void run_all_reduce(const DeviceMesh& mesh, const plan_step<N>& s, int size, int me, const std::vector<T>& in,
                    std::vector<T>& out) {
  const auto& c = step_comm(mesh, s.group, size, me);
  out = in;
  c.all_reduce(out.data(), out.data(), out.size(), to_op<op>(s.op), {});
}

/// A reduce_scatter: every rank of the group holds the same block (the group is Partial);
/// rank i keeps the reduction of its part, the parts packed in the group's order.
template <class DeviceMesh, int N, class E, class T>
void run_reduce_scatter(const DeviceMesh& mesh, const plan_step<N>& s, const E& ext, int pos,
                        const std::vector<T>& in, std::vector<T>& out) {
  const auto& m = mesh.layout();
  const auto a = spec_of_table(m, s.before), b = spec_of_table(m, s.after);
  int me = 0;
  const std::vector<int> group = group_positions(m, s.group, pos, me);
  const auto& c = step_comm(mesh, s.group, static_cast<int>(group.size()), me);
  const auto keep = [&](const std::vector<T>& reduced) {  // this rank's part of a reduced block
    out.assign(static_cast<std::size_t>(b.local_size(ext, pos)), T{});
    for_each_shared(a, pos, b, pos, ext, [&](tensor_index i, tensor_index o) {
      out[static_cast<std::size_t>(o)] = reduced[static_cast<std::size_t>(i)];
    });
  };
  if constexpr (std::is_integral_v<T>)
    if (s.op == reduction::avg) {  // integer averages round as the backend's all_reduce does
      std::vector<T> all = in;
      c.all_reduce(all.data(), all.data(), all.size(), op::avg, {});
      return keep(all);
    }
  std::vector<std::size_t> counts;
  std::vector<T> send;
  send.reserve(in.size());
  for (int q : group) {
    const tensor_index n = for_each_shared(a, pos, b, q, ext, [&](tensor_index i, tensor_index) {
      send.push_back(in[static_cast<std::size_t>(i)]);
    });
    if (n != b.local_size(ext, q)) fail_step("reduce_scatter", "a part the group's block lacks");
    counts.push_back(static_cast<std::size_t>(n));
  }
  std::vector<T> part(counts[static_cast<std::size_t>(me)]);
  c.reduce_scatterv(send.data(), part.data(), std::span<const std::size_t>(counts), to_op<op>(s.op), {});
  out.assign(part.size(), T{});
  std::size_t k = 0;
  for_each_shared(b, pos, b, pos, ext, [&](tensor_index, tensor_index o) { out[static_cast<std::size_t>(o)] = part[k++]; });
}

/// An all_gather or all_to_all: each rank sends every other rank of the group the elements
/// of its new block that it holds, and keeps its own; nothing else moves.
template <class DeviceMesh, int N, class E, class T>
void run_exchange(const DeviceMesh& mesh, const plan_step<N>& s, const E& ext, int pos, const std::vector<T>& in,
                  std::vector<T>& out) {
  const auto& m = mesh.layout();
  const auto a = spec_of_table(m, s.before), b = spec_of_table(m, s.after);
  int me = 0;
  const std::vector<int> group = group_positions(m, s.group, pos, me);
  const auto& c = step_comm(mesh, s.group, static_cast<int>(group.size()), me);
  const std::size_t n = group.size();
  std::vector<std::size_t> sent(n), received(n);
  std::vector<T> send;
  for (std::size_t i = 0; i < n; ++i) {
    if (static_cast<int>(i) == me) continue;
    sent[i] = static_cast<std::size_t>(for_each_shared(a, pos, b, group[i], ext, [&](tensor_index k, tensor_index) {
      send.push_back(in[static_cast<std::size_t>(k)]);
    }));
    received[i] = static_cast<std::size_t>(common_elements(a, group[i], b, pos, ext));
  }
  std::size_t total = 0;
  for (std::size_t r : received) total += r;
  std::vector<T> recv(total);
  c.all_to_allv(send.data(), std::span<const std::size_t>(sent), recv.data(), std::span<const std::size_t>(received), {});
  out.assign(static_cast<std::size_t>(b.local_size(ext, pos)), T{});
  std::size_t filled = static_cast<std::size_t>(for_each_shared(a, pos, b, pos, ext, [&](tensor_index k, tensor_index o) {
    out[static_cast<std::size_t>(o)] = in[static_cast<std::size_t>(k)];
  }));
  std::size_t at = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (static_cast<int>(i) != me)
      for_each_shared(a, group[i], b, pos, ext, [&](tensor_index, tensor_index o) { out[static_cast<std::size_t>(o)] = recv[at++]; });
  filled += at;
  if (filled != out.size()) fail_step(step_name(s.kind), "the new block is not covered by the group's blocks");
}

/// Every step of plan p on this rank: `now`, its block under the plan's first spec, becomes
/// its block under the last.
template <class DeviceMesh, int N, class E, class T>
void run_plan(const DeviceMesh& mesh, const redistribute_plan<N>& p, const E& ext, std::vector<T>& now) {
  const int pos = mesh.position();
  std::vector<T> next;
  for (const auto& s : p) {
    switch (s.kind) {
      case step_kind::local: run_local(mesh.layout(), s, ext, pos, now, next); break;
      case step_kind::all_reduce: {
        int me = 0;
        const auto group = group_positions(mesh.layout(), s.group, pos, me);
        run_all_reduce(mesh, s, static_cast<int>(group.size()), me, now, next);
        break;
      }
      case step_kind::reduce_scatter: run_reduce_scatter(mesh, s, ext, pos, now, next); break;
      case step_kind::all_gather:
      case step_kind::all_to_all: run_exchange(mesh, s, ext, pos, now, next); break;
    }
    now.swap(next);
  }
}

}  // namespace devmesh::detail
