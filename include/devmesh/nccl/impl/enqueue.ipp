// devmesh/nccl/impl/enqueue.ipp: enqueue.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <nccl.h>

#include "../../core/diagnostics.hpp"
#include "../enqueue.hpp"
#include "../error.hpp"
#include "../wait.hpp"

namespace devmesh::nccl::detail {

DEVMESH_DECL group_registry& groups() {
  thread_local group_registry g;
  return g;
}

DEVMESH_DECL void add_pending(comm_state* s) {
  auto& p = groups().pending;
  if (std::find(p.begin(), p.end(), s) == p.end()) p.push_back(s);
}

DEVMESH_DECL void group_start() {
  ncclResult_t r = ncclGroupStart();
  if (r != ncclSuccess) throw_nccl("ncclGroupStart", r, nullptr);
  ++groups().depth;
}

DEVMESH_DECL void settle_group(const std::vector<comm_state*>& pending) {
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

DEVMESH_DECL void group_end() {
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

DEVMESH_DECL void as_group(devmesh::detail::call_ref<void> enqueue) {
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

DEVMESH_DECL void enqueued(comm_state& s, const char* call, ncclResult_t r) {
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
