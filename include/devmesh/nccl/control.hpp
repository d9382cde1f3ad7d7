// devmesh/nccl/control.hpp: devmesh's control plane on NCCL: the host-memory steps devmesh
// takes on its own behalf (consistency checks, agreements, a mesh's private duplicate). Over
// the host channel when the communicator has one (the MPI world it was bootstrapped from:
// bounded, no device memory), else through a temporary device buffer on the default stream.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "../runtime/deadline.hpp"
#include "device_buffer.hpp"
#include "enqueue.hpp"
#include "error.hpp"
#include "handle.hpp"

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

/// n bytes from every rank, gathered in rank order into `out` (host memory): over the host
/// channel (bounded by d), else an ncclAllGather.
inline void all_gather_bytes(const comm_handle& h, const void* in, void* out, std::size_t n, const deadline& d) {
  comm_state& s = h.use("all_gather_bytes");
  if (s.channel) return s.channel->all_gather_bytes(in, out, n, d);
  const std::size_t total = n * static_cast<std::size_t>(s.size);
  through_device(s, "ncclAllGather (all_gather_bytes)", total + n, total, in, n, out, total,
                 [&](unsigned char* b) { return ncclAllGather(b + total, b, n, ncclUint8, s.comm, nullptr); });
}

/// Element-wise maximum of n words over every rank, in place: over the host channel
/// (bounded by d), else an ncclAllReduce (bounded by the options' timeout while enqueueing).
inline void all_reduce_max(const comm_handle& h, std::uint64_t* words, std::size_t n, const deadline& d) {
  comm_state& s = h.use("all_reduce_max");
  if (s.channel) return s.channel->all_reduce_max(words, n, d);
  const std::size_t bytes = n * sizeof(std::uint64_t);
  through_device(s, "ncclAllReduce (all_reduce_max)", bytes, 0, words, bytes, words, bytes,
                 [&](unsigned char* b) { return ncclAllReduce(b, b, n, ncclUint64, ncclMax, s.comm, nullptr); });
}

/// The watchdog's roll call over h's host channel (host_channel.hpp): why it cannot be held
/// ("" when it can), a note to rank `to`, the next note received.
inline std::string notes_unavailable(const comm_handle& h) {
  const host_channel* ch = h.channel();
  if (!ch) return "the communicator has no host channel (world_from_env)";
  const char* why = ch->notes_unavailable();
  return why ? why : "";
}
inline bool post_note(const comm_handle& h, int to, const std::uint64_t (&words)[2]) noexcept {
  const host_channel* ch = h.channel();
  return ch && ch->post_note(to, words);
}
inline bool take_note(const comm_handle& h, int& from, std::uint64_t (&words)[2]) noexcept {
  const host_channel* ch = h.channel();
  return ch && ch->take_note(from, words);
}

/// A borrowed alias of h's ncclComm_t (a new NCCL communicator would cost GPU memory) with a
/// private copy of the host channel (bounded by d), so that each mesh's control steps are
/// its own. Without a host channel the alias shares h's NCCL traffic.
inline comm_handle duplicate(const comm_handle& h, const deadline& d) {
  comm_state& s = h.use("duplicate");
  return comm_handle(s.comm, s.opts, false, s.channel ? s.channel->duplicate(d) : nullptr);
}

}  // namespace devmesh::nccl::detail
