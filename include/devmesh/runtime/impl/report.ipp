// devmesh/runtime/impl/report.ipp: report.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <cstddef>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "consensus.hpp"
#include "../report.hpp"

namespace devmesh::detail {

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

DEVMESH_DECL int run_catching(call_ref<int> body, std::string& error) {
  try {
    return body();
  } catch (const std::exception& e) {
    error = *e.what() ? e.what() : "an exception with an empty what()";
  } catch (...) {
    error = "an exception that is not a std::exception";
  }
  return 1;
}

DEVMESH_DECL int report_alone(int rank, const std::string& error, const std::string& why, std::FILE* out) {
  const std::string line = "rank " + std::to_string(rank) + ": " +
                           (error.empty() ? std::string("no error here") : "error: " + error) + "; " + why + "\n";
  std::fputs(line.c_str(), out);  // one write: lines of several ranks do not interleave
  return 1;
}

DEVMESH_DECL int report_outcomes(const std::vector<std::string>& texts, int rank, int code, std::FILE* out) {
  std::size_t first = 0;
  while (first < texts.size() && texts[first].empty()) ++first;
  if (first == texts.size()) return code;
  if (static_cast<int>(first) == rank) {
    std::fputs(outcome_report(texts).c_str(), out);
    std::fflush(out);
  }
  return 1;
}

}  // namespace devmesh::detail
