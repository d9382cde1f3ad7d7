// devmesh/mpi/impl/finalize_watch.ipp: whether MPI may be called now, as the collectives ask it.
//
// An MPI call before MPI_Init or after MPI_Finalize makes MPI abort the job; devmesh throws
// comm_error instead. Asking MPI_Finalized on every collective would cost a library call, so
// the first communicator registers a callback that MPI_Finalize runs first (an attribute on
// MPI_COMM_SELF), and the collectives' hot path tests one relaxed atomic.
#pragma once
#include <atomic>
#include <mutex>
#include <string>

#include "../native.hpp"

#include "../../core/config.hpp"
#include "../../core/diagnostics.hpp"

namespace devmesh::mpi::detail {


/// Whether MPI may be finalized, as the hot path sees it: `live` once MPI is initialized and
/// devmesh watches MPI_Finalize, until that begins; anything else sends the caller to the
/// slow path (require_mpi_usable), which asks MPI.
enum class mpi_phase : int { unwatched = 0, live = 1, finalizing = 2 };
inline std::atomic<int> phase{static_cast<int>(mpi_phase::unwatched)};
inline std::mutex phase_mutex;

/// True while devmesh watches MPI_Finalize and it has not begun: one relaxed load.
DEVMESH_DECL bool mpi_live() noexcept {
  return phase.load(std::memory_order_relaxed) == static_cast<int>(mpi_phase::live);
}

/// True when MPI is finalized: exact (MPI_Finalized), for the slow path.
DEVMESH_DECL bool mpi_finalized() noexcept {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

/// Why MPI cannot be called now, or nullptr when it can.
DEVMESH_DECL const char* mpi_unusable() noexcept {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return "MPI is not initialized (create a devmesh::mpi::environment first)";
  return mpi_finalized() ? "MPI is finalized (MPI_Finalize was called)" : nullptr;
}

/// MPI_Finalize deletes MPI_COMM_SELF's attributes before anything else (MPI 3.1, 8.7.1,
/// "Allowing User Functions at Process Termination"): this callback marks the process
/// finalizing, so that no later call takes the fast path.
DEVMESH_DECL int on_finalize(MPI_Comm, int, void*, void*) {
  phase.store(static_cast<int>(mpi_phase::finalizing), std::memory_order_relaxed);
  return MPI_SUCCESS;
}

/// Registers on_finalize once per process (thread-safe), if MPI is initialized and not
/// finalized; until then (or if MPI refuses the attribute) the phase stays `unwatched` and
/// every call asks MPI, as it would without the watch.
DEVMESH_DECL void watch_finalize() {
  if (phase.load(std::memory_order_acquire) != static_cast<int>(mpi_phase::unwatched)) return;
  std::lock_guard lock(phase_mutex);
  if (phase.load(std::memory_order_relaxed) != static_cast<int>(mpi_phase::unwatched)) return;
  if (mpi_unusable()) return;
  int key = MPI_KEYVAL_INVALID;
  if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &on_finalize, &key, nullptr) != MPI_SUCCESS) return;
  const bool set = MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr) == MPI_SUCCESS;
  MPI_Comm_free_keyval(&key);  // the attribute keeps it alive until MPI_Finalize deletes it
  if (set) phase.store(static_cast<int>(mpi_phase::live), std::memory_order_release);
}

/// The slow path of every call when mpi_live() is false: watches MPI_Finalize if it can
/// now, then throws comm_error("devmesh: mpi: <what>: MPI is ...") unless MPI may be called.
[[gnu::cold, gnu::noinline]] DEVMESH_DECL void require_mpi_usable(const char* what) {
  watch_finalize();
  if (const char* why = mpi_unusable()) throw comm_error("devmesh: mpi: " + std::string(what) + ": " + why);
}

}  // namespace devmesh::mpi::detail
