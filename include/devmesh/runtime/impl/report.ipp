// devmesh/runtime/impl/report.ipp: report.hpp's untyped definitions (compiled once, or inline
// in header-only mode: core/config.hpp).
#pragma once
#include <string>
#include <vector>

#include "../report.hpp"
#include "consensus.hpp"

namespace devmesh::detail {

/// The report of gathered outcomes (texts[r]: rank r's error, "" if it returned normally):
/// one line per distinct message, in order of its first rank, naming every rank that had it.
/// A text that filled its slot was cut: it says so.
DEVMESH_DECL std::string outcome_report(const std::vector<std::string>& texts) {
  std::vector<std::string> seen;
  std::vector<std::vector<int>> who;
  for (std::size_t r = 0; r < texts.size(); ++r) {
    if (texts[r].empty()) continue;
    std::size_t i = 0;
    while (i < seen.size() && seen[i] != texts[r]) ++i;
    if (i == seen.size()) seen.push_back(texts[r]), who.emplace_back();
    who[i].push_back(static_cast<int>(r));
  }
  std::string out;
  for (std::size_t i = 0; i < seen.size(); ++i)
    out += "error on " + ranks_phrase(who[i]) + ": " + seen[i] +
           (seen[i].size() + 1 >= slot_bytes ? " [... cut to " + std::to_string(slot_bytes - 1) + " bytes]" : "") +
           "\n";
  return out;
}

}  // namespace devmesh::detail
