// devmesh/consensus.hpp: every rank agrees, or every rank throws.
//
// The one helper behind each collective step devmesh takes on its own behalf: init,
// flatten, unflatten, communicator creation, from_comms validation and the collective
// check mode. Each is bounded by a deadline (deadline.hpp), and each costs O(1) memory per
// rank on the common path (an all-reduce of a few words); only a failure gathers
// per-rank text, to say who differs and how.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend.hpp"
#include "deadline.hpp"
#include "diagnostics.hpp"
#include "digest.hpp"

namespace devmesh::detail {

/// "0-2,4,6-7"
inline std::string rank_ranges(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ranks[i]);
    if (j > i) out += '-' + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}
inline std::string ranks_phrase(const std::vector<int>& ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + rank_ranges(ranks);
}

/// Runs the control step `f`; a time-out becomes a timeout_error naming `step`.
template <class F>
decltype(auto) bounded_step(std::string_view step, const deadline& d, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const timeout_error& e) {
    throw timeout_error("devmesh: " + std::string(step) + ": timed out after " + d.describe() +
                        " waiting for the other ranks (the bound is DEVMESH_TIMEOUT or the mesh's options.timeout); " +
                        e.what());
  }
}

/// A fixed-size text slot for gathering per-rank messages on the failure path.
inline constexpr std::size_t slot_bytes = 512;
inline std::array<char, slot_bytes> to_slot(std::string_view s) {
  std::array<char, slot_bytes> a{};
  if (!s.empty()) std::memcpy(a.data(), s.data(), std::min(s.size(), slot_bytes - 1));
  return a;
}

/// Every rank of `c` gathers every rank's `text` (truncated to a slot), in rank order.
template <communicator Comm>
std::vector<std::string> gather_texts(const Comm& c, std::string_view text, const deadline& d) {
  const auto n = static_cast<std::size_t>(c.size());
  const auto mine = to_slot(text);
  std::vector<char> all(n * slot_bytes);
  c.all_gather_bytes(mine.data(), all.data(), slot_bytes, d);
  std::vector<std::string> out(n);
  for (std::size_t r = 0; r < n; ++r) out[r] = std::string(all.data() + r * slot_bytes);
  return out;
}

/// Collective over `c`: every rank says whether its part of `step` succeeded (an empty
/// `local_error`). If any failed, every rank throws a mesh_error naming the failed ranks and
/// the first failure's message, so a failure on some ranks never leaves the others waiting.
template <communicator Comm>
void agree(const Comm& c, const std::string& local_error, std::string_view step, const deadline& d) {
  bounded_step(step, d, [&] {
    std::uint64_t failed = local_error.empty() ? 0 : 1;
    c.all_reduce_max(&failed, 1, d);
    if (!failed) return;
    const auto texts = gather_texts(c, local_error.empty() ? std::string_view() : std::string_view(local_error), d);
    std::vector<int> bad;
    for (std::size_t r = 0; r < texts.size(); ++r)
      if (!texts[r].empty()) bad.push_back(static_cast<int>(r));
    if (bad.empty()) bad.push_back(0);  // a failure with an empty message
    std::string msg = "devmesh: " + std::string(step) + " failed on " + ranks_phrase(bad) + " of " +
                      std::to_string(c.size()) + "; rank " + std::to_string(bad.front()) + ": " +
                      texts[static_cast<std::size_t>(bad.front())];
    if (!local_error.empty() && bad.front() != c.rank())
      msg += "; this rank (" + std::to_string(c.rank()) + "): " + local_error;
    throw mesh_error(msg);
  });
}

/// What the ranks compare: `summary` (shown first in messages: the mesh itself) and
/// `details` (options and the like, shown after), both entirely digested.
struct descriptor {
  std::string summary;
  std::string details;
};

/// Collective over `c`: checks that every rank has the same descriptor by comparing
/// SHA-256 digests (the maximum and the minimum of each word over the ranks, in one
/// all-reduce of 8 words). On a difference every rank throws a mesh_error listing which
/// ranks have which summary, the odd ones first, then the details.
template <communicator Comm>
void check_same(const Comm& c, const descriptor& mine, std::string_view step, const deadline& d) {
  bounded_step(step, d, [&] {
    const std::string all_text = mine.summary + '\n' + mine.details;
    const digest h = sha256(all_text);
    std::array<std::uint64_t, 8> w{};
    for (int i = 0; i < 4; ++i) w[i] = h[i], w[4 + i] = ~h[i];
    c.all_reduce_max(w.data(), w.size(), d);
    bool same = true;
    for (int i = 0; i < 4; ++i) same = same && w[i] == ~w[4 + i];
    if (same) return;
    const auto summaries = gather_texts(c, mine.summary, d);
    const auto details = gather_texts(c, mine.details, d);
    // Ranks grouped by (summary, details), groups in order of their first rank, the
    // smallest first: they are usually the odd ones out.
    std::vector<std::pair<std::size_t, std::vector<int>>> groups;
    for (std::size_t r = 0; r < summaries.size(); ++r) {
      auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) {
        return summaries[g.first] == summaries[r] && details[g.first] == details[r];
      });
      if (it == groups.end())
        groups.push_back({r, {static_cast<int>(r)}});
      else
        it->second.push_back(static_cast<int>(r));
    }
    std::stable_sort(groups.begin(), groups.end(), [](auto& a, auto& b) { return a.second.size() < b.second.size(); });
    std::string msg = "devmesh: " + std::string(step) + ": the ranks disagree on the device mesh: ";
    for (std::size_t g = 0; g < groups.size(); ++g)
      msg += (g ? "; " : "") + ranks_phrase(groups[g].second) + (groups[g].second.size() == 1 ? " has " : " have ") +
             summaries[groups[g].first];
    msg += ". Details: ";
    for (std::size_t g = 0; g < groups.size(); ++g)
      msg += (g ? "; " : "") + ranks_phrase(groups[g].second) + ": " + details[groups[g].first];
    throw mesh_error(msg);
  });
}

}  // namespace devmesh::detail
