// devmesh/runtime/impl/comm_cache.hpp: the communicators a root's meshes share, one per
// (dim name, group function). A dim's group function is its coalesced layout
// (dim_layout::coalesce, CuTe's coalesce): two dims have the same groups in the same order
// exactly when those are equal, whatever their names or history. So slices find their dims
// here and create nothing, and flattening twice creates nothing.
#pragma once
#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../core/layout.hpp"
#include "../backend.hpp"
#include "../comm_entry.hpp"
#include "../flight_recorder.hpp"

namespace devmesh::detail {

/// The cache, in creation order. Entries never move (each is an owned entry), so a handle may
/// keep pointers to them; they die in reverse creation order.
template <communicator Comm>
class comm_cache {
 public:
  using entry = comm_entry<Comm>;
  using entry_list = std::vector<std::unique_ptr<entry>>;

  comm_cache() = default;
  comm_cache(const comm_cache&) = delete;
  comm_cache& operator=(const comm_cache&) = delete;
  ~comm_cache() {
    while (!entries_.empty()) entries_.pop_back();
  }

  /// The entry of dim `name` with groups k, or nullptr.
  const entry* find(std::string_view name, const group_key& k) const {
    for (const auto& e : entries_)
      if (e->name == name && e->key == k) return e.get();
    return nullptr;
  }
  /// True if a communicator was made for a dim named `name` (any groups).
  bool has_name(std::string_view name) const {
    return std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) { return e->name == name; });
  }
  /// A communicator with groups k made with options `opts`, among the cached ones and those
  /// `made` by the step under way (share_equal_groups).
  const entry* with_groups(const group_key& k, const std::string& opts, const entry_list& made = {}) const {
    for (const auto* list : {&entries_, &made})
      for (const auto& e : *list)
        if (e->key == k && e->options == opts) return e.get();
    return nullptr;
  }
  /// Takes the entries a step made, once every rank agreed on them.
  void add(entry_list made) {
    for (auto& e : made) entries_.push_back(std::move(e));
  }
  /// f(entry) for every entry, in creation order.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& e : entries_) f(*e);
  }
 private:
  entry_list entries_;
};

}  // namespace devmesh::detail
