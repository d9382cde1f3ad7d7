// tests/compile_fail/support/declared_comm.hpp: a communicator backend that is only
// declared (it models devmesh::communicator; nothing is defined, nothing runs), so that the
// compile-fail cases of device_mesh calls need no MPI or NCCL headers.
#pragma once
#include <cstddef>
#include <cstdint>

#include <devmesh/runtime/init.hpp>

struct declared_comm {
  using native_type = int;
  struct options_type {};
  using stream_type = devmesh::no_stream;
  declared_comm() = default;
  declared_comm(declared_comm&&) = default;
  declared_comm& operator=(declared_comm&&) = default;
  bool valid() const;
  int rank() const;
  int size() const;
  int native() const;
  declared_comm split(int color, int key, const options_type&) const;
  void all_gather_bytes(const void*, void*, std::size_t, const devmesh::deadline&) const;
  void all_reduce_max(std::uint64_t*, std::size_t, const devmesh::deadline&) const;
  declared_comm duplicate(const devmesh::deadline&) const;
  void abort() noexcept;
  static const char* backend_name();
  static void group_start();
  static void group_end();
  template <class T>
  static constexpr bool carries = devmesh::known_element<T>;
  void all_reduce(const void*, void*, std::size_t, devmesh::element_type, devmesh::op, stream_type) const;
  void reduce(const void*, void*, std::size_t, devmesh::element_type, devmesh::op, int, stream_type) const;
  void broadcast(void*, std::size_t, devmesh::element_type, int, stream_type) const;
  void all_gather(const void*, void*, std::size_t, devmesh::element_type, stream_type) const;
  void reduce_scatter(const void*, void*, std::size_t, devmesh::element_type, devmesh::op, stream_type) const;
  void all_to_all(const void*, void*, std::size_t, devmesh::element_type, stream_type) const;
  void barrier(stream_type) const;
  void sendrecv(const void*, std::size_t, int, void*, std::size_t, int, devmesh::element_type, stream_type) const;
};
static_assert(devmesh::communicator<declared_comm>);
