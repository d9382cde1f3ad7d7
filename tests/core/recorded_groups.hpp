// tests/core: recorded process groups (tests/core/data/*.txt, written by
// scripts/pytorch-reference/record_*.py, format in its groups_text.py): PyTorch 2.15's
// _unflatten, Megatron-Core's generators and TorchTitan's meshes, read back as cases. And the
// one comparison every conformance test makes: devmesh's groups of a dim, listed, against the
// recorded ones, members and order exactly.
#pragma once
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace recorded {

using groups = std::vector<std::vector<int>>;

/// One recorded configuration: its id and KEY=VALUE fields, every 'groups' line by label (in
/// file order), or the reference's refusal.
struct config {
  std::string id;
  std::map<std::string, std::string> fields;
  std::vector<std::pair<std::string, groups>> lists;
  std::string refused;

  int number(const std::string& key) const { return std::stoi(fields.at(key)); }
  std::vector<int> numbers(const std::string& key) const {
    std::vector<int> out;
    std::stringstream s(fields.at(key));
    for (std::string v; std::getline(s, v, ',');) out.push_back(std::stoi(v));
    return out;
  }
};

inline groups parse_groups(std::istringstream& in) {
  groups out;
  for (std::string g; in >> g;) {
    out.emplace_back();
    std::stringstream s(g);
    for (std::string v; std::getline(s, v, ',');) out.back().push_back(std::stoi(v));
  }
  return out;
}

/// Every case of a recorded file (path relative to tests/core/data).
inline std::vector<config> load(const std::string& file) {
  std::ifstream in(std::string(DEVMESH_CORE_DATA_DIR) + "/" + file);
  REQUIRE_MESSAGE(in.good(), "cannot read tests/core/data/" << file);
  std::vector<config> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind == "case") {
      out.emplace_back();
      words >> out.back().id;
      for (std::string kv; words >> kv;) {
        const auto eq = kv.find('=');
        out.back().fields[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
    } else if (kind == "groups") {
      std::string label;
      words >> label;
      out.back().lists.emplace_back(label, parse_groups(words));
    } else if (kind == "refused") {
      std::getline(words >> std::ws, out.back().refused);
    }
  }
  return out;
}

/// A range of rank_groups (all_groups' answer) as lists.
template <class Groups>
groups listed(const Groups& gs) {
  groups out;
  for (const auto& g : gs) out.emplace_back(g.begin(), g.end());
  return out;
}

/// The first group (of want and got) that differs, as text; empty if they are equal.
inline std::string first_difference(const groups& want, const groups& got) {
  const auto text = [](const std::vector<int>& g) {
    std::string s = "[";
    for (std::size_t i = 0; i < g.size(); ++i) s += (i ? "," : "") + std::to_string(g[i]);
    return s + "]";
  };
  if (want.size() != got.size())
    return std::to_string(got.size()) + " groups, recorded " + std::to_string(want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    if (want[i] != got[i]) return "group " + std::to_string(i) + " is " + text(got[i]) + ", recorded " + text(want[i]);
  return {};
}

}  // namespace recorded
