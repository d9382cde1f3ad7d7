// devmesh/redistribute/steps.hpp: one step of a redistribute plan (sharding/plan.hpp) run by
// one rank, from the block it holds under the step's `before` spec to the one it holds under
// `after`. Elements travel packed in global row-major order (sharding/block_overlap.hpp), so
// sender and receiver agree on them without sending indices; uneven and empty blocks use the
// backend's v-collectives (a count per rank), never padding. Blocks live in the backend's memory
// space (memory.hpp: the host's, or the device's on NCCL, every copy and collective on the
// call's stream); rows are copied as runs. On the host the buffers are the calling thread's,
// reused from call to call (no allocation once warm); on a device they are the call's,
// stream-ordered.
#pragma once
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../core/diagnostics.hpp"
#include "../runtime/backend.hpp"
#include "../sharding/block_overlap.hpp"
#include "../sharding/plan.hpp"
#include "../sharding/plan_cost.hpp"
#include "kept.hpp"
#include "memory.hpp"

namespace devmesh::detail {

/// A step that cannot be run as planned: a planner bug, never a user error (the simulator of
/// tests/sharding/redistribute_plan.cpp checks every plan it makes against the same rules).
[[noreturn]] inline void fail_step(const char* kind, const std::string& what) {
  throw mesh_error("devmesh: redistribute: internal error in a " + std::string(kind) + " step: " + what);
}

/// The buffers of a redistribute call of element type T in memory Space: the block before
/// and after a step, and what a collective sends and receives (Space's scratch), and the
/// counts (host vectors); the call's stream. On the host, the calling thread's, reused (a
/// call must not re-enter redistribute: none does); on a device, the call's.
template <class T, class Space = host_memory>
struct step_buffers {
  using space = Space;
  using stream_type = typename Space::stream_type;
  using scratch = typename Space::template scratch<T>;
  stream_type stream;
  scratch now, next, send, recv;
  std::vector<int> group;
  std::vector<std::size_t> sent, received, send_at, recv_at;

  explicit step_buffers(stream_type s = {}) : stream(s), now(s), next(s), send(s), recv(s) {}
  static step_buffers& of_this_thread()
    requires std::is_same_v<Space, host_memory>
  {
    thread_local step_buffers b;
    return b;
  }
  /// After a call: a host buffer over 64 MiB is given back (a large tensor's blocks are not kept).
  void release_large() noexcept {
    for (auto* v : {&now, &next, &send, &recv}) v->release_large();
  }
  /// n elements from src to dst, on the call's stream.
  void copy(T* dst, const T* src, std::size_t n) {
    if (n) Space::copy_rows(dst, n, src, n, n, 1, stream);
  }
  /// A copier of runs from src to dst (memory.hpp), on the call's stream.
  run_copies<Space, T> runs(const T* src, T* dst) const { return {src, dst, stream}; }
};

/// f(b) with the buffers of a redistribute call in Space on stream s: the thread's on the
/// host (large ones released after), the call's on a device.
template <class T, class Space, class F>
void with_step_buffers(typename Space::stream_type s, F&& f) {
  if constexpr (std::is_same_v<Space, host_memory>) {
    auto& b = step_buffers<T, Space>::of_this_thread();
    f(b);
    b.release_large();
  } else {
    step_buffers<T, Space> b(s);
    f(b);
  }
}

/// The positions of the step's group that holds `position`, in the order of the group's
/// communicator (row-major over the dims in mesh order), into q; returns this position's index.
template <class Mesh>
int group_positions(const Mesh& m, unsigned group, int position, std::vector<int>& q) {
  int me = 0;
  q.clear();
  for_each_in_group(m, group, position, [&](int i, int p) {
    if (p == position) me = i;
    q.push_back(p);
  });
  return me;
}

/// Where the elements two blocks share lie in one of them: their first offset and number
/// when they are one contiguous range there (a collective then reads or writes them in
/// place), else first == -1. ranges_of_shared gives both blocks' in one pass, from the
/// blocks' maps (block_maps_of: computed once per block where a step meets it again).
struct shared_range {
  tensor_index first = -1, count = 0;
};
struct shared_ranges {
  shared_range in_a{0, 0}, in_b{0, 0};
};
template <class Maps>
shared_ranges ranges_of_shared(const Maps& a, const Maps& b) {
  shared_ranges r;
  bool contiguous_a = true, contiguous_b = true;
  for_each_shared_run_in(a, b, [&](tensor_index oa, tensor_index ob, tensor_index n) {
    if (r.in_a.count == 0) r.in_a.first = oa, r.in_b.first = ob;
    else
      contiguous_a = contiguous_a && oa == r.in_a.first + r.in_a.count,
      contiguous_b = contiguous_b && ob == r.in_b.first + r.in_b.count;
    r.in_a.count += n, r.in_b.count += n;
  });
  if (!contiguous_a) r.in_a.first = -1;
  if (!contiguous_b) r.in_b.first = -1;
  return r;
}
template <class SpecA, class SpecB, class E>
shared_range range_of_shared(const SpecA& a, int p, const SpecB& b, int q, const E& ext, bool in_b) {
  const shared_ranges r = ranges_of_shared(block_maps_of(a, p, ext), block_maps_of(b, q, ext));
  return in_b ? r.in_b : r.in_a;
}

/// A local step: a slice, or a Partial target (zeros where the sum must not count twice).
template <class Mesh, int N, class E, class T, class B>
void run_local(const Mesh& m, const plan_step<N>& s, const E& ext, int pos, std::span<const T> in, std::span<T> out,
               B& b) {
  const auto a = spec_of_table(m, s.before), c = spec_of_table(m, s.after);
  bool may_zero = false, zero_all = false;  // R -> P(sum): the value stays on coordinate 0 only
  for (int d = 0; d < Mesh::ndim; ++d) {
    if (!s.after.at[d].is_partial() || s.before.at[d].is_partial() || s.after.at[d].op != reduction::sum) continue;
    may_zero = true;
    zero_all = zero_all || (s.before.at[d].is_replicate() && m.coordinate_unchecked(pos, d) != 0);
  }
  if (may_zero) B::space::zero(out.data(), out.size(), b.stream);
  if (zero_all) return;
  auto copy = b.runs(in.data(), out.data());
  const tensor_index kept = for_each_shared_run(a, pos, c, pos, ext, copy);
  copy.flush();
  if (kept != static_cast<tensor_index>(out.size()) && !may_zero)
    fail_step("local", "the new block has elements the old one lacks");
  if (may_zero && kept != a.local_size(ext, pos))  // a Partial(sum) block keeps every element it held
    fail_step("local", "a block made Partial loses elements it held");
}

/// A local step that only drops elements, whose new block is one range of the old (a slice
/// of rows): that range, with no copy (the next step reads it in place); else nothing.
template <class Mesh, int N, class E, class T>
std::span<const T> local_view(const Mesh& m, const plan_step<N>& s, const E& ext, int pos, std::span<const T> in) {
  for (int d = 0; d < Mesh::ndim; ++d)
    if (s.after.at[d].is_partial() && !s.before.at[d].is_partial()) return {};  // zeros to write
  const auto a = spec_of_table(m, s.before), b = spec_of_table(m, s.after);
  const shared_ranges r = ranges_of_shared(block_maps_of(a, pos, ext), block_maps_of(b, pos, ext));
  const shared_range in_old = r.in_a, in_new = r.in_b;
  if (in_old.first < 0 || in_new.first != 0 || in_new.count != b.local_size(ext, pos) || in_new.count == 0) return {};
  return in.subspan(static_cast<std::size_t>(in_old.first), static_cast<std::size_t>(in_old.count));
}

/// Checks the communicator of the step's group (made now if new) against the group the plan means.
template <class DeviceMesh>
void check_step_comm(const DeviceMesh& mesh, unsigned group, int size, int me) {
  const auto& c = mesh.flattened_comm(group);
  if (c.size() != size || c.rank() != me)
    fail_step("collective", "the group's communicator has " + std::to_string(c.size()) + " ranks, rank " +
                                std::to_string(c.rank()) + "; the plan's group has " + std::to_string(size) +
                                ", this rank at " + std::to_string(me));
}

/// An all_reduce over the step's group: the block stays, its values are reduced.
template <class DeviceMesh, int N, class T, class B>
void run_all_reduce(const DeviceMesh& mesh, const plan_step<N>& s, int pos, std::span<const T> in, std::span<T> out,
                    B& b) {
  const int me = group_positions(mesh.layout(), s.group, pos, b.group);
  check_step_comm(mesh, s.group, static_cast<int>(b.group.size()), me);
  collective_on_dims<T>(mesh, s.group, "all_reduce", in.size(), [&](const auto& c, auto... watch) {
    c.all_reduce(in.data(), out.data(), in.size(), to_op<op>(s.op), b.stream, watch...);
  });
}

/// reduce_scatter of an integer average: an all_reduce (which rounds as the backend's
/// all_reduce does), then this rank's part kept.
template <class DeviceMesh, int N, class Spec, class E, class T, class B>
void run_integer_average(const DeviceMesh& mesh, const plan_step<N>& s, const Spec& before, const Spec& after,
                         const E& ext, int pos, std::span<const T> in, std::span<T> out, B& b) {
  b.send.resize(in.size());
  b.copy(b.send.data(), in.data(), in.size());
  collective_on_dims<T>(mesh, s.group, "all_reduce", b.send.size(), [&](const auto& cc, auto... watch) {
    cc.all_reduce(b.send.data(), b.send.data(), b.send.size(), op::avg, b.stream, watch...);
  });
  if (zero_filled_dims(s)) B::space::zero(out.data(), out.size(), b.stream);
  auto copy = b.runs(b.send.data(), out.data());
  for_each_shared_run(before, pos, after, pos, ext, copy);
  copy.flush();
}

/// A reduce_scatter: every rank of the group holds the same block (the group is Partial);
/// rank i keeps the reduction of its part. The parts go packed in the group's order: read in
/// place when the block already is (rows), else packed; the result lands in place when this
/// rank's part is one range of its new block. A zero-filling one (zero_filled_dims: dims made
/// Partial(sum) from Shard) has parts that are the new blocks' elements the block holds:
/// every held element in one part, zeros where the new block has elements it lacks.
template <class DeviceMesh, int N, class E, class T, class B>
void run_reduce_scatter(const DeviceMesh& mesh, const plan_step<N>& s, const E& ext, int pos, std::span<const T> in,
                        std::span<T> out, B& b) {
  const auto& m = mesh.layout();
  const auto before = spec_of_table(m, s.before), after = spec_of_table(m, s.after);
  const int me = group_positions(m, s.group, pos, b.group);
  check_step_comm(mesh, s.group, static_cast<int>(b.group.size()), me);
  if constexpr (std::is_integral_v<T>)
    if (s.op == reduction::avg) return run_integer_average(mesh, s, before, after, ext, pos, in, out, b);
  b.received.clear();
  const bool zero_fill = zero_filled_dims(s) != 0;
  bool in_order = true;  // every part one range of the block, in the group's order
  std::size_t packed = 0;
  for (int q : b.group) {
    const shared_range r = range_of_shared(before, pos, after, q, ext, false);
    if (r.count != after.local_size(ext, q) && !zero_fill)
      fail_step("reduce_scatter", "a part the group's block lacks");
    in_order = in_order && (r.count == 0 || r.first == static_cast<tensor_index>(packed));
    packed += static_cast<std::size_t>(r.count);
    b.received.push_back(static_cast<std::size_t>(r.count));
  }
  if (zero_fill && packed != in.size()) fail_step("reduce_scatter", "a block made Partial loses elements it held");
  const T* send = in.data();
  if (!in_order || packed != in.size()) {
    b.send.resize(packed);
    tensor_index at = 0;
    auto copy = b.runs(in.data(), b.send.data());
    for (int q : b.group)
      for_each_shared_run(before, pos, after, q, ext, [&](tensor_index i, tensor_index, tensor_index k) {
        copy(i, at, k);
        at += k;
      });
    copy.flush();
    send = b.send.data();
  }
  const shared_range mine = range_of_shared(before, pos, after, pos, ext, true);  // zero-filling: a part of it
  const bool direct = mine.first == 0 && mine.count == static_cast<tensor_index>(out.size());
  if (!direct) b.recv.resize(b.received[static_cast<std::size_t>(me)]);
  T* recv = direct ? out.data() : b.recv.data();
  collective_on_dims<T>(mesh, s.group, "reduce_scatterv", b.received[static_cast<std::size_t>(me)],
                        [&](const auto& cc, auto... watch) {
                          cc.reduce_scatterv(send, recv, std::span<const std::size_t>(b.received),
                                             element_type_of<T>, to_op<op>(s.op), b.stream, watch...);
                        });
  if (direct) return;
  if (zero_fill) B::space::zero(out.data(), out.size(), b.stream);
  tensor_index k = 0;
  auto copy = b.runs(b.recv.data(), out.data());
  for_each_shared_run(before, pos, after, pos, ext, [&](tensor_index, tensor_index o, tensor_index n) {
    copy(k, o, n);
    k += n;
  });
  copy.flush();
}

/// run_exchange's send side when it cannot send in place: every peer's elements packed into
/// b.send in the group's order (b.send_at their offsets); returns b.send's data.
template <class Spec, class E, class T, class B>
const T* pack_sends(const Spec& before, const Spec& after, int pos, int me, const E& ext, std::span<const T> in,
                    std::size_t total, B& b) {
  b.send.resize(total);
  tensor_index at = 0;
  auto copy = b.runs(in.data(), b.send.data());
  for (std::size_t i = 0; i < b.group.size(); ++i) {
    b.send_at[i] = static_cast<std::size_t>(at);
    if (static_cast<int>(i) != me)
      for_each_shared_run(before, pos, after, b.group[i], ext, [&](tensor_index k, tensor_index, tensor_index len) {
        copy(k, at, len);
        at += len;
      });
  }
  copy.flush();
  return b.send.data();
}

/// run_exchange's receive side when it could not receive in place: each peer's elements,
/// packed in b.recv at b.recv_at, to their places in out.
template <class Spec, class E, class T, class B>
void unpack_receives(const Spec& before, const Spec& after, int pos, int me, const E& ext, std::span<T> out, B& b) {
  auto copy = b.runs(b.recv.data(), out.data());
  for (std::size_t i = 0; i < b.group.size(); ++i) {
    auto at = static_cast<tensor_index>(b.recv_at[i]);
    if (static_cast<int>(i) != me)
      for_each_shared_run(before, b.group[i], after, pos, ext, [&](tensor_index, tensor_index o, tensor_index len) {
        copy(at, o, len);
        at += len;
      });
  }
  copy.flush();
}

/// What an exchange finds on this rank besides b's per-peer counts and offsets: the shape of
/// its own part, whether every peer's elements are one range on each side, the totals.
struct exchange_sides {
  shared_ranges own;
  bool send_in_place = true, recv_in_place = true;
  std::size_t total_sent = 0, total_received = 0;
};

/// Surveys an exchange on this rank, at position `me` of b.group: for every peer, the number
/// and place of the elements it sends and receives (b.sent, b.send_at, b.received, b.recv_at:
/// offsets in its blocks where they are one range there). bench/redistribute reads it to
/// issue the same call.
template <class Spec, class E, class B>
exchange_sides survey_exchange(const Spec& before, const Spec& after, const E& ext, int pos, int me, B& b) {
  const std::size_t n = b.group.size();
  b.sent.assign(n, 0), b.received.assign(n, 0), b.send_at.assign(n, 0), b.recv_at.assign(n, 0);
  exchange_sides x;
  const auto mine_before = block_maps_of(before, pos, ext), mine_after = block_maps_of(after, pos, ext);
  for (std::size_t i = 0; i < n; ++i) {
    if (static_cast<int>(i) == me) continue;
    const int q = b.group[i];
    const shared_range to = ranges_of_shared(mine_before, block_maps_of(after, q, ext)).in_a;
    const shared_range from = ranges_of_shared(block_maps_of(before, q, ext), mine_after).in_b;
    b.sent[i] = static_cast<std::size_t>(to.count), b.received[i] = static_cast<std::size_t>(from.count);
    x.send_in_place = x.send_in_place && to.first >= 0, x.recv_in_place = x.recv_in_place && from.first >= 0;
    b.send_at[i] = static_cast<std::size_t>(to.first < 0 ? 0 : to.first);
    b.recv_at[i] = static_cast<std::size_t>(from.first < 0 ? 0 : from.first);
    x.total_sent += b.sent[i], x.total_received += b.received[i];
  }
  x.own = ranges_of_shared(mine_before, mine_after);
  return x;
}

/// An exchange's survey, kept by the calling thread for the next call that meets the same
/// blocks (a redistribute in a training loop): the key is everything survey_exchange reads,
/// the mesh, the step's two specs and group, the extents and the position.
template <class Mesh, int N, std::size_t R>
struct kept_survey {
  Mesh mesh;
  placement_table<N> before, after;
  unsigned bits = 0;
  std::array<tensor_index, R> shape{};
  int pos = -1, me = 0;
  std::vector<int> group;
  std::vector<std::size_t> sent, received, send_at, recv_at;
  exchange_sides x;
};

/// The survey of step s on this rank: kept from an earlier call of this thread when the key
/// matches (the last 8 kept), else made (group_positions, survey_exchange) and kept. Valid
/// until the thread's next survey_of (run_exchange copies it at once).
template <class Mesh, int N, class E>
const kept_survey<Mesh, N, static_cast<std::size_t>(E::rank())>& survey_of(const Mesh& m, const plan_step<N>& s,
                                                                         const E& ext, int pos) {
  using kept = kept_survey<Mesh, N, static_cast<std::size_t>(E::rank())>;
  thread_local kept_last<kept> surveys;
  const auto shape = ext.shape();
  if (const kept* k = surveys.find([&](const kept& k) {
        return k.pos == pos && k.bits == s.group && k.shape == shape && k.before == s.before && k.after == s.after &&
               k.mesh.same_modes(m);
      }))
    return *k;
  kept made{m, s.before, s.after, s.group, shape, pos, 0, {}, {}, {}, {}, {}, {}};
  made.me = group_positions(m, s.group, pos, made.group);
  made.x = survey_exchange(spec_of_table(m, s.before), spec_of_table(m, s.after), ext, pos, made.me, made);
  return surveys.keep(std::move(made));  // kept only once complete (the survey may throw)
}

/// Where both sides of an exchange are in place and this rank's own part is one range of
/// `in` and of `out`, the collective copies it too (MPI_Alltoallv does that while it waits
/// for the peers: a hand-written program's call, measured faster than a copy of its own
/// before the call): puts it in b's counts and offsets at position me. Returns whether it did.
template <class B>
bool own_part_in_call(const exchange_sides& x, int me, B& b) {
  const shared_range own_in = x.own.in_a, own_out = x.own.in_b;
  if (!(x.send_in_place && x.recv_in_place && own_in.first >= 0 && own_out.first >= 0)) return false;
  const auto k = static_cast<std::size_t>(me);
  b.sent[k] = b.received[k] = static_cast<std::size_t>(own_in.count);
  b.send_at[k] = static_cast<std::size_t>(own_in.first), b.recv_at[k] = static_cast<std::size_t>(own_out.first);
  return true;
}

/// An all_gather or all_to_all: each rank sends every other rank of the group the elements
/// of its new block that it holds, and keeps its own; nothing else moves. A zero-filling one
/// (zero_filled_dims) leaves zeros where no rank of the group held an element. A side whose
/// every peer's elements are one range of its block sends or receives in place (rows);
/// otherwise it packs or unpacks (MPI's vector datatypes in an MPI_Alltoallw instead were
/// measured no faster: docs/benchmarks.md, section 6).
template <class DeviceMesh, int N, class E, class T, class B>
void run_exchange(const DeviceMesh& mesh, const plan_step<N>& s, const E& ext, int pos, std::span<const T> in,
                  std::span<T> out, B& b) {
  const auto& m = mesh.layout();
  const auto before = spec_of_table(m, s.before), after = spec_of_table(m, s.after);
  const auto& kept = survey_of(m, s, ext, pos);
  const int me = kept.me;
  const exchange_sides x = kept.x;
  b.group = kept.group, b.sent = kept.sent, b.received = kept.received, b.send_at = kept.send_at;
  b.recv_at = kept.recv_at;
  check_step_comm(mesh, s.group, static_cast<int>(b.group.size()), me);
  const std::size_t n = b.group.size();
  const bool zero_fill = zero_filled_dims(s) != 0;  // the new block's elements no rank held: zeros
  if (zero_fill) B::space::zero(out.data(), out.size(), b.stream);
  const bool own_in_call = own_part_in_call(x, me, b);
  const T* send = x.send_in_place ? in.data() : pack_sends(before, after, pos, me, ext, in, x.total_sent, b);
  T* recv = out.data();
  if (!x.recv_in_place) {
    b.recv.resize(x.total_received);
    std::size_t at = 0;
    for (std::size_t i = 0; i < n; ++i) b.recv_at[i] = at, at += b.received[i];
    recv = b.recv.data();
  }
  collective_on_dims<T>(mesh, s.group, "all_to_allv", x.total_received + b.received[static_cast<std::size_t>(me)],
                        [&](const auto& cc, auto... watch) {
                          cc.all_to_allv(send, std::span<const std::size_t>(b.sent),
                                         std::span<const std::size_t>(b.send_at), recv,
                                         std::span<const std::size_t>(b.received),
                                         std::span<const std::size_t>(b.recv_at), element_type_of<T>, b.stream,
                                         watch...);
                        });
  std::size_t filled = x.total_received + (own_in_call ? b.received[static_cast<std::size_t>(me)] : 0);
  if (!own_in_call) {
    auto keep = b.runs(in.data(), out.data());
    filled += static_cast<std::size_t>(for_each_shared_run(before, pos, after, pos, ext, keep));
    keep.flush();
  }
  if (!x.recv_in_place) unpack_receives(before, after, pos, me, ext, out, b);
  if (zero_fill ? filled > out.size() : filled != out.size())
    fail_step(step_name(s.kind), "the new block is not covered by the group's blocks");
}

/// Every step of plan p on this rank: `in`, its block under the plan's first spec, becomes
/// `out`, its block under the last. Intermediate blocks live in b; the first step reads `in`
/// and the last writes `out` (no copy in or out). Everything on b's stream.
template <class DeviceMesh, int N, class E, class T, class B>
void run_plan(const DeviceMesh& mesh, const redistribute_plan<N>& p, const E& ext, std::span<const T> in,
              std::span<T> out, B& b) {
  const int pos = mesh.position();
  if (p.count == 0) {
    if (in.size() != out.size()) fail_step("last", "an empty plan between blocks of different sizes");
    b.copy(out.data(), in.data(), in.size());
    return;
  }
  std::span<const T> from = in;
  for (int i = 0; i < p.count; ++i) {
    const auto& s = p[i];
    const bool last = i + 1 == p.count;
    if (s.kind == step_kind::local && !last)
      if (const std::span<const T> view = local_view(mesh.layout(), s, ext, pos, from); !view.empty()) {
        from = view;  // a slice of rows: read in place by the next step
        continue;
      }
    const auto size = static_cast<std::size_t>(spec_of_table(mesh.layout(), s.after).local_size(ext, pos));
    if (last && size != out.size()) fail_step("last", "the plan's result does not have the target's size");
    if (!last) b.next.resize(size);
    const std::span<T> to = last ? out : std::span<T>(b.next.data(), size);
    switch (s.kind) {
      case step_kind::local: run_local(mesh.layout(), s, ext, pos, from, to, b); break;
      case step_kind::all_reduce: run_all_reduce(mesh, s, pos, from, to, b); break;
      case step_kind::reduce_scatter: run_reduce_scatter(mesh, s, ext, pos, from, to, b); break;
      case step_kind::all_gather:
      case step_kind::all_to_all: run_exchange(mesh, s, ext, pos, from, to, b); break;
    }
    if (!last) {
      b.now.swap(b.next);
      from = std::span<const T>(b.now.data(), size);
    }
  }
}

}  // namespace devmesh::detail
