// devmesh/nccl/impl/control.ipp: control.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "../control.hpp"
#include "../device_buffer.hpp"
#include "../enqueue.hpp"
#include "../error.hpp"

namespace devmesh::nccl::detail {

/// Host bytes through a device buffer of `size` bytes: n_in bytes of `in` copied to offset
/// `in_at`, enqueue(buffer) on the default stream (its result settled as enqueued() does),
/// then the first n_out bytes copied back to `out`. `call` names the NCCL call in messages.
template <class Enqueue>
void through_device(comm_state& s, const char* call, std::size_t size, std::size_t in_at, const void* in,
                    std::size_t n_in, void* out, std::size_t n_out, Enqueue enqueue) {
  device_buffer buf(size);
  auto* base = static_cast<unsigned char*>(buf.ptr);
  check_cuda(cudaMemcpy(base + in_at, in, n_in, cudaMemcpyHostToDevice), "cudaMemcpy (control step)");
  enqueued(s, call, enqueue(base));
  check_cuda(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize (control step)");
  check_cuda(cudaMemcpy(out, base, n_out, cudaMemcpyDeviceToHost), "cudaMemcpy (control step)");
}

DEVMESH_DECL void all_gather_bytes(const comm_handle& h, const void* in, void* out, std::size_t n, const deadline& d) {
  comm_state& s = h.use("all_gather_bytes");
  if (s.channel) return s.channel->all_gather_bytes(in, out, n, d);
  const std::size_t total = n * static_cast<std::size_t>(s.size);
  through_device(s, "ncclAllGather (all_gather_bytes)", total + n, total, in, n, out, total,
                 [&](unsigned char* b) { return ncclAllGather(b + total, b, n, ncclUint8, s.comm, nullptr); });
}

DEVMESH_DECL void all_reduce_max(const comm_handle& h, std::uint64_t* words, std::size_t n, const deadline& d) {
  comm_state& s = h.use("all_reduce_max");
  if (s.channel) return s.channel->all_reduce_max(words, n, d);
  const std::size_t bytes = n * sizeof(std::uint64_t);
  through_device(s, "ncclAllReduce (all_reduce_max)", bytes, 0, words, bytes, words, bytes,
                 [&](unsigned char* b) { return ncclAllReduce(b, b, n, ncclUint64, ncclMax, s.comm, nullptr); });
}

DEVMESH_DECL std::string notes_unavailable(const comm_handle& h) {
  const host_channel* ch = h.channel();
  if (!ch) return "the communicator has no host channel (world_from_env)";
  const char* why = ch->notes_unavailable();
  return why ? why : "";
}

DEVMESH_DECL bool post_note(const comm_handle& h, int to, const std::uint64_t (&words)[2]) noexcept {
  const host_channel* ch = h.channel();
  return ch && ch->post_note(to, words);
}

DEVMESH_DECL bool take_note(const comm_handle& h, int& from, std::uint64_t (&words)[2]) noexcept {
  const host_channel* ch = h.channel();
  return ch && ch->take_note(from, words);
}

DEVMESH_DECL comm_handle duplicate(const comm_handle& h, const deadline& d) {
  comm_state& s = h.use("duplicate");
  return comm_handle(s.comm, s.opts, false, s.channel ? s.channel->duplicate(d) : nullptr);
}

}  // namespace devmesh::nccl::detail
