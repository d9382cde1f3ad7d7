// devmesh/nccl/impl/group.ipp: group.hpp's definitions (compiled once, or inline in header-only
// mode: core/config.hpp).
#pragma once
#include <exception>

#include "../communicator.hpp"
#include "../group.hpp"

namespace devmesh::nccl {

DEVMESH_DECL group::group() : uncaught_(std::uncaught_exceptions()) { communicator::group_start(); }

DEVMESH_DECL void group::end() {
  if (open_) {
    open_ = false;
    communicator::group_end();
  }
}

DEVMESH_DECL group::~group() noexcept(false) {
  if (!open_) return;
  if (std::uncaught_exceptions() > uncaught_) {
    open_ = false;
    try {
      communicator::group_end();
    } catch (...) {
    }
  } else {
    end();
  }
}

}  // namespace devmesh::nccl
