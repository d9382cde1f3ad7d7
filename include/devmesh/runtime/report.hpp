// devmesh/runtime/report.hpp: a failure reported once, not once per rank.
//
//   int main(int argc, char** argv) {
//     dm::mpi::environment env(argc, argv);
//     auto world = dm::mpi::world();
//     return dm::report_once(world, [&] { return run(world); });   // 0, or 1 on every rank
//   }
//
// devmesh throws the same error on every rank (its contract), so a program that lets each rank
// print it shows the message eight times, interleaved with "terminate called". report_once runs
// the body on every rank, then the ranks gather their outcomes in one bounded step over a
// private duplicate of the world, and the first failing rank prints each distinct message once,
// with the ranks it concerns: "error on ranks 0-7: devmesh: ...". A rank that never arrives
// (it hangs elsewhere, or died) cannot hold the others: past the deadline each waiting rank
// prints its own outcome and says the others did not report.
#pragma once
#include <cstdio>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include "backend.hpp"
#include "mesh_runtime.hpp"
#include "deadline.hpp"

namespace devmesh {

namespace detail {
/// The report of gathered outcomes (texts[r]: rank r's error, "" if it returned normally):
/// one line per distinct message, in order of its first rank, naming every rank that had it.
/// A text that filled its slot was cut: it says so.
DEVMESH_DECL std::string outcome_report(const std::vector<std::string>& texts);

/// body()'s exit code (void: 0), and what it threw as text ("" if nothing).
template <class Body>
int run_catching(Body& body, std::string& error) {
  try {
    if constexpr (std::is_void_v<decltype(body())>) {
      body();
      return 0;
    } else {
      return static_cast<int>(body());
    }
  } catch (const std::exception& e) {
    error = *e.what() ? e.what() : "an exception with an empty what()";
  } catch (...) {
    error = "an exception that is not a std::exception";
  }
  return 1;
}
}  // namespace detail

/// Runs body() on every rank of `world` (collective: every rank calls it) and reports failures
/// once: the lowest failing rank writes one line per distinct error to `out`, naming the ranks
/// that had it. Returns body()'s exit code (0 for a void body) where no rank failed, else 1 on
/// every rank. The outcomes travel in one bounded step (`timeout`: DEVMESH_TIMEOUT, else
/// 600 s) over a duplicate of world made before body runs; a rank that waits longer prints its
/// own outcome and that the others did not report, and returns 1.
template <communicator Comm, class Body>
int report_once(const Comm& world, Body&& body, std::FILE* out = stderr,
                std::chrono::milliseconds timeout = timeout_from_env()) {
  return detail::mesh_runtime<Comm>::report_once(
      world, [&](std::string& error) { return detail::run_catching(body, error); }, out, timeout);
}

}  // namespace devmesh

#if DEVMESH_HEADER_ONLY
#include "impl/report.ipp"
#endif
