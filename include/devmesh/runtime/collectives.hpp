// devmesh/runtime/collectives.hpp: typed collectives on a named dim of a device mesh.
//
//   mesh.all_reduce<"dp">(grad, dm::op::sum);          // any contiguous range: vector, array, span
//   dm::all_reduce<"dp">(mesh, grad, dm::op::sum);     // the same, for generic code (no .template)
//   flat.all_reduce(grad, dm::op::avg);                // a 1-D mesh needs no name
//
// Buffers are in the backend's memory space (host for MPI, device for NCCL, e.g. a
// std::span over device memory). Sizes that do not fit the dim throw mesh_error; backend
// failures throw comm_error. The members are written once, in collectives_of (a base of
// device_mesh); the free functions call them. A member builds the dim's site and calls the
// body in collective_calls.hpp, which does not depend on the mesh's type (compiled once per
// backend and element type). A collective costs what the backend's call costs plus a few
// loads and a branch (bench/dispatch.cpp measures it).
#pragma once
#include <concepts>
#include <cstddef>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>

#include "../core/diagnostics.hpp"
#include "../core/fixed_string.hpp"
#include "backend.hpp"
#include "mesh_runtime.hpp"
#include "dim_select.hpp"
#include "element_type.hpp"

namespace devmesh {

namespace error {
/// A collective's buffer is not a contiguous range (a std::list, a std::deque, a view that
/// skips elements): its elements must lie next to each other in memory.
template <class Buffer>
struct buffer_not_contiguous {
  static constexpr void fire() {
    static_assert(always_false<Buffer>,
                  "devmesh: a collective's buffer must be a contiguous range (std::vector, std::array, std::span, a "
                  "C array) of its element type (see error::buffer_not_contiguous<buffer type>)");
  }
};
/// A std::vector<bool> (or another range whose bools are packed into bits and read through
/// proxies): no bool of it lies in memory for the backend to read or write.
template <class Buffer>
struct buffer_packs_bits {
  static constexpr void fire() {
    static_assert(always_false<Buffer>,
                  "devmesh: a collective's buffer must be a contiguous range, and std::vector<bool> is not one (it "
                  "packs its bools into bits): use std::array<bool, N>, a std::span<bool> over a bool array, or "
                  "std::vector<std::uint8_t> reduced with op::max (or) and op::min (and) (see "
                  "error::buffer_packs_bits<buffer type>)");
  }
};
/// A buffer the collective writes (recv, or the in-place buffer) is read-only.
template <class Buffer>
struct buffer_not_writable {
  static constexpr void fire() {
    static_assert(always_false<Buffer>,
                  "devmesh: this collective writes into the buffer, and it is read-only (a range of const elements; "
                  "see error::buffer_not_writable<buffer type>)");
  }
};
/// send and recv hold different element types.
template <class Send, class Recv>
struct element_types_differ {
  static constexpr void fire() {
    static_assert(always_false<Send>,
                  "devmesh: send and recv must hold the same element type (see error::element_types_differ<send "
                  "element, recv element>)");
  }
};
}  // namespace error

namespace detail {

/// R's iterator and element reference (std::ranges::iterator_t and range_reference_t, without
/// <ranges>).
template <class R>
using buffer_iterator_t = decltype(std::ranges::begin(std::declval<R&>()));
template <class R>
using buffer_reference_t = std::iter_reference_t<buffer_iterator_t<R>>;

/// std::ranges::contiguous_range<R>, spelled with the iterator concepts: <ranges> costs every
/// TU that includes the runtime its views.
template <class R>
concept contiguous_buffer = requires(R& r) {
  std::ranges::end(r);
  { std::ranges::data(r) } -> std::same_as<std::add_pointer_t<buffer_reference_t<R>>>;
} && std::contiguous_iterator<buffer_iterator_t<R>>;

/// R's bools are packed into bits (std::vector<bool>): its elements are proxies, not bools.
template <class R>
concept packed_bools = requires(R& r) { std::ranges::begin(r); } &&
                       std::same_as<std::iter_value_t<buffer_iterator_t<R>>, bool> &&
                       !std::is_reference_v<buffer_reference_t<R>>;

/// The element type of a buffer (const dropped).
template <class R>
using element_t = std::remove_cv_t<std::remove_reference_t<buffer_reference_t<R>>>;

/// R is a buffer a collective reads: a contiguous range.
template <class R>
constexpr bool check_send_buffer() {
  if constexpr (packed_bools<R>)
    require<false, error::buffer_packs_bits<std::remove_cvref_t<R>>>();
  else
    require<contiguous_buffer<R>, error::buffer_not_contiguous<std::remove_cvref_t<R>>>();
  return contiguous_buffer<R>;
}
/// R is a buffer a collective writes: a contiguous range of non-const elements.
template <class R>
constexpr bool check_recv_buffer() {
  if constexpr (!check_send_buffer<R>()) {
    return false;
  } else {
    constexpr bool writable = !std::is_const_v<std::remove_reference_t<buffer_reference_t<R>>>;
    require<writable, error::buffer_not_writable<std::remove_reference_t<R>>>();
    return writable;
  }
}
/// S and R are a collective's send and recv buffers, of one element type.
template <class S, class R>
constexpr bool check_buffers() {
  if constexpr (!check_send_buffer<S>() || !check_recv_buffer<R>()) {
    return false;
  } else {
    constexpr bool same = std::is_same_v<element_t<S>, element_t<R>>;
    require<same, error::element_types_differ<element_t<S>, element_t<R>>>();
    return same;
  }
}

/// {source, dest} at `displacement` from coordinate `me` on a dim of `n` (-1 past either end
/// unless periodic), as MPI_Cart_shift.
inline std::pair<int, int> shift_peers(int n, int me, int displacement, bool periodic) {
  auto peer = [&](long long p) {
    if (periodic) return static_cast<int>(((p % n) + n) % n);
    return p < 0 || p >= n ? -1 : static_cast<int>(p);
  };
  return {peer(static_cast<long long>(me) - displacement), peer(static_cast<long long>(me) + displacement)};
}

/// T as the element type of a collective on Comm: a static_assert naming T and the backend
/// when the backend has no datatype for it (error::unsupported_element_type<T, backend>).
template <class T, class Comm>
constexpr element_type element_for() {
  if constexpr (Comm::template carries<T>) {
    return element_type_of<T>;
  } else {
    require<false, error::unsupported_element_type<std::remove_cv_t<T>, Comm>>();
    return {};
  }
}
/// The same for a reduction, which std::byte (no arithmetic) cannot be.
template <class T, class Comm>
constexpr element_type reduced_for() {
  static_assert(!std::is_same_v<std::remove_cv_t<T>, std::byte>,
                "devmesh: std::byte has no arithmetic, so reductions (all_reduce, reduce, reduce_scatter) on it are "
                "errors; reduce std::uint8_t instead (std::byte is for moves: broadcast, all_gather, all_to_all, "
                "shift)");
  return element_for<T, Comm>();
}
/// The element type of a collective's buffer R on Comm (element_for; reduced_for when `reduction`).
template <class R, class Comm, bool reduction = false>
inline constexpr element_type element_of_buffer =
    reduction ? reduced_for<element_t<R>, Comm>() : element_for<element_t<R>, Comm>();

}  // namespace detail

/// The typed collectives of Mesh (a device_mesh, which derives from this): each member on
/// the dim N names (or, unnamed, the only dim of a 1-D mesh), forwarding to the dim's
/// communicator after the checks that need the mesh (sizes against the dim, roots in range).
template <class Mesh, class Layout, communicator Comm>
class collectives_of {
  using stream_type = typename Comm::stream_type;
  template <fixed_string N>
  static constexpr int dim = detail::select_dim<Layout, N>();

 public:
  /// `mesh.all_reduce<"dp">(buf, dm::op::sum)`: in place, buf becomes the reduction over dim N.
  template <fixed_string N = "", class R>
  void all_reduce(R&& buf, op o, stream_type s = {}) const {
    if constexpr (detail::check_recv_buffer<R>())
      detail::mesh_runtime<Comm>::all_reduce(site(dim<N>, "all_reduce"), std::ranges::data(buf), std::ranges::data(buf),
                            std::ranges::size(buf), std::ranges::size(buf), detail::element_of_buffer<R, Comm, true>, o,
                            s);
  }
  /// `mesh.all_reduce<"dp">(send, recv, dm::op::sum)`: recv becomes the reduction of every
  /// rank's send over dim N (out of place).
  template <fixed_string N = "", class S, class R>
  void all_reduce(S&& send, R&& recv, op o, stream_type s = {}) const {
    if constexpr (detail::check_buffers<S, R>())
      detail::mesh_runtime<Comm>::all_reduce(site(dim<N>, "all_reduce"), std::ranges::data(send), std::ranges::data(recv),
                            std::ranges::size(send), std::ranges::size(recv), detail::element_of_buffer<S, Comm, true>,
                            o, s);
  }
  /// `mesh.reduce<"dp">(buf, dm::op::sum, root)`: the reduction onto the rank with local rank
  /// `root` along dim N (in place on root).
  template <fixed_string N = "", class R>
  void reduce(R&& buf, op o, int root, stream_type s = {}) const {
    if constexpr (detail::check_recv_buffer<R>())
      detail::mesh_runtime<Comm>::reduce(site(dim<N>, "reduce"), std::ranges::data(buf), std::ranges::data(buf), std::ranges::size(buf),
                        std::ranges::size(buf), detail::element_of_buffer<R, Comm, true>, o, root, s);
  }
  /// `mesh.reduce<"dp">(send, recv, dm::op::sum, root)`: recv on local rank `root` along dim N
  /// becomes the reduction of every rank's send (recv is not written elsewhere).
  template <fixed_string N = "", class S, class R>
  void reduce(S&& send, R&& recv, op o, int root, stream_type s = {}) const {
    if constexpr (detail::check_buffers<S, R>())
      detail::mesh_runtime<Comm>::reduce(site(dim<N>, "reduce"), std::ranges::data(send), std::ranges::data(recv),
                        std::ranges::size(send), std::ranges::size(recv), detail::element_of_buffer<S, Comm, true>, o,
                        root, s);
  }
  /// `mesh.broadcast<"tp">(buf, root)`: buf on local rank `root` along dim N, copied to every
  /// rank of its group.
  template <fixed_string N = "", class R>
  void broadcast(R&& buf, int root, stream_type s = {}) const {
    if constexpr (detail::check_recv_buffer<R>())
      detail::mesh_runtime<Comm>::broadcast(site(dim<N>, "broadcast"), std::ranges::data(buf), std::ranges::size(buf),
                           detail::element_of_buffer<R, Comm>, root, s);
  }
  /// `mesh.all_gather<"shard">(send, recv)`: recv becomes the concatenation of every rank's
  /// send, in local-rank order along dim N.
  /// recv.size() must be send.size() * size<N>().
  template <fixed_string N = "", class S, class R>
  void all_gather(S&& send, R&& recv, stream_type s = {}) const {
    if constexpr (detail::check_buffers<S, R>())
      detail::mesh_runtime<Comm>::all_gather(site(dim<N>, "all_gather"), std::ranges::data(send), std::ranges::data(recv),
                            std::ranges::size(send), std::ranges::size(recv), detail::element_of_buffer<S, Comm>, s);
  }
  /// `mesh.reduce_scatter<"shard">(send, recv, dm::op::avg)`: recv becomes block
  /// `local_rank<N>()` of the reduction of every rank's send.
  /// send.size() must be recv.size() * size<N>().
  template <fixed_string N = "", class S, class R>
  void reduce_scatter(S&& send, R&& recv, op o, stream_type s = {}) const {
    if constexpr (detail::check_buffers<S, R>())
      detail::mesh_runtime<Comm>::reduce_scatter(site(dim<N>, "reduce_scatter"), std::ranges::data(send), std::ranges::data(recv),
                                std::ranges::size(send), std::ranges::size(recv),
                                detail::element_of_buffer<S, Comm, true>, o, s);
  }
  /// `mesh.all_to_all<"ep">(send, recv)`: block j of send goes to local rank j along dim N;
  /// block i of recv comes from local rank i.
  /// send.size() == recv.size(), divisible by size<N>().
  template <fixed_string N = "", class S, class R>
  void all_to_all(S&& send, R&& recv, stream_type s = {}) const {
    if constexpr (detail::check_buffers<S, R>())
      detail::mesh_runtime<Comm>::all_to_all(site(dim<N>, "all_to_all"), std::ranges::data(send), std::ranges::data(recv),
                            std::ranges::size(send), std::ranges::size(recv), detail::element_of_buffer<S, Comm>, s);
  }
  /// `mesh.barrier<"dp">()`: blocks until every rank of this rank's group along dim N has
  /// called it (NCCL: enqueued on the stream).
  template <fixed_string N = "">
  void barrier(stream_type s = {}) const {
    detail::mesh_runtime<Comm>::barrier(site(dim<N>, "barrier"), s);
  }
  /// `auto [src, dst] = mesh.shift_peers<"pp">(1)`: the neighbours along dim N at
  /// `displacement`, as MPI_Cart_shift: {source, dest} local ranks (-1 past either end unless
  /// periodic). Throws on non-members.
  template <fixed_string N = "">
  std::pair<int, int> shift_peers(int displacement = 1, bool periodic = false) const {
    return peers(dim<N>, displacement, periodic, "shift_peers");
  }
  /// `mesh.shift<"pp">(send, recv)`: sends `send` to the rank `displacement` ahead along dim N
  /// and receives `recv` from the
  /// rank as far behind (MPI_Cart_shift + sendrecv). At the ends of a non-periodic dim the
  /// missing side is skipped (recv left untouched). send.size() must equal recv.size().
  template <fixed_string N = "", class S, class R>
  void shift(S&& send, R&& recv, int displacement = 1, bool periodic = false, stream_type s = {}) const {
    if constexpr (detail::check_buffers<S, R>()) {
      const auto on = site(dim<N>, "shift");
      const auto [source, dest] = peers(dim<N>, displacement, periodic, "shift");
      detail::mesh_runtime<Comm>::shift(on, source, dest, std::ranges::data(send), std::ranges::data(recv),
                                        std::ranges::size(send), std::ranges::size(recv),
                                        detail::element_of_buffer<S, Comm>, displacement, periodic, s);
    }
  }
  /// `mesh.send_next<"pp">(activations)`: sends to local rank + 1 along dim N. Pipeline
  /// helpers along dim N: send to local rank + 1 / receive from local rank - 1
  /// (no-ops at the ends unless periodic). Each matches the neighbour's opposite call, e.g.
  /// a forward step: recv_prev, compute, send_next.
  template <fixed_string N = "", class S>
  void send_next(S&& send, bool periodic = false, stream_type s = {}) const {
    if constexpr (detail::check_send_buffer<S>()) {
      const auto on = site(dim<N>, "send_next");
      detail::mesh_runtime<Comm>::send_next(on, peers(dim<N>, 1, periodic, "send_next").second, std::ranges::data(send),
                           std::ranges::size(send), detail::element_of_buffer<S, Comm>, s);
    }
  }
  /// `mesh.recv_prev<"pp">(activations)`: receives recv from local rank - 1 along dim N (the
  /// other half of send_next; a no-op on
  /// local rank 0 unless periodic).
  template <fixed_string N = "", class R>
  void recv_prev(R&& recv, bool periodic = false, stream_type s = {}) const {
    if constexpr (detail::check_recv_buffer<R>()) {
      const auto on = site(dim<N>, "recv_prev");
      detail::mesh_runtime<Comm>::recv_prev(on, peers(dim<N>, 1, periodic, "recv_prev").first, std::ranges::data(recv),
                           std::ranges::size(recv), detail::element_of_buffer<R, Comm>, s);
    }
  }

 private:
  const Mesh& self() const { return static_cast<const Mesh&>(*this); }
  /// Dim d's site (collective_calls.hpp): its communicator (mesh_error naming `what` on a
  /// non-member or a moved-from handle), the root's state, the dim's size, the modes.
  detail::dim_site<Comm> site(int d, const char* what) const {
    const Mesh& m = self();
    const auto& e = m.entry_on(d, what);  // first: it throws where the state is missing
    return {e, *m.state_, static_cast<std::size_t>(m.layout().dim_size(d)), m.check_, m.watch_, &m, d, &where_of};
  }
  static std::string where_of(const void* m, int d) { return static_cast<const Mesh*>(m)->where(d); }
  /// This rank's neighbours along dim d (shift_peers; mesh_error naming `what` on non-members).
  std::pair<int, int> peers(int d, int displacement, bool periodic, const char* what) const {
    return detail::shift_peers(self().layout().dim_size(d), self().coordinate_on(d, what), displacement, periodic);
  }
};

/// The free forms, for generic code: dm::all_reduce<"dp">(mesh, buf, op) is
/// mesh.all_reduce<"dp">(buf, op) without `.template`.
template <class M>
concept device_mesh_like = requires { typename M::communicator_type; typename M::layout_type; };

/// mesh.all_reduce<N>(buf, op) / (send, recv, op): the reduction over dim N (in place, or into recv).
template <fixed_string N = "", device_mesh_like M, class... Args>
auto all_reduce(const M& mesh, Args&&... args) -> decltype(mesh.template all_reduce<N>(std::forward<Args>(args)...)) {
  return mesh.template all_reduce<N>(std::forward<Args>(args)...);
}

/// mesh.reduce<N>(buf, op, root) / (send, recv, op, root): the reduction onto local rank root of dim N.
template <fixed_string N = "", device_mesh_like M, class... Args>
auto reduce(const M& mesh, Args&&... args) -> decltype(mesh.template reduce<N>(std::forward<Args>(args)...)) {
  return mesh.template reduce<N>(std::forward<Args>(args)...);
}

/// mesh.broadcast<N>(buf, root): local rank root's buf to every rank of its group along dim N.
template <fixed_string N = "", device_mesh_like M, class... Args>
auto broadcast(const M& mesh, Args&&... args) -> decltype(mesh.template broadcast<N>(std::forward<Args>(args)...)) {
  return mesh.template broadcast<N>(std::forward<Args>(args)...);
}

/// mesh.all_gather<N>(send, recv): every rank's send, concatenated in local-rank order along dim N.
template <fixed_string N = "", device_mesh_like M, class... Args>
auto all_gather(const M& mesh, Args&&... args) -> decltype(mesh.template all_gather<N>(std::forward<Args>(args)...)) {
  return mesh.template all_gather<N>(std::forward<Args>(args)...);
}

/// mesh.reduce_scatter<N>(send, recv, op): this rank's block of the reduction over dim N.
template <fixed_string N = "", device_mesh_like M, class... Args>
auto reduce_scatter(const M& mesh, Args&&... args) -> decltype(mesh.template reduce_scatter<N>(std::forward<Args>(args)...)) {
  return mesh.template reduce_scatter<N>(std::forward<Args>(args)...);
}

/// mesh.all_to_all<N>(send, recv): block j of send to local rank j along dim N.
template <fixed_string N = "", device_mesh_like M, class... Args>
auto all_to_all(const M& mesh, Args&&... args) -> decltype(mesh.template all_to_all<N>(std::forward<Args>(args)...)) {
  return mesh.template all_to_all<N>(std::forward<Args>(args)...);
}

/// mesh.barrier<N>(): every rank of this rank's group along dim N has called it.
template <fixed_string N = "", device_mesh_like M, class... Args>
auto barrier(const M& mesh, Args&&... args) -> decltype(mesh.template barrier<N>(std::forward<Args>(args)...)) {
  return mesh.template barrier<N>(std::forward<Args>(args)...);
}

/// mesh.shift_peers<N>(displacement, periodic): {source, dest} local ranks along dim N.
template <fixed_string N = "", device_mesh_like M, class... Args>
auto shift_peers(const M& mesh, Args&&... args) -> decltype(mesh.template shift_peers<N>(std::forward<Args>(args)...)) {
  return mesh.template shift_peers<N>(std::forward<Args>(args)...);
}

/// mesh.shift<N>(send, recv, displacement, periodic): send ahead, receive from behind along dim N.
template <fixed_string N = "", device_mesh_like M, class... Args>
auto shift(const M& mesh, Args&&... args) -> decltype(mesh.template shift<N>(std::forward<Args>(args)...)) {
  return mesh.template shift<N>(std::forward<Args>(args)...);
}

/// mesh.send_next<N>(send, periodic): to local rank + 1 along dim N.
template <fixed_string N = "", device_mesh_like M, class... Args>
auto send_next(const M& mesh, Args&&... args) -> decltype(mesh.template send_next<N>(std::forward<Args>(args)...)) {
  return mesh.template send_next<N>(std::forward<Args>(args)...);
}

/// mesh.recv_prev<N>(recv, periodic): from local rank - 1 along dim N.
template <fixed_string N = "", device_mesh_like M, class... Args>
auto recv_prev(const M& mesh, Args&&... args) -> decltype(mesh.template recv_prev<N>(std::forward<Args>(args)...)) {
  return mesh.template recv_prev<N>(std::forward<Args>(args)...);
}

}  // namespace devmesh
