// devmesh/runtime/mesh_state.hpp: the state every handle derived from one init_device_mesh
// or from_comms call shares: the world and the private control communicator, where this
// rank sits (placement), the options, the root's layout and the communicator cache.
#pragma once
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../core/diagnostics.hpp"
#include "../core/print.hpp"
#include "backend.hpp"
#include "comm_cache.hpp"
#include "deadline.hpp"
#include "layout_view.hpp"
#include "options.hpp"
#include "rank_placement.hpp"

namespace devmesh::detail {

/// The state shared by every handle derived from one init_device_mesh / from_comms call.
template <communicator Comm>
struct mesh_state : rank_placement {
  std::optional<Comm> owned_world;  // set when the mesh owns the world communicator
  const Comm* world = nullptr;
  std::optional<Comm> control;    // private duplicate of the world: devmesh's own steps
  std::optional<Comm> lazy_root;  // lazy mode: the mesh's members, parent of lazy splits
  std::vector<int> node_of_rank;  // node of every world rank, when init discovered them
  layout_view root;  // the root's layout (init's or from_comms'), for device_mesh::root<M>()
  device_mesh_options<Comm> options;
  std::chrono::milliseconds timeout = default_timeout;
  bool check_collectives = false;
  comm_cache<Comm> cache;
  int created = 0;  // communicators created for this root (control, lazy parent, dims)

  mesh_state() = default;
  mesh_state(const mesh_state&) = delete;
  mesh_state& operator=(const mesh_state&) = delete;
  // Destroyed in reverse declaration order: the dims' communicators (in reverse creation
  // order), then lazy_root, control and the world.

  deadline start_step() const { return deadline::after(timeout); }

  /// Keeps the root's layout (init, from_comms) for device_mesh::root<M>().
  template <class Layout>
  void keep_root(const Layout& l) {
    root = view_of(l);
  }

  /// Aborts every communicator devmesh made for this root (dims, lazy parent, control).
  void abort() noexcept {
    const auto stop = [](Comm& c) {
      if constexpr (requires { c.abort(); }) c.abort();
    };
    cache.abort();
    if (lazy_root) stop(*lazy_root);
    if (control) stop(*control);
  }

  /// The options dim `name` is created with, as compared (options_key).
  std::string options_of(std::string_view name) const { return options_key(options.for_dim(name)); }

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
      const bool given = options.per_dim.find(name) != options.per_dim.end() || cache.has_name(name);
      if (given && options_of(name) != wanted)
        throw mesh_error("devmesh: " + std::string(step) + ": dim '" + std::string(name) + "' has other backend options "
                         "already (" + options_of(name) + ", asked " + wanted + "): give a dim's options once, at init "
                         "(options.per_dim) or at the call that makes it");
    }
    for (const std::string_view name : names)
      if (options.per_dim.emplace(std::string(name), o).second) added.emplace_back(name);
    return " with backend options " + wanted;
  }
};

}  // namespace devmesh::detail
