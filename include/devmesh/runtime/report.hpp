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
#include "consensus.hpp"
#include "deadline.hpp"

namespace devmesh {

namespace detail {
/// The report of gathered outcomes (texts[r]: rank r's error, "" if it returned normally):
/// one line per distinct message, in order of its first rank, naming every rank that had it.
/// A text that filled its slot was cut: it says so.
template <class = void>
std::string outcome_report(const std::vector<std::string>& texts) {
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
  const Comm control = world.duplicate(deadline::after(timeout));
  std::string error;
  const int code = detail::run_catching(body, error);
  const auto alone = [&](const std::string& why) {
    const std::string line = "rank " + std::to_string(world.rank()) + ": " +
                             (error.empty() ? std::string("no error here") : "error: " + error) + "; " + why + "\n";
    std::fputs(line.c_str(), out);  // one write: lines of several ranks do not interleave
    return 1;
  };
  std::vector<std::string> texts;
  try {
    texts = detail::gather_texts(control, error, deadline::after(timeout));
  } catch (const std::exception& e) {
    return alone(std::string("the other ranks did not report: ") + e.what());
  }
  std::size_t first = 0;
  while (first < texts.size() && texts[first].empty()) ++first;
  if (first == texts.size()) return code;
  if (static_cast<int>(first) == world.rank()) {
    std::fputs(detail::outcome_report(texts).c_str(), out);
    std::fflush(out);
  }
  return 1;
}

}  // namespace devmesh
