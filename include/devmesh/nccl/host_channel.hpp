// devmesh/nccl/host_channel.hpp: the host-memory side channel of an NCCL world.
//
// A world bootstrapped from MPI keeps a duplicate of the MPI communicator as its host
// channel. devmesh uses it for two things NCCL cannot do well: the mesh consistency
// check (a small host all-gather, no device buffer) and *outcome agreement* after init
// and split: every rank learns which ranks failed or timed out and throws the same
// error, instead of some ranks throwing and the others waiting for them. Compiled once
// (nccl/impl/host_channel.ipp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "../core/config.hpp"
#include "../runtime/deadline.hpp"
#include "../runtime/text_ref.hpp"
#include "wait.hpp"

namespace devmesh::nccl::detail {

/// Host collectives over the ranks of a communicator, in its rank order, each bounded by
/// a deadline (devmesh::timeout_error past it).
class host_channel {
 public:
  virtual ~host_channel() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void all_gather_bytes(const void* in, void* out, std::size_t n, const deadline& d) const = 0;
  virtual void all_reduce_max(std::uint64_t* words, std::size_t n, const deadline& d) const = 0;
  /// The channel of a split child (same color and key as the NCCL split; nullptr for
  /// dm::no_color). Collective over this channel.
  virtual std::shared_ptr<const host_channel> split(int color, int key) const = 0;
  /// A private copy of this channel (bounded): each mesh's control steps get their own.
  virtual std::shared_ptr<const host_channel> duplicate(const deadline& d) const = 0;
  /// The watchdog's roll call (runtime/stream_watchdog.hpp), from the watchdog's thread while
  /// the program's threads use the channel: why notes cannot be sent here (nullptr: they can),
  /// a note of two words to rank `to` (fire and forget), the next note received (false: none).
  /// Never block. A channel without notes says so.
  virtual const char* notes_unavailable() const noexcept { return "the host channel holds no roll call"; }
  virtual bool post_note(int, const std::uint64_t (&)[2]) const noexcept { return false; }
  virtual bool take_note(int&, std::uint64_t (&)[2]) const noexcept { return false; }
};

/// Outcome of one rank's part of a collective NCCL operation.
enum class outcome : int { ok = 0, failed = 1, timed_out = 2, skipped = 3 };

struct rank_outcome {
  int what = 0;  ///< outcome
  int code = 0;  ///< ncclResult_t when failed; -1: device selection failed
};

/// This rank's outcome of a step that waited for NCCL.
DEVMESH_DECL rank_outcome outcome_of(const wait_result& w);

/// A rank_outcome's code as text: an ncclResult_t's name, or "device selection".
DEVMESH_DECL const char* outcome_code_name(int c);

/// Gathers every rank's outcome over `ch` and returns "" when all are ok, else a summary
/// such as "failed on rank(s) 1 [ncclInternalError], timed out on rank(s) 0, 2, 3".
/// `code_name` turns a code into text. Without a channel, summarises the local outcome.
DEVMESH_DECL std::string agree(const host_channel* ch, int my_rank, rank_outcome mine, const char* (*code_name)(int));

/// The end of a collective step (bootstrap, init, split): every rank learns every rank's
/// outcome over `ch` (without a channel, only its own) and, if any rank failed, `drop()`
/// aborts what the step made here and every rank throws the same comm_error:
/// "devmesh: <step> <who failed how>; here: <local><consequence>".
DEVMESH_DECL void agree_or_throw(const host_channel* ch, int my_rank, rank_outcome mine, const std::string& step,
                                 const std::string& local, const char* consequence,
                                 devmesh::detail::call_ref<void> drop);

}  // namespace devmesh::nccl::detail

#if DEVMESH_HEADER_ONLY
#include "impl/host_channel.ipp"
#endif
