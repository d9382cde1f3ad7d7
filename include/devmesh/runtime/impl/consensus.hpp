// devmesh/runtime/impl/consensus.hpp: every rank agrees, or every rank throws.
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
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../backend.hpp"
#include "../deadline.hpp"
#include "../../core/diagnostics.hpp"
#include "../digest.hpp"
#include "../flight_recorder.hpp"
#include "../layout_view.hpp"
#include "../../core/print.hpp"

namespace devmesh::detail {

template <class = void>
std::string ranks_phrase(const std::vector<int>& ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + rank_ranges(ranks);
}

/// Ranks 0..n-1 grouped by what they hold (`same(a, b)`: ranks a and b hold the same), each
/// group's ranks ascending, the groups in order of their first rank (the failure paths'
/// "who has what"; O(n x groups)).
template <class Same>
std::vector<std::vector<int>> rank_groups(std::size_t n, Same same) {
  std::vector<std::vector<int>> groups;
  for (std::size_t r = 0; r < n; ++r) {
    const int rank = static_cast<int>(r);
    auto it = std::find_if(groups.begin(), groups.end(),
                              [&](const std::vector<int>& g) { return same(g[0], rank); });
    if (it == groups.end())
      groups.emplace_back().push_back(rank);
    else
      it->push_back(rank);
  }
  return groups;
}

/// "devmesh: <step>": a step named by a text that already starts with "devmesh: " (a
/// redistribute call's description) is not prefixed twice.
inline std::string devmesh_prefixed(std::string_view step) {
  constexpr std::string_view prefix = "devmesh: ";
  if (step.substr(0, prefix.size()) == prefix) step.remove_prefix(prefix.size());
  return std::string(prefix) + std::string(step);
}

/// Runs the control step `f`; a time-out becomes a timeout_error naming `step`.
template <class F>
decltype(auto) bounded_step(std::string_view step, const deadline& d, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const timeout_error& e) {
    throw timeout_error(devmesh_prefixed(step) + ": timed out after " + d.describe() +
                        " waiting for the other ranks (the bound is DEVMESH_TIMEOUT or the mesh's options.timeout); " +
                        e.what());
  }
}

/// A fixed-size text slot for gathering per-rank messages on the failure path.
inline constexpr std::size_t slot_bytes = 512;
template <class = void>
std::array<char, slot_bytes> to_slot(std::string_view s) {
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

/// The failure path of an agreement on `step` that failed somewhere: every rank gathers every
/// rank's error text and throws a mesh_error naming the failed ranks and the first one's message.
/// If the gathering times out, a rank whose own part failed throws a timeout_error that says
/// its own error first, then that the gathering timed out (the others: the time-out alone).
template <communicator Comm>
[[noreturn]] void throw_failed(const Comm& c, const std::string& local_error, std::string_view step,
                               const deadline& d) {
  std::vector<std::string> texts;
  try {
    texts = bounded_step(step, d, [&] { return gather_texts(c, local_error, d); });
  } catch (const timeout_error& e) {
    if (local_error.empty()) throw;
    throw timeout_error(devmesh_prefixed(step) + " failed on this rank (" + std::to_string(c.rank()) +
                        "): " + local_error + "; then gathering every rank's error timed out: " + e.what());
  }
  std::vector<int> bad;
  for (std::size_t r = 0; r < texts.size(); ++r)
    if (!texts[r].empty()) bad.push_back(static_cast<int>(r));
  if (bad.empty()) bad.push_back(0);  // a failure with an empty message
  std::string msg = devmesh_prefixed(step) + " failed on " + ranks_phrase(bad) + " of " +
                    std::to_string(c.size()) + "; rank " + std::to_string(bad.front()) + ": " +
                    texts[static_cast<std::size_t>(bad.front())];
  if (!local_error.empty() && bad.front() != c.rank())
    msg += "; this rank (" + std::to_string(c.rank()) + "): " + local_error;
  throw mesh_error(msg);
}

/// Collective over `c`: every rank says whether its part of `step` succeeded (an empty
/// `local_error`). If any failed, every rank throws a mesh_error naming the failed ranks and
/// the first failure's message, so a failure on some ranks never leaves the others waiting.
template <communicator Comm>
void agree(const Comm& c, const std::string& local_error, std::string_view step, const deadline& d) {
  std::uint64_t failed = local_error.empty() ? 0 : 1;
  bounded_step(step, d, [&] { c.all_reduce_max(&failed, 1, d); });
  if (failed) throw_failed(c, local_error, step, d);
}

/// What the ranks compare: `payload` (the mesh as bytes: its names and layout values, or a
/// text) and `details` (options and the like), both entirely digested. What a message shows
/// of it, summary(), is made only on the mismatch path: the mesh's repr, or the text.
struct descriptor {
  layout_view mesh;  // the mesh compared, if any
  std::string text;  // else what is compared
  std::string details;
  std::string payload;
  /// SHA-256 of payload + '\n' + details, once computed (seal(): is_sealed): computed ahead
  /// of the agreement, e.g. while another step's messages are in flight.
  digest sealed{};
  bool is_sealed = false;
  /// What a mismatch says the ranks disagree on.
  std::string_view subject = "the device mesh";

  /// A descriptor that is its own text (e.g. the nodes every rank found).
  template <class = void>
  static descriptor of_text(std::string text) { return {{}, text, {}, text}; }
  /// The text messages show first: the mesh's repr, or the text.
  template <class = void>
  std::string summary() const { return mesh.names.empty() ? text : to_string(mesh); }
  /// The digest the ranks compare.
  template <class = void>
  digest hash() const { return is_sealed ? sealed : sha256(payload + '\n' + details); }
  /// Computes the digest now, so that the agreement does not.
  template <class = void>
  void seal() {
    sealed = sha256(payload + '\n' + details);
    is_sealed = true;
  }
  /// The details for messages, with a short fingerprint of the payload (two meshes can
  /// print alike and still differ, e.g. in which sizes are static).
  template <class = void>
  std::string details_text() const {
    static constexpr char hex[] = "0123456789abcdef";
    const std::uint64_t word = sha256(payload)[0];
    std::string fp = " (layout #";
    for (int shift = 28; shift >= 0; shift -= 4) fp += hex[(word >> shift) & 0xf];
    return details + fp + ")";
  }
};

/// The mismatch path of a descriptor check: every rank gathers every rank's descriptor and
/// throws a mesh_error listing which ranks have which summary, the odd ones first, then the
/// details.
template <communicator Comm>
[[noreturn]] void throw_mismatch(const Comm& c, const descriptor& mine, std::string_view step, const deadline& d) {
  const auto summaries = gather_texts(c, mine.summary(), d);
  const auto details = gather_texts(c, mine.details_text(), d);
  // Ranks grouped by (summary, details), groups in order of their first rank, the
  // smallest first: they are usually the odd ones out.
  auto groups = rank_groups(summaries.size(), [&](int a, int b) {
    const auto x = static_cast<std::size_t>(a), y = static_cast<std::size_t>(b);
    return summaries[x] == summaries[y] && details[x] == details[y];
  });
  std::stable_sort(groups.begin(), groups.end(), [](auto& a, auto& b) { return a.size() < b.size(); });
  auto of = [&](const std::vector<std::string>& texts, const std::vector<int>& g) -> const std::string& {
    return texts[static_cast<std::size_t>(g[0])];
  };
  std::string msg = devmesh_prefixed(step) + ": the ranks disagree on " + std::string(mine.subject) + ": ";
  for (std::size_t g = 0; g < groups.size(); ++g)
    msg += (g ? "; " : "") + ranks_phrase(groups[g]) + (groups[g].size() == 1 ? " has " : " have ") +
           of(summaries, groups[g]);
  if (mine.mesh.names.empty() && mine.details.empty()) throw mesh_error(msg + ".");  // a text: it is all there is
  msg += ". Details: ";
  for (std::size_t g = 0; g < groups.size(); ++g)
    msg += (g ? "; " : "") + ranks_phrase(groups[g]) + ": " + of(details, groups[g]);
  throw mesh_error(msg);
}

/// The 8 words a descriptor check all-reduces: its SHA-256 digest, then each word's
/// complement (the maximum of a complement is the complement of the minimum).
inline constexpr std::size_t digest_words = 8;
template <class = void>
void put_digest(std::uint64_t* w, const descriptor& mine) {
  const digest h = mine.hash();
  for (int i = 0; i < 4; ++i) w[i] = h[i], w[4 + i] = ~h[i];
}
/// After the all-reduce: true when every rank's digest was the same (maximum == minimum).
template <class = void>
bool same_digest(const std::uint64_t* w) {
  bool same = true;
  for (int i = 0; i < 4; ++i) same = same && w[i] == ~w[4 + i];
  return same;
}

/// Collective over `c`: checks that every rank has the same descriptor by comparing
/// SHA-256 digests (the maximum and the minimum of each word over the ranks, in one
/// all-reduce of 8 words). On a difference every rank throws a mesh_error listing which
/// ranks have which summary, the odd ones first, then the details.
template <communicator Comm>
void check_same(const Comm& c, const descriptor& mine, std::string_view step, const deadline& d) {
  bounded_step(step, d, [&] {
    std::array<std::uint64_t, digest_words> w{};
    put_digest(w.data(), mine);
    c.all_reduce_max(w.data(), w.size(), d);
    if (!same_digest(w.data())) throw_mismatch(c, mine, step, d);
  });
}

/// One rank's part of a step: its name (as agree's `step`) and "" or why it failed here.
struct step_outcome {
  std::string step;
  std::string error;
};

/// agree_all's words, the same number on every rank whatever it checks: its shape (how many
/// outcomes before and after, whether a descriptor is compared) and the shape's complement,
/// the complement of its first failed outcome's index (before's, then after's; none: 0),
/// then the descriptor's digest words (put_digest; zeros without one). The maximum of a
/// complement is the complement of the minimum: the shapes were alike when max == ~max(~),
/// and the earliest failure on any rank is ~max(~first).
inline constexpr std::size_t agreement_words = 3 + digest_words;
template <class = void>
std::uint64_t agreement_shape(std::size_t before, bool descriptor, std::size_t after) {
  return static_cast<std::uint64_t>(before) | static_cast<std::uint64_t>(after) << 24 |
         static_cast<std::uint64_t>(descriptor) << 48;
}

/// agree on each of `before`, then check_same of `mine` (when given), then agree on each of
/// `after`, in that order and with the same messages, as ONE all-reduce over `c` of a fixed
/// number of words (agreement_words): the first check that fails anywhere makes every rank
/// throw exactly what that check alone would have. `before`, `after` and whether `mine` is
/// given must be alike on every rank (their errors not): that is checked too, every rank
/// throwing a mesh_error if not. A rank whose part failed before the descriptor could be
/// made passes an empty one (its flag decides first). `step` names the descriptor check in
/// its message, and the whole in a time-out's.
template <communicator Comm>
void agree_all(const Comm& c, std::string_view step, std::span<const step_outcome> before, const descriptor* mine,
               std::span<const step_outcome> after, const deadline& d) {
  const std::uint64_t shape = agreement_shape(before.size(), mine != nullptr, after.size());
  std::uint64_t first = ~std::uint64_t{0};
  for (std::size_t i = after.size(); i-- > 0;)
    if (!after[i].error.empty()) first = before.size() + i;
  for (std::size_t i = before.size(); i-- > 0;)
    if (!before[i].error.empty()) first = i;
  std::array<std::uint64_t, agreement_words> w{shape, ~shape, ~first};
  if (mine) put_digest(w.data() + 3, *mine);
  bounded_step(step, d, [&] { c.all_reduce_max(w.data(), w.size(), d); });
  if (w[0] != ~w[1])
    throw mesh_error(devmesh_prefixed(step) + ": the ranks disagree on the checks this step agrees on (this rank: " +
                     std::to_string(before.size()) + " before the descriptor, " + (mine ? "one" : "none") + ", " +
                     std::to_string(after.size()) + " after); every rank must take the same steps");
  first = ~w[2];
  if (first < before.size()) throw_failed(c, before[first].error, before[first].step, d);
  if (mine && !same_digest(w.data() + 3)) bounded_step(step, d, [&] { throw_mismatch(c, *mine, step, d); });
  if (first < before.size() + after.size()) {
    const step_outcome& failed = after[first - before.size()];
    throw_failed(c, failed.error, failed.step, d);
  }
}

/// Ranks of e's group as world ranks (one out of the group's range stays as given).
template <class = void>
std::vector<int> world_ranks_of(const channel& e, const std::vector<int>& group_ranks) {
  std::vector<int> world;
  for (int r : group_ranks)
    world.push_back(r >= 0 && static_cast<std::size_t>(r) < e.world_ranks.size() ? e.world_ranks[static_cast<std::size_t>(r)]
                                                                                  : r);
  return world;
}
/// "world ranks 0,2-3 of its group (world ranks 0-3)".
template <class = void>
std::string gave_up_phrase(const channel& e, const std::vector<int>& group_ranks) {
  return "world " + ranks_phrase(world_ranks_of(e, group_ranks)) + " of its group (world " + ranks_phrase(e.world_ranks) + ")";
}

/// Who was not in a call the watchdog ended (ranks of its group), in world ranks; `why_unknown`:
/// why no roll call could be held ("" when one was).
template <class = void>  // failure-only: emitted only where a message is built
std::string absent_phrase(const channel& e, const std::vector<int>& absent_ranks, const std::string& why_unknown = {}) {
  if (!why_unknown.empty())
    return "its group is world " + ranks_phrase(e.world_ranks) + "; which of them did not issue the call is not known: " +
           why_unknown;
  const std::vector<int> absent = world_ranks_of(e, absent_ranks);
  if (absent.empty())
    return "its group is world " + ranks_phrase(e.world_ranks) +
           ", and every rank of it answered the roll call: the call itself did not complete";
  return "world " + ranks_phrase(absent) + " of its group (world " + ranks_phrase(e.world_ranks) + ") never arrived: " +
         (absent.size() == 1 ? "it" : "they") + " skipped the call, wait elsewhere or died (no answer to the roll call)";
}

}  // namespace devmesh::detail
