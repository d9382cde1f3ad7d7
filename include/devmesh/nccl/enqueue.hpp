// devmesh/nccl/enqueue.hpp: when enqueued NCCL work settles, and NCCL groups.
//
// A call on a non-blocking communicator may answer ncclInProgress. Outside a group devmesh
// waits for it at once (bounded by options::timeout; abort on failure); inside a group the
// communicator settles only after the outermost ncclGroupEnd, so devmesh remembers it and
// group_end() waits for every such communicator together, aborting them all on failure.
#pragma once
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <nccl.h>

#include "../core/diagnostics.hpp"
#include "error.hpp"
#include "handle.hpp"
#include "wait.hpp"

namespace devmesh::nccl::detail {

/// Per-thread mirror of the NCCL group depth, and the non-blocking communicators whose
/// calls inside the group may still be in progress: group_end() waits for them.
struct group_registry {
  int depth = 0;
  std::vector<comm_state*> pending;
};
inline group_registry& groups() {
  thread_local group_registry g;
  return g;
}

inline void add_pending(comm_state* s) {
  auto& p = groups().pending;
  if (std::find(p.begin(), p.end(), s) == p.end()) p.push_back(s);
}

/// ncclGroupStart, counted.
inline void group_start() {
  ncclResult_t r = ncclGroupStart();
  if (r != ncclSuccess) throw_nccl("ncclGroupStart", r, nullptr);
  ++groups().depth;
}

/// The outermost group's communicators settle together, bounded by the longest of their
/// timeouts; on failure every one of them is aborted.
inline void settle_group(const std::vector<comm_state*>& pending) {
  std::vector<ncclComm_t> comms;
  auto timeout = pending.front()->opts.timeout;
  for (auto* s : pending) {
    comms.push_back(s->comm);
    timeout = std::max(timeout, s->opts.timeout);
  }
  const wait_result w = wait_all(comms, timeout);
  if (!w.failed()) return;
  std::string names;
  for (auto* s : pending) {
    names += (names.empty() ? "" : ", ") + s->label();
    s->abort();
  }
  throw comm_error("devmesh: ncclGroupEnd over " + names + ": " + w.what(timeout) +
                   "; aborted every communicator of the group");
}

/// ncclGroupEnd; the outermost one waits for the group's non-blocking communicators.
inline void group_end() {
  auto& g = groups();
  ncclResult_t r = ncclGroupEnd();
  if (g.depth > 0) --g.depth;
  if (g.depth > 0) {
    if (r != ncclSuccess && r != ncclInProgress) throw_nccl("ncclGroupEnd (nested)", r, nullptr);
    return;
  }
  std::vector<comm_state*> pending = std::move(g.pending);
  g.pending.clear();
  if (r != ncclSuccess && r != ncclInProgress) {
    for (auto* s : pending) s->abort();
    throw_nccl("ncclGroupEnd", r, nullptr);
  }
  if (!pending.empty()) settle_group(pending);
}

/// Runs enqueue() (NCCL calls) as one group; if it throws, the group still ends (quietly)
/// and the first error propagates.
template <class Enqueue>
void as_group(Enqueue enqueue) {
  group_start();
  try {
    enqueue();
  } catch (...) {
    try {
      group_end();
    } catch (...) {
    }
    throw;
  }
  group_end();
}

/// The result r of an enqueueing call on s: errors throw; inside a group s settles at the
/// outermost group_end() (whatever this call answered); outside one, ncclInProgress is
/// waited for here (bounded; s is aborted on failure or timeout).
inline void enqueued(comm_state& s, const char* call, ncclResult_t r) {
  if (r != ncclSuccess && r != ncclInProgress) throw_nccl(std::string(call) + " on " + s.label(), r, s.comm);
  if (groups().depth > 0) {
    if (!s.opts.blocking) add_pending(&s);
    return;
  }
  if (r == ncclSuccess) return;
  const wait_result w = wait_all({s.comm}, s.opts.timeout);
  if (!w.failed()) return;
  std::string what = w.what(s.opts.timeout, s.comm);
  std::string label = s.label();
  s.abort();
  throw comm_error("devmesh: " + std::string(call) + " on " + label + ": " + what + "; communicator aborted");
}

}  // namespace devmesh::nccl::detail
