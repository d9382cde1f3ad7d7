// devmesh/runtime/impl/mesh_state.hpp: the state every handle derived from one init_device_mesh
// or from_comms call shares: what the handles read directly (root_state.hpp: where this rank
// sits, the options, the flags), and what only the compiled runtime sees: the world held, the
// private control communicator, the communicator cache, the flight recorder and the watchdog.
#pragma once
#include <cstdlib>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "../../core/diagnostics.hpp"
#include "../../core/print.hpp"
#include "../backend.hpp"
#include "comm_cache.hpp"
#include "../deadline.hpp"
#include "../flight_recorder.hpp"
#include "recorder.hpp"
#include "../layout_view.hpp"
#include "../options.hpp"
#include "../rank_placement.hpp"
#include "../root_state.hpp"

namespace devmesh::detail {

/// The watchdog of a stream backend (impl/stream_watchdog.hpp, which such a backend's
/// implementation includes: nccl/impl/src.hpp, or nccl.hpp in header-only mode), and what
/// mesh_state holds for a backend without one (MPI): nothing. A host backend's programs never
/// read the stream watchdog's header (its <thread>, <condition_variable>, <deque>).
template <communicator Comm>
class stream_watchdog;
struct no_stream_watchdog {};

/// The state shared by every handle derived from one init_device_mesh / from_comms call.
template <communicator Comm>
struct mesh_state : root_state<Comm> {
  std::optional<Comm> owned_world;  // set when the mesh owns the world communicator
  std::optional<Comm> control;      // private duplicate of the world: devmesh's own steps
  std::optional<Comm> lazy_root;    // lazy mode: the mesh's members, parent of lazy splits
  comm_cache<Comm> cache;
  flight_recorder recorder;          // the last calls of this root's meshes
  channel steps{"mesh", {}, 0};      // devmesh's own collective steps (flatten, ...)
  std::string options_error;  // why this rank's options or environment are refused ("" if they are not)
  // Serializes what may add to the cache after init (a lazy first use, a flatten, unflatten or
  // subgroup, a flattened group's communicator made for redistribute) and the lookups that may
  // race with it (a handle resolving its dims): two threads'
  // first uses no longer run collectives on one parent communicator at once (undefined in MPI:
  // a hang) nor write the cache together. Ranks whose threads make the first uses in other
  // orders then disagree in check_same, an error on every rank (contract.comms.lazy_threads).
  mutable std::mutex creating;
  std::mutex aborting;               // one abort at a time (abort() and the watchdog's thread)
  // The watchdog's thread of a stream backend (NCCL), started at the first watched call.
  // Declared last: destroyed (its thread joined) before everything it uses.
  [[no_unique_address]] std::conditional_t<stream_watchable<Comm>, stream_watchdog<Comm>, no_stream_watchdog> streams;

  mesh_state() = default;
  mesh_state(const mesh_state&) = delete;
  mesh_state& operator=(const mesh_state&) = delete;
  // Destroyed in reverse declaration order: the dims' communicators (in reverse creation
  // order), then lazy_root, control and the world.


  /// Aborts every communicator devmesh made for this root (dims, lazy parent, control); a
  /// backend that can say why (MPI: the text of every later call's comm_error) is told `why`.
  void abort(const std::string& why = "it was aborted (abort())") noexcept {
    std::lock_guard one(aborting);
    if constexpr (stream_watchable<Comm>) streams.stop_watching();  // its calls end here, not complete
    const auto stop = [&](Comm& c) {
      if constexpr (requires { c.abort(why); }) c.abort(why);
      else if constexpr (requires { c.abort(); }) c.abort();
    };
    cache.for_each([&](const comm_entry<Comm>& e) { stop(*e.comm); });
    if (lazy_root) stop(*lazy_root);
    if (control) stop(*control);
  }

  /// This rank's flight record of the root (mesh.flight_record()).
  flight_record record() const {
    flight_record r;
    r.rank = this->world_rank;
    r.mesh = "(";
    const layout_view& root = this->root;
    for (int d = 0; d < root.dims(); ++d)
      r.mesh += (d ? ", " : "") + root.names[static_cast<std::size_t>(d)] + ": " + std::to_string(root.size(d));
    r.mesh += ")";
    r.entries = recorder.entries();
    r.recorded = recorder.recorded();
    r.steady_now_ns = steady_ns();
    r.channels.push_back(steps);
    cache.for_each([&](const comm_entry<Comm>& e) { r.channels.push_back(e); });  // each entry's channel
    return r;  // entries' `on` stay the root's own channels: valid while the root lives
  }
  /// With DEVMESH_FLIGHT_RECORD=DIR, writes the flight record there (a watchdog time-out,
  /// a deadline): returns " (flight record: FILE)" for the message, or "" (unset, or the
  /// file could not be written). Never throws.
  std::string dump_record() const noexcept {
    try {
      const char* dir = std::getenv("DEVMESH_FLIGHT_RECORD");
      if (!dir || !*dir) return {};
      const std::string path = write_flight_record(record(), dir, this->index);
      return path.empty() ? std::string(" (DEVMESH_FLIGHT_RECORD: could not write into ") + dir + ")"
                          : " (flight record: " + path + ")";
    } catch (...) {
      return {};
    }
  }

  /// The options dim `name` is created with, as compared (options_key).
  std::string options_of(std::string_view name) const { return options_key(this->options.for_dim(name)); }

  /// Per-call backend options (flatten/unflatten, PyTorch's backend_override): the new dims
  /// `names` get `o`, as if given in options.per_dim at init (lazy mode then uses them on
  /// first use). A name with other options already (per_dim, an earlier call, or a
  /// communicator made with the defaults) throws mesh_error: never a communicator other than
  /// the one asked for. Returns the options' description, for the step's consistency check;
  /// `added` gets the names it added (forgotten again if the step fails).
  std::string set_call_options(std::span<const std::string_view> names, const typename Comm::options_type& o,
                               std::string_view step, std::vector<std::string>& added) {
    const std::string wanted = options_key(o);
    for (const std::string_view name : names) {
      const bool given = this->options.per_dim.find(name) != this->options.per_dim.end() || cache.has_name(name);
      if (given && options_of(name) != wanted)
        throw mesh_error("devmesh: " + std::string(step) + ": dim '" + std::string(name) + "' has other backend options "
                         "already (" + options_of(name) + ", asked " + wanted + "): give a dim's options once, at init "
                         "(options.per_dim) or at the call that makes it");
    }
    for (const std::string_view name : names)
      if (this->options.per_dim.emplace(std::string(name), o).second) added.emplace_back(name);
    return " with backend options " + wanted;
  }
};

}  // namespace devmesh::detail
