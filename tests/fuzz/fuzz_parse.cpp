// libFuzzer target for devmesh/core/parse.hpp. Input: byte 0 picks the world size (0xff: none),
// the rest is the spec. For three mesh types, the parser must either throw mesh_error with
// a short, printable "devmesh:" message, or return exactly what an independent reference
// parser (below, written from the grammar in docs/parse.md) accepts; and what it returns
// must round-trip through to_spec. Any other exception, crash, leak or UB is a finding.
#include <devmesh/core/parse.hpp>

#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dm = devmesh;

namespace {

[[noreturn]] void finding(const char* what, std::string_view spec) {
  std::fprintf(stderr, "devmesh fuzz_parse: %s for spec %s\n", what, dm::detail::quote_input(spec).c_str());
  std::abort();
}

std::string strip(std::string s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// The reference: split first, then decide; sizes in dim order, or nullopt to reject.
std::optional<std::vector<long long>> reference(const std::string& spec, const std::vector<std::string>& names,
                                                const std::vector<int>& statics, int world) {
  if (strip(spec).empty()) return std::nullopt;
  std::vector<std::string> pieces(1);
  for (char c : spec) {
    if (c == ',')
      pieces.emplace_back();
    else
      pieces.back() += c;
  }
  const std::size_t n = names.size();
  std::vector<long long> size(n, -2);  // -2: absent, 0: inferred
  for (const auto& piece : pieces) {
    const auto eq = piece.find('=');
    if (eq == std::string::npos) return std::nullopt;
    const std::string name = strip(piece.substr(0, eq)), value = strip(piece.substr(eq + 1));
    std::size_t d = 0;
    while (d < n && names[d] != name) ++d;
    if (d == n || size[d] != -2) return std::nullopt;
    if (value == "*" || value == "auto" || value == "-1") {
      size[d] = 0;
      continue;
    }
    if (value.empty() || value.size() > 10 || value[0] < '1' || value[0] > '9') return std::nullopt;
    for (char c : value)
      if (c < '0' || c > '9') return std::nullopt;
    size[d] = std::stoll(value);
    if (size[d] > INT_MAX) return std::nullopt;
  }
  int inferred = 0;
  long long known = 1;
  for (std::size_t d = 0; d < n; ++d) {
    if (size[d] == -2) return std::nullopt;
    if (size[d] == 0) {
      ++inferred;
      continue;
    }
    if (statics[d] != dm::dynamic_size && statics[d] != size[d]) return std::nullopt;
    known *= size[d];
    if (known > INT_MAX) return std::nullopt;
  }
  if (inferred > 1 || (inferred == 1 && world < 0) || world == 0) return std::nullopt;
  if (world < 0) return size;
  if (inferred == 0) return known == world ? std::optional(size) : std::nullopt;
  if (world % known != 0) return std::nullopt;
  for (std::size_t d = 0; d < n; ++d)
    if (size[d] == 0) {
      size[d] = world / known;
      if (statics[d] != dm::dynamic_size && statics[d] != size[d]) return std::nullopt;
    }
  return size;
}

template <class M>
void check(std::string_view spec, int world) {
  std::vector<std::string> names;
  std::vector<int> statics;
  for (int d = 0; d < M::ndim; ++d) names.emplace_back(M::names_type::views[d]);
  for (int s : dm::detail::parsed_mesh_traits<M>::static_sizes) statics.push_back(s);
  const auto expected = reference(std::string(spec), names, statics, world);
  std::optional<M> got;
  try {
    got = world < 0 ? dm::parse_mesh<M>(spec) : dm::parse_mesh<M>(spec, world);
  } catch (const dm::mesh_error& e) {
    const std::string_view msg = e.what();
    if (!msg.starts_with("devmesh: ")) finding("message without the devmesh: prefix", spec);
    if (msg.size() > 1000) finding("message longer than 1000 bytes", spec);
    for (char c : msg)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
        finding("unprintable byte in the message", spec);
    if (expected) finding("parser rejects what the reference accepts", spec);
    return;
  }
  if (!expected) finding("parser accepts what the reference rejects", spec);
  for (int d = 0; d < M::ndim; ++d)
    if (got->dim_size(d) != (*expected)[static_cast<std::size_t>(d)]) finding("parser and reference disagree", spec);
  if (world >= 0 && got->size() != world) finding("mesh size differs from the world size", spec);
  if (dm::to_spec(dm::parse_mesh<M>(dm::to_spec(*got))) != dm::to_spec(*got)) finding("to_spec round-trip", spec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int world = data[0] == 0xff ? -1 : data[0];
  const std::string_view spec(reinterpret_cast<const char*>(data + 1), size - 1);
  check<dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>>(spec, world);
  check<dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>>(spec, world);
  check<dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>>(spec, world);
  return 0;
}
