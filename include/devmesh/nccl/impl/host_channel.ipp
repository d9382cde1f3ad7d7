// devmesh/nccl/impl/host_channel.ipp: host_channel.hpp's definitions (compiled once, or inline
// in header-only mode: core/config.hpp).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include <nccl.h>

#include "../../core/diagnostics.hpp"
#include "../error.hpp"
#include "../host_channel.hpp"

namespace devmesh::nccl::detail {

DEVMESH_DECL rank_outcome outcome_of(const wait_result& w) {
  const outcome o = w.timed_out ? outcome::timed_out : w.result != ncclSuccess ? outcome::failed : outcome::ok;
  return {static_cast<int>(o), static_cast<int>(w.result)};
}

DEVMESH_DECL const char* outcome_code_name(int c) {
  return c < 0 ? "device selection" : result_name(static_cast<ncclResult_t>(c));
}

DEVMESH_DECL std::string agree(const host_channel* ch, int my_rank, rank_outcome mine, const char* (*code_name)(int)) {
  std::vector<rank_outcome> all;
  if (ch) {
    all.resize(static_cast<std::size_t>(ch->size()));
    ch->all_gather_bytes(&mine, all.data(), sizeof(rank_outcome), deadline::never());
  } else {
    all.assign(1, mine);
  }
  std::string failed, timed_out, skipped;
  auto add = [](std::string& s, int r, const std::string& extra) {
    s += (s.empty() ? "" : ", ") + std::to_string(r) + extra;
  };
  for (std::size_t i = 0; i < all.size(); ++i) {
    int r = ch ? static_cast<int>(i) : my_rank;
    switch (static_cast<outcome>(all[i].what)) {
      case outcome::ok: break;
      case outcome::failed: add(failed, r, std::string(" [") + code_name(all[i].code) + "]"); break;
      case outcome::timed_out: add(timed_out, r, ""); break;
      case outcome::skipped: add(skipped, r, ""); break;
    }
  }
  std::string s;
  if (!failed.empty()) s += "failed on rank(s) " + failed;
  if (!timed_out.empty()) s += (s.empty() ? "" : "; ") + std::string("timed out on rank(s) ") + timed_out;
  if (!skipped.empty())
    s += (s.empty() ? "" : "; ") + std::string("not attempted on rank(s) ") + skipped +
         " (an earlier step failed there)";
  return s;
}

DEVMESH_DECL void agree_or_throw(const host_channel* ch, int my_rank, rank_outcome mine, const std::string& step,
                                 const std::string& local, const char* consequence,
                                 devmesh::detail::call_ref<void> drop) {
  std::string summary;
  try {
    summary = agree(ch, my_rank, mine, outcome_code_name);
  } catch (...) {
    drop();
    throw;
  }
  if (summary.empty()) return;
  drop();
  throw comm_error("devmesh: " + step + " " + summary + (local.empty() ? std::string() : "; here: " + local) +
                   consequence);
}

}  // namespace devmesh::nccl::detail
