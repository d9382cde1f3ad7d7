// devmesh/runtime/comm_entry.hpp: one dim's communicator as a root's meshes share it: one per
// (dim name, group function). A dim's group function is its coalesced layout
// (dim_layout::coalesce, CuTe's coalesce): two dims have the same groups in the same order
// exactly when those are equal, whatever their names or history. A typed handle keeps a
// pointer to each of its dims' entries, so that comm<"tp">() and every collective are a load.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "../core/layout.hpp"
#include "backend.hpp"
#include "flight_recorder.hpp"

namespace devmesh::detail {

/// A dim's group function: its coalesced layout itself (fixed size, ==, hashable).
using group_key = coalesced_layout;

/// The group key of dim d of m.
template <class Layout>
group_key group_key_of(const Layout& m, int d) {
  return m.dim_layout(d).coalesce();
}

/// One dim's communicator: one per (name, groups). Several entries hold the same
/// communicator only under options.share_equal_groups. Its channel (name, this rank's group,
/// the calls made on it) is what the flight recorder counts and names.
template <communicator Comm>
struct comm_entry : channel {
  group_key key;
  std::string options;  // the dim's options (options_key): sharing needs equal ones
  std::shared_ptr<Comm> comm;
  /// The calls agreed on this group so far: redistribute's agreements and the check mode's
  /// (not send_next/recv_prev, which are not collective). Their numbers are agreed too: a rank
  /// whose count differs (a call that threw on it alone before agreeing) is named.
  mutable std::uint64_t agreed_calls = 0;
};

}  // namespace devmesh::detail
