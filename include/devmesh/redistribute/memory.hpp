// devmesh/redistribute/memory.hpp: where redistribute's blocks live and how its steps move
// elements there. A backend on host memory (stream_type no_stream: MPI) gets host_memory;
// a backend on device memory names its own as `Comm::memory_space` (NCCL:
// nccl/device_memory.hpp), with the same members:
//
//   using stream_type;                          the backend's
//   static constexpr bool copies_at_once;       true: run_copies copies each run when given
//                                               (host); false: merges runs into copy_rows calls
//   template <class T> class scratch;           scratch(stream); resize(n) (contents not kept),
//                                               data(), size(), swap(), release_large() (give
//                                               back a large buffer kept by the thread, or
//                                               nothing); freed in stream order
//   static void copy_rows(T* dst, size_t dst_pitch, const T* src, size_t src_pitch,
//                         size_t width, size_t rows, stream_type);   pitches and width in elements
//   static void zero(T* p, size_t n, stream_type);
//   static void check_usable(const char* call);  throws where the steps cannot run (an NCCL group)
//
// The executor moves elements as bytes (std::byte: T above), whatever the call's element type
// (impl/buffers.hpp); its steps describe their copies as runs (sharding/block_overlap.hpp:
// for_each_shared_run), which run_copies (impl/buffers.hpp) turns into copy_rows calls: runs of
// equal length at constant strides are one call (a block of a 2-D tensor: one
// cudaMemcpy2DAsync), so a device step issues a few copies, not one per row. On the host each
// run is copied at once.
#pragma once
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "../runtime/backend.hpp"
#include "../sharding/extents.hpp"

namespace devmesh::detail {

/// The host's: std::vector scratch, std::copy.
struct host_memory {
  using stream_type = no_stream;
  static constexpr bool copies_at_once = true;

  template <class T>
  class scratch {
    std::vector<T> v_;

   public:
    scratch() = default;
    explicit scratch(no_stream) {}
    void resize(std::size_t n) { v_.resize(n); }
    T* data() noexcept { return v_.data(); }
    const T* data() const noexcept { return v_.data(); }
    std::size_t size() const noexcept { return v_.size(); }
    void swap(scratch& o) noexcept { v_.swap(o.v_); }
    /// A buffer over 64 MiB is given back (a large tensor's blocks are not kept by the thread).
    void release_large() noexcept {
      if (v_.capacity() * sizeof(T) > (std::size_t{64} << 20)) std::vector<T>().swap(v_);
    }
  };

  template <class T>
  static void copy_rows(T* dst, std::size_t dst_pitch, const T* src, std::size_t src_pitch, std::size_t width,
                        std::size_t rows, no_stream) {
    for (std::size_t r = 0; r < rows; ++r) {
      const T* row = src + r * src_pitch;
      std::copy(row, row + width, dst + r * dst_pitch);
    }
  }
  template <class T>
  static void zero(T* p, std::size_t n, no_stream) {
    std::fill_n(p, n, T{});
  }
  static void check_usable(const char*) noexcept {}
};

template <class Comm>
struct memory_space_of {
  using type = host_memory;
};
template <class Comm>
  requires requires { typename Comm::memory_space; }
struct memory_space_of<Comm> {
  using type = typename Comm::memory_space;
};
/// The memory a backend's redistribute works on: Comm::memory_space, else the host's.
template <class Comm>
using memory_space_t = typename memory_space_of<Comm>::type;

/// A memory space redistribute's steps can use on a backend with stream type S.
template <class Space, class S>
concept step_memory = std::is_same_v<typename Space::stream_type, S> &&
                      std::is_same_v<decltype(Space::copies_at_once), const bool> &&
                      requires(typename Space::template scratch<float>& b, float* p, const float* q, S s) {
                        Space::copy_rows(p, std::size_t{}, q, std::size_t{}, std::size_t{}, std::size_t{}, s);
                        Space::zero(p, std::size_t{}, s);
                        Space::check_usable("");
                        b.resize(std::size_t{});
                        { b.data() } -> std::same_as<float*>;
                        { b.size() } -> std::same_as<std::size_t>;
                        b.swap(b);
                        b.release_large();
                      };

}  // namespace devmesh::detail
