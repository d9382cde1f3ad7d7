// devmesh/runtime/flight_recorder.hpp: the last collectives of a root mesh, kept for after
// the fact (PyTorch's flight recorder): for each, the dim it ran on, the call, element type
// and count, its number on that dim, start and end times, and how it ended.
//
// A ring of a fixed number of entries per root mesh (options.flight_record_entries,
// DEVMESH_FLIGHT_RECORD_ENTRIES; 0 turns it off), allocated once at init: recording a call
// allocates nothing and costs two clock reads and an atomic increment (bench/dispatch.cpp).
// mesh.flight_record() prints it; with DEVMESH_FLIGHT_RECORD=DIR, a watchdog time-out or
// a devmesh step's deadline writes it to DIR/devmesh-fr.meshI.rankR.txt, which
// devmesh/runtime/flight_trace.hpp (examples/11_flight_record --analyze) reads back.
// Recording is inline (start, finish: every collective's path); the rest is compiled once
// (runtime/impl/flight_recorder.ipp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "../core/config.hpp"
#include "deadline.hpp"

namespace devmesh {

/// How a recorded call ended (so far).
enum class call_state : std::uint8_t {
  issued,     // started, not returned (in flight, or its thread is stuck in it)
  enqueued,   // returned, work on a stream (NCCL, no watchdog: completion is not observed)
  completed,  // done on this rank
  failed,     // threw
  timed_out,  // the watchdog or the step's deadline ended it
};

/// "issued", "enqueued", "completed", "failed", "timed_out".
constexpr const char* state_name(call_state s) {
  switch (s) {
    case call_state::issued: return "issued";
    case call_state::enqueued: return "enqueued";
    case call_state::completed: return "completed";
    case call_state::failed: return "failed";
    case call_state::timed_out: return "timed_out";
  }
  return "?";
}

namespace detail {
/// What calls are counted on: a dim's communicator, or the mesh's own steps ("mesh"). Its
/// name, this rank's group in world ranks, and how many calls this rank made on it (each
/// channel is used by one thread at a time: the runtime's threading rules).
struct channel {
  std::string name;
  std::vector<int> world_ranks;
  mutable std::uint64_t calls = 0;
};

}  // namespace detail

/// One recorded call.
struct flight_entry {
  std::uint64_t id = 0;   // this root's n-th recorded call, from 1 (0: an empty slot)
  std::uint64_t seq = 0;  // its number on its channel (dim), from 1, as this rank counts
  const detail::channel* on = nullptr;  // the root's channel: valid while a handle of the root lives
  std::string_view what;  // "all_reduce", "flatten" (static storage)
  std::string_view type;  // the element type ("float"); empty for devmesh's steps
  std::uint64_t count = 0;
  std::int64_t start_ns = 0, end_ns = 0;  // steady clock (ns); end 0 while issued
  call_state state = call_state::issued;
};

namespace detail {

/// A size from the environment variable `var` (a whole number >= 0), else `fallback`.
DEVMESH_DECL std::size_t count_from_env(const char* var, std::size_t fallback);

}  // namespace detail

/// The default number of entries of a root mesh's flight record (about 80 bytes each).
inline constexpr std::size_t default_flight_record_entries = 1024;

/// A rank's flight record of one root mesh, as mesh.flight_record() returns it: printable
/// (to_string, <<), and what the dump file holds.
struct flight_record {
  int rank = -1;        // world rank
  std::string mesh;     // the root mesh, as to_string prints it
  std::vector<detail::channel> channels;  // every channel of the root (copies: counts as taken)
  std::vector<flight_entry> entries;      // oldest first; `on`: the root's live channels
  std::uint64_t recorded = 0;             // calls recorded in all (entries keeps the last)
  std::int64_t steady_now_ns = 0;         // when it was taken
};

/// The dump format (one record per file), line by line: "devmesh-flight-record 1"; "rank R
/// recorded N now T" (T: steady-clock ns); "mesh TEXT"; one "channel NAME CALLS RANKS" per
/// channel (RANKS: world ranks, comma-separated); one "entry ID CHANNEL SEQ WHAT STATE COUNT
/// START END TYPE" per entry (TYPE, last, may hold spaces; "-" for none). Human-readable too:
/// what to_string prints.
DEVMESH_DECL std::string to_string(const flight_record& r);

/// Streams to_string(r).
template <class Char, class Traits>
std::basic_ostream<Char, Traits>& operator<<(std::basic_ostream<Char, Traits>& os, const flight_record& r) {
  return os << to_string(r);
}

namespace detail {
/// Writes r to DIR/devmesh-fr.meshI.rankR.txt; returns the path, or "" when it could not (a
/// dump is a diagnostic: it never throws over the error it documents).
DEVMESH_DECL std::string write_flight_record(const flight_record& r, const std::string& dir, int mesh_index) noexcept;
}  // namespace detail

}  // namespace devmesh

#if DEVMESH_HEADER_ONLY
#include "impl/flight_recorder.ipp"
#endif
