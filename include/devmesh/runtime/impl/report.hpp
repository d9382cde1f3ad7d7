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

// Declared in report.hpp too, which includes this header first in header-only mode.
DEVMESH_DECL int report_alone(int rank, const std::string& error, const std::string& why, std::FILE* out);
DEVMESH_DECL int report_outcomes(const std::vector<std::string>& texts, int rank, int code, std::FILE* out);

template <communicator Comm>
int mesh_runtime<Comm>::report_once(const Comm& world, function_ref<int(std::string&)> body, std::FILE* out,
                                    std::chrono::milliseconds timeout) {
  const Comm control = world.duplicate(deadline::after(timeout));
  std::string error;
  const int code = body(error);
  std::vector<std::string> texts;
  try {
    texts = gather_texts(control, error, deadline::after(timeout));
  } catch (const std::exception& e) {
    return report_alone(world.rank(), error, std::string("the other ranks did not report: ") + e.what(), out);
  }
  return report_outcomes(texts, world.rank(), code, out);
}

}  // namespace devmesh::detail
