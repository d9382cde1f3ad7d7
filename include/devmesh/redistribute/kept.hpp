// devmesh/redistribute/kept.hpp: what a thread keeps from one redistribute to the next (the
// plans of dynamic specs, the exchanges' surveys): the last few entries, found by a key that
// is everything the entry was made from, so a match is never wrong and a miss only redoes
// the work. A key's mesh matches by same_modes (as written: stricter than ==, and cheaper).
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

namespace devmesh::detail {

/// The last Keep entries a thread made (each instance is a function's thread_local).
template <class Entry, std::size_t Keep = 8>
class kept_last {
 public:
  /// The first kept entry for which match(entry) is true, or nullptr.
  template <class Match>
  const Entry* find(const Match& match) const {
    for (const Entry& e : entries_)
      if (match(e)) return &e;
    return nullptr;
  }
  /// Keeps e, in place of the oldest once Keep are kept. The reference is valid until this
  /// instance keeps another entry (storage is reserved once: never reallocated).
  const Entry& keep(Entry&& e) {
    if (entries_.capacity() < Keep) entries_.reserve(Keep);
    if (entries_.size() < Keep) return entries_.emplace_back(std::move(e));
    Entry& slot = entries_[next_++ % Keep];
    slot = std::move(e);
    return slot;
  }

 private:
  std::vector<Entry> entries_;
  std::size_t next_ = 0;
};

}  // namespace devmesh::detail
