// devmesh/nccl/impl/split.ipp: split.hpp's definitions (compiled once, or inline in header-only
// mode: core/config.hpp).
#pragma once
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include <nccl.h>

#include "../../core/diagnostics.hpp"
#include "../../runtime/backend.hpp"
#include "../error.hpp"
#include "../host_channel.hpp"
#include "../split.hpp"
#include "../wait.hpp"

namespace devmesh::nccl::detail {

DEVMESH_DECL comm_handle split(const comm_handle& h, int color, int key, const options& o) {
  comm_state& s = h.use("ncclCommSplit");
  const std::string call = "ncclCommSplit(color=" + std::to_string(color) + ", key=" + std::to_string(key) +
                           (o.name.empty() ? std::string() : ", commName='" + o.name + "'") + ") of " + s.label();
  if (color < 0 && color != no_color) throw comm_error("devmesh: " + call + ": color must be >= 0 or dm::no_color");
  ncclConfig_t cfg = to_config(o);
  ncclComm_t child = nullptr;
  const ncclResult_t r = ncclCommSplit(s.comm, color == no_color ? NCCL_SPLIT_NOCOLOR : color, key, &child, &cfg);
  const auto timeout = std::min(o.timeout, s.opts.timeout);
  wait_result w{r, s.comm, false};
  if (may_be_in_progress(r, o.blocking && s.opts.blocking))
    w = wait_all({s.opts.blocking ? nullptr : s.comm, child}, timeout);
  agree_or_throw(s.channel.get(), s.rank, outcome_of(w), call, w.what(timeout, s.comm),
                 "; aborted the new and the parent communicator", [&]() noexcept {
                   if (child) ncclCommAbort(child);
                   child = nullptr;
                   s.abort();
                 });
  // The child's host channel keeps its control steps (outcome agreement, the collective
  // check mode) on the host.
  std::shared_ptr<const host_channel> channel;
  if (s.channel) channel = s.channel->split(child ? color : no_color, key);
  if (!child) return comm_handle();  // no_color
  return comm_handle(child, o, true, std::move(channel));
}

}  // namespace devmesh::nccl::detail
