// devmesh/nccl/mpi_bootstrap.hpp: dm::nccl::world(mpi_world), the NCCL world of an MPI job.
//
// Steps, each ending in an agreement over MPI so every rank throws the same error and no
// rank is left waiting: (1) select the GPU from the launcher's local rank; rank 0 (or the
// `roots` root ranks) calls ncclGetUniqueId and broadcasts the id over MPI; (2)
// ncclCommInitRankConfig (or ncclCommInitRankScalable), non-blocking by default and bounded
// by options::timeout. The communicator keeps a duplicate of the MPI communicator as its
// host channel for the mesh consistency check.
#pragma once
#include <algorithm>
#include <concepts>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nccl.h>

#include "../mpi/communicator.hpp"
#include "../mpi/environment.hpp"
#include "../mpi/native.hpp"
#include "bootstrap.hpp"

namespace devmesh::nccl {
namespace detail {

/// A private duplicate of the bootstrap MPI communicator (a dm::mpi::communicator: errors
/// returned, control steps bounded, nothing freed after MPI_Finalize).
class mpi_channel final : public host_channel {
 public:
  static constexpr int note_tag = 0x6477;  // "dw": the NCCL watchdog's roll call
  explicit mpi_channel(MPI_Comm parent) : comm_(devmesh::mpi::communicator::borrow(parent).duplicate()) {}
  explicit mpi_channel(devmesh::mpi::communicator c) : comm_(std::move(c)) {}
  int rank() const override { return comm_.rank(); }
  int size() const override { return comm_.size(); }
  void all_gather_bytes(const void* in, void* out, std::size_t n, const deadline& d) const override {
    comm_.all_gather_bytes(in, out, n, d);
  }
  void all_reduce_max(std::uint64_t* words, std::size_t n, const deadline& d) const override {
    comm_.all_reduce_max(words, n, d);
  }
  std::shared_ptr<const host_channel> split(int color, int key) const override {
    devmesh::mpi::communicator c = comm_.split(color, key);
    if (!c.valid()) return nullptr;
    return std::make_shared<const mpi_channel>(std::move(c));
  }
  std::shared_ptr<const host_channel> duplicate(const deadline& d) const override {
    return std::make_shared<const mpi_channel>(comm_.duplicate(d));
  }
  void broadcast_bytes(void* buf, std::size_t n, int root) const {
    comm_.broadcast(static_cast<unsigned char*>(buf), n, root);
  }
  /// The roll call's notes: point-to-point with a tag of devmesh's own (no collective matches
  /// it), from the watchdog's thread: MPI_THREAD_MULTIPLE is needed.
  const char* notes_unavailable() const noexcept override {
    if (devmesh::mpi::detail::mpi_unusable()) return "MPI is not initialized or already finalized";
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE)
      return "the host channel's MPI does not provide MPI_THREAD_MULTIPLE, which the watchdog's thread needs to use it";
    return nullptr;
  }
  bool post_note(int to, const std::uint64_t (&words)[2]) const noexcept override {
    if (notes_unavailable()) return false;
    try {
      // Fire and forget: the note outlives the send (kept, two words a note; notes are rare).
      static std::mutex m;
      static std::vector<std::unique_ptr<std::uint64_t[]>> kept;
      std::lock_guard lock(m);
      kept.push_back(std::make_unique<std::uint64_t[]>(2));
      kept.back()[0] = words[0], kept.back()[1] = words[1];
      MPI_Request req = MPI_REQUEST_NULL;
      if (MPI_Isend(kept.back().get(), 2, MPI_UINT64_T, to, note_tag, comm_.native(), &req) != MPI_SUCCESS) return false;
      MPI_Request_free(&req);
      return true;
    } catch (...) {
      return false;
    }
  }
  bool take_note(int& from, std::uint64_t (&words)[2]) const noexcept override {
    if (notes_unavailable()) return false;
    int flag = 0;
    MPI_Status st;
    if (MPI_Iprobe(MPI_ANY_SOURCE, note_tag, comm_.native(), &flag, &st) != MPI_SUCCESS || !flag) return false;
    if (MPI_Recv(words, 2, MPI_UINT64_T, st.MPI_SOURCE, note_tag, comm_.native(), MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return false;
    from = st.MPI_SOURCE;
    return true;
  }

 private:
  devmesh::mpi::communicator comm_;
};

}  // namespace detail

/// Bootstrap settings of world().
struct bootstrap_options {
  device_choice device{};
  /// 1: ncclCommInitRankConfig with rank 0's id. k > 1: ncclCommInitRankScalable with k ids
  /// made by ranks floor(i * size / k), which spreads NCCL's bootstrap over k roots (for
  /// worlds of many thousands of ranks).
  int roots = 1;
};

/// The NCCL world over the ranks of the MPI communicator `mpi_comm` (usually
/// MPI_COMM_WORLD), in its rank order. Collective over `mpi_comm`.
inline communicator world(MPI_Comm mpi_comm, const options& o = {}, const bootstrap_options& b = {}) {
  auto ch = std::make_shared<const detail::mpi_channel>(mpi_comm);
  const int rank = ch->rank(), size = ch->size();
  const int roots = std::clamp(b.roots, 1, size);
  detail::rank_outcome mine{};
  std::string local;
  try {
    select_device(b.device);
  } catch (const comm_error& e) {
    mine = {static_cast<int>(detail::outcome::failed), -1};
    local = e.what();
  }
  detail::unique_ids ids(static_cast<std::size_t>(roots));
  for (int i = 0; i < roots; ++i) {
    const int root = static_cast<int>(static_cast<long long>(i) * size / roots);
    if (rank == root && mine.what == 0) {
      if (ncclResult_t r = ncclGetUniqueId(&ids[static_cast<std::size_t>(i)]); r != ncclSuccess) {
        mine = {static_cast<int>(detail::outcome::failed), static_cast<int>(r)};
        local = "ncclGetUniqueId: " + detail::describe(r, nullptr);
      }
    }
    // Every rank broadcasts, failed or not, so nobody waits; the agreement below decides.
    ch->broadcast_bytes(&ids[static_cast<std::size_t>(i)], sizeof(ncclUniqueId), root);
  }
  detail::agree_or_throw(ch.get(), rank, mine, "nccl::world: bootstrap", local, "", [] {});
  return detail::init_rank(size, rank, ids, o, std::move(ch), "nccl::world");
}

/// world() from a devmesh MPI communicator (dm::mpi::communicator, or anything whose
/// native() is an MPI_Comm).
template <class MpiCommunicator>
  requires requires(const MpiCommunicator& c) {
    { c.native() } -> std::convertible_to<MPI_Comm>;
  }
communicator world(const MpiCommunicator& mpi_world, const options& o = {}, const bootstrap_options& b = {}) {
  return world(static_cast<MPI_Comm>(mpi_world.native()), o, b);
}

}  // namespace devmesh::nccl
