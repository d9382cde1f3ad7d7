// devmesh/runtime/impl/collective_check.hpp: the collective check mode (DEVMESH_CHECK_COLLECTIVES=1,
// or device_mesh_options::check_collectives).
//
// Before each collective, the ranks of its group agree on what they are about to do: the
// operation, the element type, the count(s), the root, the reduction op and the call's number
// on the dim (a rank a call behind or ahead is named). One all-reduce of 16 words on the dim's
// own communicator (in order with the collectives, so the checks of all ranks match each
// other), bounded by the mesh's deadline. On a difference, every
// rank of the group throws mesh_error naming the ranks and what differs, and the
// communicator stays usable. Off, it costs one predictable branch per collective.
#pragma once
#include <array>
#include <cstring>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../backend.hpp"
#include "consensus.hpp"
#include "../deadline.hpp"
#include "../digest.hpp"
#include "../element_type.hpp"

namespace devmesh::detail {

/// What one rank is about to do. Fields that do not apply are 0.
struct call_signature {
  std::uint64_t operation = 0;  // index into call_names
  std::uint64_t type = 0;       // first word of sha256(type name)
  std::uint64_t count = 0;      // send elements
  std::uint64_t count2 = 0;     // recv elements
  std::uint64_t root = 0;       // root, or shift's displacement
  std::uint64_t reduction = 0;  // op + 1 (0: none), or shift's periodic flag
  std::uint64_t type_size = 0;
  std::uint64_t number = 0;     // the call's number among those agreed on the dim, from 1
};
inline constexpr int signature_words = 8;
static_assert(sizeof(call_signature) == signature_words * sizeof(std::uint64_t));
inline constexpr const char* call_names[] = {"all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter",
                                             "all_to_all", "barrier",  "shift"};
enum class call : std::uint64_t { all_reduce, reduce, broadcast, all_gather, reduce_scatter, all_to_all, barrier, shift };

/// What a rank calls: `what` over elements of type t.
inline call_signature signature(call what, element_type t, std::size_t n_send, std::size_t n_recv, long long root,
                                int reduction, std::uint64_t number) {
  return {static_cast<std::uint64_t>(what),  sha256(t.name)[0], n_send, n_recv,
          static_cast<std::uint64_t>(root), static_cast<std::uint64_t>(reduction), t.size, number};
}

/// "count: rank 1 has 4, ranks 0,2-3 have 8"
template <class = void>
std::string field_difference(const char* field, const std::vector<std::string>& values) {
  const auto groups = rank_groups(values.size(), [&](int a, int b) {
    return values[static_cast<std::size_t>(a)] == values[static_cast<std::size_t>(b)];
  });
  if (groups.size() < 2) return {};
  std::string s = std::string(field) + ":";
  for (const auto& g : groups)
    s += (&g == &groups[0] ? " " : ", ") + ranks_phrase(g) + (g.size() == 1 ? " has " : " have ") +
         values[static_cast<std::size_t>(g[0])];
  return s;
}

/// The failure path: gathers every rank's signature and type name and says what differs.
template <communicator Comm>
std::string describe_mismatch(const Comm& c, const call_signature& s, std::string_view type, const deadline& d) {
  const auto n = static_cast<std::size_t>(c.size());
  std::vector<call_signature> all(n);
  c.all_gather_bytes(&s, all.data(), sizeof s, d);
  const auto types = gather_texts(c, type, d);
  auto column = [&](auto get) {
    std::vector<std::string> v;
    for (std::size_t r = 0; r < n; ++r) v.push_back(get(r));
    return v;
  };
  std::string out;
  auto add = [&](std::string part) {
    if (!part.empty()) out += (out.empty() ? "" : "; ") + part;
  };
  add(field_difference("call number on the dim", column([&](std::size_t r) {
        return std::string("#") += std::to_string(all[r].number);  // not "#" + ...: g++ 12 -O3's -Wrestrict
      })));
  add(field_difference("operation", column([&](std::size_t r) { return std::string(call_names[all[r].operation % 8]); })));
  add(field_difference("element type", column([&](std::size_t r) { return types[r]; })));
  add(field_difference("count", column([&](std::size_t r) { return std::to_string(all[r].count); })));
  add(field_difference("recv count", column([&](std::size_t r) { return std::to_string(all[r].count2); })));
  add(field_difference("root", column([&](std::size_t r) { return std::to_string(static_cast<long long>(all[r].root)); })));
  add(field_difference("op", column([&](std::size_t r) {
        return all[r].reduction ? std::string(op_name(static_cast<op>(all[r].reduction - 1))) : std::string("none");
      })));
  return out.empty() ? "the calls differ in a way devmesh cannot name" : out;
}

/// Collective over `c` (the dim's communicator): every rank's `s` must be equal, else every
/// rank throws mesh_error("devmesh: all_reduce on dim ...: the ranks disagree on the call: ...").
template <communicator Comm>
void check_call(const Comm& c, const call_signature& s, std::string_view type, std::string_view where,
                const deadline& d) {
  const char* what = call_names[s.operation % 8];
  const std::string step = std::string(what) + " on " + std::string(where) + " (DEVMESH_CHECK_COLLECTIVES)";
  bounded_step(step, d, [&] {
    std::array<std::uint64_t, signature_words> f{};
    std::memcpy(f.data(), &s, sizeof s);
    std::array<std::uint64_t, 2 * signature_words> w{};
    for (int i = 0; i < signature_words; ++i) w[i] = f[i], w[signature_words + i] = ~f[i];
    c.all_reduce_max(w.data(), w.size(), d);
    bool same = true;
    for (int i = 0; i < signature_words; ++i) same = same && w[i] == ~w[signature_words + i];
    if (same) return;
    throw mesh_error("devmesh: " + std::string(what) + " on " + std::string(where) +
                     ": the ranks disagree on the call (DEVMESH_CHECK_COLLECTIVES): " +
                     describe_mismatch(c, s, type, d));
  });
}

}  // namespace devmesh::detail
