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
// prints its own outcome and says the others did not report. The body's run, the outcomes'
// text and the printing are compiled once (runtime/impl/report.ipp).
#pragma once
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include "../core/config.hpp"
#include "backend.hpp"
#include "mesh_runtime.hpp"
#include "deadline.hpp"
#include "text_ref.hpp"

namespace devmesh {

namespace detail {
/// The report of gathered outcomes (texts[r]: rank r's error, "" if it returned normally):
/// one line per distinct message, in order of its first rank, naming every rank that had it.
/// A text that filled its slot was cut: it says so.
DEVMESH_DECL std::string outcome_report(const std::vector<std::string>& texts);

/// body()'s exit code, and what it threw as text ("" if nothing).
DEVMESH_DECL int run_catching(call_ref<int> body, std::string& error);

/// A rank that could not learn the others' outcomes: prints its own ("error: ..." or "no error
/// here") and `why`, in one write; returns 1.
DEVMESH_DECL int report_alone(int rank, const std::string& error, const std::string& why, std::FILE* out);

/// Every rank's outcome known (texts[r]: rank r's error, "" if none): `code` where no rank
/// failed; else the lowest failing rank writes outcome_report(texts) to `out`, and 1.
DEVMESH_DECL int report_outcomes(const std::vector<std::string>& texts, int rank, int code, std::FILE* out);
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
      world,
      [&](std::string& error) {
        return detail::run_catching(
            [&]() -> int {
              if constexpr (std::is_void_v<decltype(body())>) {
                body();
                return 0;
              } else {
                return static_cast<int>(body());
              }
            },
            error);
      },
      out, timeout);
}

}  // namespace devmesh

#if DEVMESH_HEADER_ONLY
#include "impl/report.ipp"
#endif
