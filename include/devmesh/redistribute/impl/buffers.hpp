// devmesh/redistribute/impl/buffers.hpp: the buffers of a redistribute call in a memory space
// (redistribute/memory.hpp: the host's, or the device's on NCCL), as bytes: elements of the
// call's type, whose size the call gives; the copies of runs between blocks. On the host the
// buffers are the calling thread's, reused from call to call (no allocation once warm); on a
// device they are the call's, stream-ordered.
#pragma once
#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "../../sharding/extents.hpp"
#include "../memory.hpp"
#include "survey.hpp"

namespace devmesh::detail {

/// n elements at p (bytes: n times the call's element size): a block, read or written.
template <class Byte>
struct elements {
  Byte* data = nullptr;
  std::size_t n = 0;
};
using in_block = elements<const std::byte>;
using out_block = elements<std::byte>;

/// Copies runs src[i, i + n) -> dst[o, o + n) (elements of `size` bytes), given in increasing
/// order of both i and o as for_each_shared_run gives them; flush() issues what is pending
/// (call it before anything reads dst). On a space that copies at once, each run is copied
/// when given; else runs of equal length at constant strides are one copy_rows call (a block
/// of a 2-D tensor: one cudaMemcpy2DAsync), so a device step issues a few copies, not one per row.
template <class Space>
class run_copies {
  const std::byte* src_;
  std::byte* dst_;
  std::size_t size_;
  typename Space::stream_type stream_;
  tensor_index first_src_ = 0, first_dst_ = 0, last_src_ = 0, last_dst_ = 0, src_pitch_ = 0, dst_pitch_ = 0;
  tensor_index width_ = 0, rows_ = 0;

 public:
  run_copies(const std::byte* src, std::byte* dst, std::size_t size, typename Space::stream_type s)
      : src_(src), dst_(dst), size_(size), stream_(s) {}
  run_copies(const run_copies&) = delete;
  run_copies& operator=(const run_copies&) = delete;

  void operator()(tensor_index i, tensor_index o, tensor_index n) {
    if constexpr (Space::copies_at_once) {
      const auto z = static_cast<std::ptrdiff_t>(size_);
      std::copy(src_ + i * z, src_ + (i + n) * z, dst_ + o * z);
    } else {
      if (n == 0) return;
      if (rows_ > 0 && n == width_ && extends(i, o)) {
        if (rows_ == 1) src_pitch_ = i - last_src_, dst_pitch_ = o - last_dst_;
        last_src_ = i, last_dst_ = o, ++rows_;
        return;
      }
      flush();
      first_src_ = last_src_ = i, first_dst_ = last_dst_ = o, width_ = n, rows_ = 1;
    }
  }
  void flush() {
    if (rows_ == 0) return;
    const auto z = [this](tensor_index v) { return static_cast<std::size_t>(v) * size_; };
    Space::copy_rows(dst_ + z(first_dst_), z(rows_ > 1 ? dst_pitch_ : width_), src_ + z(first_src_),
                     z(rows_ > 1 ? src_pitch_ : width_), z(width_), static_cast<std::size_t>(rows_), stream_);
    rows_ = 0;
  }

 private:
  // The run is the next row of the pending ones: the second sets the pitches (at least the
  // width on both sides: rows do not overlap), later ones keep them.
  bool extends(tensor_index i, tensor_index o) const {
    if (rows_ == 1) return i - last_src_ >= width_ && o - last_dst_ >= width_;
    return i - last_src_ == src_pitch_ && o - last_dst_ == dst_pitch_;
  }
};

/// The buffers of a redistribute call in memory Space, elements of `size` bytes: the block
/// before and after a step, what a collective sends and receives (Space's scratch of bytes),
/// a step's group and counts (host vectors); the call's stream. On the host, the calling
/// thread's, reused (a call must not re-enter redistribute: none does); on a device, the call's.
template <class Space>
struct step_buffers {
  using space = Space;
  using stream_type = typename Space::stream_type;
  using scratch = typename Space::template scratch<std::byte>;
  stream_type stream;
  std::size_t size = 0;
  scratch now, next, send, recv;
  group_counts counts;

  explicit step_buffers(stream_type s = {}) : stream(s), now(s), next(s), send(s), recv(s) {}
  /// s resized to n elements (contents not kept); its data.
  std::byte* resize(scratch& s, std::size_t n) {
    s.resize(n * size);
    return s.data();
  }
  /// After a call: a host buffer over 64 MiB is given back (a large tensor's blocks are not kept).
  void release_large() noexcept {
    for (auto* v : {&now, &next, &send, &recv}) v->release_large();
  }
  /// n elements from src to dst, on the call's stream.
  void copy(std::byte* dst, const std::byte* src, std::size_t n) {
    if (n) Space::copy_rows(dst, n * size, src, n * size, n * size, 1, stream);
  }
  /// n zero elements at p (zero bits: every type a collective reduces), on the call's stream.
  void zero(std::byte* p, std::size_t n) { Space::zero(p, n * size, stream); }
  /// A copier of runs from src to dst, on the call's stream.
  run_copies<Space> runs(const std::byte* src, std::byte* dst) const { return {src, dst, size, stream}; }
};

/// f(b) with the buffers of a redistribute call in Space on stream s, elements of `size` bytes:
/// the thread's on the host (large ones released after), the call's on a device.
template <class Space, class F>
void with_step_buffers(typename Space::stream_type s, std::size_t size, F&& f) {
  if constexpr (std::is_same_v<Space, host_memory>) {
    thread_local step_buffers<Space> b;
    b.size = size;
    f(b);
    b.release_large();
  } else {
    step_buffers<Space> b(s);
    b.size = size;
    f(b);
  }
}

}  // namespace devmesh::detail
