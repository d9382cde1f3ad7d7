// devmesh/mpi/impl/handle.ipp: handle.hpp's definitions (compiled once, or inline in
// header-only mode: core/config.hpp).
#pragma once
#include <string>
#include <utility>

#include "../../core/diagnostics.hpp"
#include "../error.hpp"
#include "../handle.hpp"
#include "finalize_watch.ipp"

namespace devmesh::mpi::detail {

DEVMESH_DECL comm_handle comm_handle::adopt(MPI_Comm c) {
  if (c != MPI_COMM_NULL) check(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  return comm_handle(c, c != MPI_COMM_WORLD && c != MPI_COMM_SELF);
}

DEVMESH_DECL comm_handle comm_handle::borrow(MPI_Comm c) { return comm_handle(c, false); }

DEVMESH_DECL comm_handle& comm_handle::operator=(comm_handle&& o) noexcept {
  if (this != &o) {
    reset();
    comm_ = std::exchange(o.comm_, MPI_COMM_NULL);
    owned_ = std::exchange(o.owned_, false);
    rank_ = std::exchange(o.rank_, -1);
    size_ = std::exchange(o.size_, 0);
    broken_ = std::exchange(o.broken_, std::string());
    group_tag_ = std::exchange(o.group_tag_, 0u);
  }
  return *this;
}

DEVMESH_DECL MPI_Comm comm_handle::use(const char* what) const {
  if (comm_ == MPI_COMM_NULL) [[unlikely]]
    invalid_error(what);
  if (!mpi_live()) [[unlikely]]
    require_mpi_usable(what);
  if (!broken_.empty()) [[unlikely]]
    broken_error(what);
  return comm_;
}

DEVMESH_DECL void comm_handle::mark_unusable(std::string why) const {
  if (broken_.empty()) broken_ = std::move(why);
}

DEVMESH_DECL void comm_handle::abort() noexcept {
  try {
    mark_unusable("it was aborted (abort())");
  } catch (...) {  // no memory for the text: the communicator stays usable, as before
  }
}

DEVMESH_DECL comm_handle::comm_handle(MPI_Comm c, bool owned) : comm_(c), owned_(owned) {
  if (c == MPI_COMM_NULL) return;
  watch_finalize();  // a communicator exists: from now on, calls check one flag
  if (!mpi_live()) [[unlikely]]
    require_mpi_usable("communicator");  // MPI_Comm_rank would abort the job
  check(MPI_Comm_rank(c, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(c, &size_), "MPI_Comm_size");
}

DEVMESH_DECL void comm_handle::reset() noexcept {
  if (owned_ && comm_ != MPI_COMM_NULL && !mpi_finalized()) MPI_Comm_free(&comm_);
  comm_ = MPI_COMM_NULL;
  owned_ = false;
  rank_ = -1;
  size_ = 0;
}

DEVMESH_DECL void comm_handle::invalid_error(const char* what) {
  throw comm_error("devmesh: mpi: " + std::string(what) + " on an invalid communicator (MPI_COMM_NULL)");
}

DEVMESH_DECL void comm_handle::broken_error(const char* what) const {
  throw comm_error("devmesh: mpi: " + std::string(what) + " on a communicator that is unusable: " + broken_);
}

}  // namespace devmesh::mpi::detail
