// devmesh/runtime/flight_trace.hpp: reading the ranks' flight records back, and finding where
// they diverge (PyTorch's fr_trace): for every dim's group, the first call number that some
// ranks of the group made and others did not, or that ended differently. What
// examples/11_flight_record --analyze <dir> prints. Opt-in: not part of devmesh.hpp. Compiled
// once (runtime/impl/flight_trace.ipp: the files, <filesystem> and the streams stay there).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../core/config.hpp"

namespace devmesh {

/// One rank's dump, read back: flight_record's fields, the entries' text kept in the record.
struct flight_dump {
  int rank = -1;
  std::string mesh;
  struct channel {
    std::string name;
    std::uint64_t calls = 0;
    std::vector<int> world_ranks;
  };
  struct entry {
    std::uint64_t id = 0, seq = 0, count = 0;
    std::string channel, what, state, type;
    std::int64_t start_ns = 0, end_ns = 0;
  };
  std::vector<channel> channels;
  std::vector<entry> entries;
};

/// Reads a dump written by DEVMESH_FLIGHT_RECORD or device_mesh::dump_flight_record; throws
/// mesh_error naming the file and line when it is not one.
DEVMESH_DECL flight_dump read_flight_dump(const std::string& path);

/// Every rank's dump in `dir` (the files devmesh-fr.* that DEVMESH_FLIGHT_RECORD=DIR or
/// dump_flight_record(dir) wrote), read back and ordered by rank.
DEVMESH_DECL std::vector<flight_dump> read_flight_dumps(const std::string& dir);

/// Where the ranks of one group diverge: call number `seq` on channel `channel`.
struct flight_divergence {
  std::string channel;            // the dim ("mesh": devmesh's own steps)
  std::vector<int> group;         // its world ranks
  std::uint64_t seq = 0;          // the first call number where they differ
  std::string what;               // that call, as the ranks that made it recorded it
  std::vector<int> issued;        // ranks that made call #seq
  std::vector<int> missing;       // ranks of the group that never made it
  std::vector<int> unfinished;    // ranks whose call #seq did not complete (state)
  std::vector<int> no_record;     // ranks of the group without a dump
};

/// "on dim 'tp' (world ranks 0-3): call #1, all_reduce (float x 4): made by rank 1, never by
/// ranks 0,2-3; not completed on rank 1 (timed_out)"
DEVMESH_DECL std::string to_string(const flight_divergence& v);

/// Every group where the ranks' dumps diverge, over all channels of all dumps (one root mesh).
DEVMESH_DECL std::vector<flight_divergence> analyze(const std::vector<flight_dump>& dumps);

}  // namespace devmesh

#if DEVMESH_HEADER_ONLY
#include "impl/flight_trace.ipp"
#endif
