// devmesh/runtime/impl/digest.ipp: digest.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <string_view>

#include "../digest.hpp"

namespace devmesh::detail {

DEVMESH_DECL digest sha256_at_run_time(std::string_view text) { return sha256_of(text); }

}  // namespace devmesh::detail
