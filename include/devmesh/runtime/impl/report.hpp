// devmesh/runtime/impl/report.hpp: mesh_runtime::report_once (runtime/report.hpp): the body run
// on every rank, then one bounded gathering of every rank's outcome over a duplicate of the
// world made before the body ran.
#pragma once
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "../mesh_runtime.hpp"
#include "../report.hpp"
#include "consensus.hpp"

namespace devmesh::detail {

// Declared in report.hpp too (which includes this header first in header-only mode).
DEVMESH_DECL std::string outcome_report(const std::vector<std::string>& texts);

template <communicator Comm>
int mesh_runtime<Comm>::report_once(const Comm& world, function_ref<int(std::string&)> body, std::FILE* out,
                                    std::chrono::milliseconds timeout) {
  const Comm control = world.duplicate(deadline::after(timeout));
  std::string error;
  const int code = body(error);
  const auto alone = [&](const std::string& why) {
    const std::string line = "rank " + std::to_string(world.rank()) + ": " +
                             (error.empty() ? std::string("no error here") : "error: " + error) + "; " + why + "\n";
    std::fputs(line.c_str(), out);  // one write: lines of several ranks do not interleave
    return 1;
  };
  std::vector<std::string> texts;
  try {
    texts = gather_texts(control, error, deadline::after(timeout));
  } catch (const std::exception& e) {
    return alone(std::string("the other ranks did not report: ") + e.what());
  }
  std::size_t first = 0;
  while (first < texts.size() && texts[first].empty()) ++first;
  if (first == texts.size()) return code;
  if (static_cast<int>(first) == world.rank()) {
    std::fputs(outcome_report(texts).c_str(), out);
    std::fflush(out);
  }
  return 1;
}

}  // namespace devmesh::detail
