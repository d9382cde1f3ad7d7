// devmesh/mpi/control.hpp: devmesh's control plane on MPI: the steps devmesh takes on its own
// behalf (consistency checks, agreements, a mesh's private duplicate), each a non-blocking
// MPI call polled until a deadline (runtime/deadline.hpp) instead of a call that can hang.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "native.hpp"

#include "../runtime/deadline.hpp"
#include "error.hpp"
#include "handle.hpp"

namespace devmesh::mpi::detail {

/// Buffers and requests of control steps that timed out: MPI may still write into them, so
/// they stay alive (and reachable) until the process ends.
template <class = void>
void park(std::unique_ptr<unsigned char[]> buf, MPI_Request req) {
  static std::mutex m;
  static std::vector<std::pair<std::unique_ptr<unsigned char[]>, MPI_Request>> parked;
  std::lock_guard lock(m);
  parked.emplace_back(std::move(buf), req);
}

/// Starts a non-blocking call on a heap buffer (start(buf, &request)) and polls it until
/// done or the deadline, then finish(buf). On time-out the request and its buffer are left
/// to MPI (MPI may still complete them: they are parked, never freed), `h` is marked
/// unusable, and timeout_error is thrown.
template <class Start, class Finish>
void bounded(const comm_handle& h, const char* call, const deadline& d, std::unique_ptr<unsigned char[]> buf,
             Start start, Finish finish) {
  MPI_Request req = MPI_REQUEST_NULL;
  check(start(buf.get(), &req), call);
  int done = 0;
  int rc = MPI_SUCCESS;
  devmesh::detail::poll_until(d, [&] {
    if (rc == MPI_SUCCESS && !done) rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    return done != 0 || rc != MPI_SUCCESS;
  });
  check(rc, call);
  if (!done) {
    h.mark_unusable(std::string(call) + " timed out after " + d.describe());
    park(std::move(buf), req);
    throw timeout_error("devmesh: mpi: " + std::string(call) + " on a communicator of " + std::to_string(h.size()) +
                        " ranks: not every rank arrived within " + d.describe() +
                        " (a rank skipped this step, is blocked elsewhere, or died)");
  }
  finish(buf.get());
}

/// n bytes from every rank of h, in rank order, into out (MPI_Iallgather, bounded).
template <class = void>
void all_gather_bytes(const comm_handle& h, const void* in, void* out, std::size_t n, const deadline& d) {
  const MPI_Comm comm = h.use("all_gather_bytes");
  const int c = int_count("all_gather_bytes", n);
  const std::size_t total = n * static_cast<std::size_t>(h.size());
  auto buf = std::make_unique<unsigned char[]>(n + total);  // MPI owns it until completion
  std::memcpy(buf.get(), in, n);
  bounded(h, "MPI_Iallgather", d, std::move(buf), [&](unsigned char* b, MPI_Request* r) {
    return MPI_Iallgather(b, c, MPI_BYTE, b + n, c, MPI_BYTE, comm, r);
  }, [&](const unsigned char* b) { std::memcpy(out, b + n, total); });
}

/// Element-wise maximum of n words over every rank of h, in place (MPI_Iallreduce, bounded).
template <class = void>
void all_reduce_max(const comm_handle& h, std::uint64_t* words, std::size_t n, const deadline& d) {
  const MPI_Comm comm = h.use("all_reduce_max");
  const int c = int_count("all_reduce_max", n);
  auto buf = std::make_unique<unsigned char[]>(n * sizeof(std::uint64_t));
  std::memcpy(buf.get(), words, n * sizeof(std::uint64_t));
  bounded(h, "MPI_Iallreduce", d, std::move(buf), [&](unsigned char* b, MPI_Request* r) {
    return MPI_Iallreduce(MPI_IN_PLACE, b, c, MPI_UINT64_T, MPI_MAX, comm, r);
  }, [&](const unsigned char* b) { std::memcpy(words, b, n * sizeof(std::uint64_t)); });
}

/// MPI_Comm_idup of h, bounded, running `meanwhile()` once while it is in flight: local work
/// hidden behind the communication. The copy owns its MPI_Comm and returns errors. An
/// exception from meanwhile is rethrown once the idup is done (the request is never left
/// behind), after the copy is adopted, so that it is freed.
template <class Meanwhile>
comm_handle duplicate(const comm_handle& h, const deadline& d, Meanwhile&& meanwhile) {
  const MPI_Comm comm = h.use("duplicate");
  auto out = std::make_unique<unsigned char[]>(sizeof(MPI_Comm));  // MPI writes the handle here
  MPI_Comm* dup = reinterpret_cast<MPI_Comm*>(out.get());
  *dup = MPI_COMM_NULL;
  MPI_Comm result = MPI_COMM_NULL;
  std::exception_ptr failed;
  bounded(h, "MPI_Comm_idup", d, std::move(out), [&](unsigned char*, MPI_Request* r) {
    const int rc = MPI_Comm_idup(comm, dup, r);
    if (rc == MPI_SUCCESS) try {
        meanwhile();
      } catch (...) {
        failed = std::current_exception();
      }
    return rc;
  }, [&](const unsigned char* b) { std::memcpy(&result, b, sizeof result); });
  comm_handle c = comm_handle::adopt(result);
  if (failed) std::rethrow_exception(failed);
  return c;
}

}  // namespace devmesh::mpi::detail
