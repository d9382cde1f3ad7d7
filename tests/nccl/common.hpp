// tests/nccl/common.hpp: helpers of the NCCL backend tests that run over the test double.
#pragma once
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include <devmesh/nccl.hpp>
#include <devmesh/nccl/mpi_bootstrap.hpp>

#include "double/fake_control.h"

namespace nccl_test {

namespace dm = devmesh;

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

/// Short timeouts: the fault tests must end in seconds.
inline dm::nccl::options fast(bool blocking = false) {
  dm::nccl::options o;
  o.blocking = blocking;
  o.timeout = std::chrono::milliseconds(1500);
  return o;
}

/// True on every rank iff `ok` is true on every rank.
inline bool all_true(bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

/// Sets (or, with nullptr, unsets) an environment variable for a scope.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      had_ = true;
      old_ = old;
    }
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;
  ~scoped_env() {
    if (had_)
      setenv(name_.c_str(), old_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

}  // namespace nccl_test
