// tests/gpu/common.hpp: what every part of gpu-check shares.
//
// - report: one "PASS  <check>: <detail>" / "FAIL  <check>: <detail>" / "SKIP  ..." line per
//   check and the summary "N passed, N failed". Under MPI with several ranks a check is
//   collective: it passes only if it passed on every rank, and rank 0 prints the failing
//   ranks' details.
// - device memory and streams (dbuf, stream) with a bounded wait, so that a collective that
//   never completes fails its check instead of hanging the program.
//
// The same sources build two programs: gpu_check (nvcc, the real libcudart and libnccl:
// what runs on a GPU machine) and gpu_check_double (g++, GPU_CHECK_DOUBLE, linked with the
// NCCL/CUDA test double of tests/nccl/double), which runs the NCCL checks' own logic here,
// without a GPU. Under the double "device memory" is host memory and nothing is launched.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

namespace gpu_check {

#if defined(GPU_CHECK_DOUBLE)
inline constexpr bool on_double = true;
#else
inline constexpr bool on_double = false;
#endif

// ---- MPI ----------------------------------------------------------------------------------
inline bool mpi_active() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}
inline int world_rank() {
  int r = 0;
  if (mpi_active()) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int world_size() {
  int n = 1;
  if (mpi_active()) MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}
/// Collective: true on every rank iff `ok` on every rank.
inline bool all_ranks(bool ok) {
  if (world_size() == 1) return ok;
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}
/// Collective: every rank's string, on rank 0 (empty elsewhere).
inline std::vector<std::string> gather_strings(const std::string& mine) {
  const int n = world_size();
  if (n == 1) return {mine};
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(n)), offs(static_cast<std::size_t>(n));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < n; ++r) offs[static_cast<std::size_t>(r)] = total, total += lens[static_cast<std::size_t>(r)];
  std::string all(static_cast<std::size_t>(world_rank() == 0 ? total : 0), '\0');
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (world_rank() == 0)
    for (int r = 0; r < n; ++r)
      out.push_back(all.substr(static_cast<std::size_t>(offs[static_cast<std::size_t>(r)]),
                               static_cast<std::size_t>(lens[static_cast<std::size_t>(r)])));
  return out;
}

// ---- results ------------------------------------------------------------------------------
/// What one check found on this rank.
struct result {
  bool ok = true;
  std::string detail;
};

/// Collects mismatches: counts them all, keeps the first few descriptions.
class mismatches {
 public:
  void add(const std::string& what) {
    if (count_ < 3) text_ += (text_.empty() ? "" : "; ") + what;
    ++count_;
  }
  bool ok() const { return count_ == 0; }
  int count() const { return count_; }
  std::string text() const {
    return count_ <= 3 ? text_ : text_ + "; ... (" + std::to_string(count_) + " mismatches in all)";
  }

 private:
  int count_ = 0;
  std::string text_;
};

class report {
 public:
  /// Collective when several MPI ranks run: every rank calls it, in the same order.
  bool check(const std::string& name, bool ok, const std::string& detail) {
    const bool all = all_ranks(ok);
    if (world_size() == 1) {
      line(ok ? "PASS" : "FAIL", name, detail);
    } else {
      const auto details = gather_strings(ok ? std::string() : detail);
      if (world_rank() == 0) {
        if (all) {
          const std::string all_ranks_text = "on all " + std::to_string(world_size()) + " ranks";
          line("PASS", name, detail.empty() ? all_ranks_text : detail + " (" + all_ranks_text + ")");
        } else {
          std::string why;
          int shown = 0, bad = 0;
          for (std::size_t r = 0; r < details.size(); ++r) {
            if (details[r].empty()) continue;
            ++bad;
            if (shown++ < 3) why += (why.empty() ? "" : " | ") + ("rank " + std::to_string(r) + ": " + details[r]);
          }
          if (bad > 3) why += " | ... (" + std::to_string(bad) + " ranks failed)";
          line("FAIL", name, why);
        }
      }
    }
    (all ? passed_ : failed_)++;
    return all;
  }
  /// Runs f (returning result) on every rank, an exception being a failure, then check().
  template <class F>
  bool run(const std::string& name, F&& f) {
    result r;
    try {
      r = f();
    } catch (const std::exception& e) {
      r = {false, std::string("exception: ") + e.what()};
    } catch (...) {
      r = {false, "unknown exception"};
    }
    return check(name, r.ok, r.detail);
  }
  void skip(const std::string& name, const std::string& why) {
    if (world_rank() == 0) line("SKIP", name, why);
  }
  /// A plain line from rank 0.
  void note(const std::string& text) {
    if (world_rank() == 0) {
      std::printf("%s\n", text.c_str());
      std::fflush(stdout);
    }
  }
  int passed() const { return passed_; }
  int failed() const { return failed_; }
  /// Prints "N passed, N failed" (rank 0); 0 if nothing failed, else 1.
  int finish() {
    if (world_rank() == 0) {
      std::printf("%d passed, %d failed\n", passed_, failed_);
      std::fflush(stdout);
    }
    return failed_ == 0 ? 0 : 1;
  }

 private:
  static void line(const char* verdict, const std::string& name, const std::string& detail) {
    std::printf("%s  %s%s%s\n", verdict, name.c_str(), detail.empty() ? "" : ": ", detail.c_str());
    std::fflush(stdout);
  }
  int passed_ = 0;
  int failed_ = 0;
};

// ---- CUDA ---------------------------------------------------------------------------------
inline std::string cuda_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}
inline void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: " + cuda_text(e));
}

/// Enqueues on `s` a kernel that only waits `delay_us` microseconds of device time
/// (common.cu; nothing under the double). Inputs written after it on `s` arrive late, so a
/// collective wrongly enqueued on another stream reads stale data instead of passing by luck.
void enqueue_delay(unsigned delay_us, cudaStream_t s);

/// Waits for everything enqueued on `s`, at most `seconds`. False (and `error`) on a
/// timeout or a CUDA error.
bool wait_stream(cudaStream_t s, double seconds, std::string& error);

/// A non-default CUDA stream (non-blocking with respect to the legacy default stream).
class stream {
 public:
  stream();
  ~stream();
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  cudaStream_t get() const { return s_; }
  operator cudaStream_t() const { return s_; }
  /// wait_stream with a default bound; throws on failure.
  void sync(double seconds = 120) const {
    std::string err;
    if (!wait_stream(s_, seconds, err)) throw std::runtime_error(err);
  }

 private:
  cudaStream_t s_ = nullptr;
};

/// n elements of T in device memory, freed at scope exit.
template <class T>
class dbuf {
 public:
  explicit dbuf(std::size_t n) : n_(n), owner_(true) {
    cuda_ok(cudaMalloc(reinterpret_cast<void**>(&p_), std::max<std::size_t>(n, 1) * sizeof(T)), "cudaMalloc");
  }
  /// A view of n elements at p, inside another dbuf (nothing allocated: cudaMalloc may
  /// synchronize the device, which would let late inputs arrive before a collective runs).
  dbuf(T* p, std::size_t n) : p_(p), n_(n), owner_(false) {}
  ~dbuf() {
    if (p_ && owner_) cudaFree(p_);
  }
  dbuf(const dbuf&) = delete;
  dbuf& operator=(const dbuf&) = delete;

  T* data() { return p_; }
  const T* data() const { return p_; }
  std::size_t size() const { return n_; }
  std::span<T> span() { return {p_, n_}; }
  std::span<const T> cspan() const { return {p_, n_}; }

  /// Enqueues on `s`: the buffer gets `values` (values.size() == size()), after `delay_us`
  /// microseconds of device time. (cudaMemcpyAsync from pageable memory copies `values` to
  /// a staging buffer before it returns, so they need not outlive the call.)
  void write(const std::vector<T>& values, cudaStream_t s, unsigned delay_us = 0) {
    if (values.size() != n_) throw std::logic_error("dbuf::write: wrong size");
    if (delay_us) enqueue_delay(delay_us, s);
    cuda_ok(cudaMemcpyAsync(p_, values.data(), n_ * sizeof(T), cudaMemcpyHostToDevice, s), "cudaMemcpyAsync");
  }
  /// Enqueues on `s`: every byte of the first `count` elements becomes `byte`.
  void fill_bytes(int byte, std::size_t count, cudaStream_t s) {
    if constexpr (on_double) {
      (void)s;
      cuda_ok(cudaMemset(p_, byte, count * sizeof(T)), "cudaMemset");
    } else {
      cuda_ok(cudaMemsetAsync(p_, byte, count * sizeof(T), s), "cudaMemsetAsync");
    }
  }
  /// The first `count` values (default: all; call once the stream that wrote them is done).
  std::vector<T> read(std::size_t count = static_cast<std::size_t>(-1)) const {
    std::vector<T> out(std::min(count, n_));
    cuda_ok(cudaMemcpy(out.data(), p_, out.size() * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy (read back)");
    return out;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_;
  bool owner_;
};

// ---- environment --------------------------------------------------------------------------
/// Sets (value != nullptr) or unsets an environment variable for a scope, then restores it.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) had_ = true, old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  scoped_env(const char* name, const std::string& value) : scoped_env(name, value.c_str()) {}
  ~scoped_env() {
    if (had_)
      setenv(name_.c_str(), old_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  std::string name_;
  bool had_ = false;
  std::string old_;
};

/// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's choice).
int free_port();

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ---- the parts of gpu-check (one translation unit each) ------------------------------------
struct options {
  bool bench = false;
  std::size_t bench_max_bytes = std::size_t(256) << 20;
  // Timed calls per round (and warm-up calls, at most 5). The test double's runs take 2: they
  // check the harness and its report, not a machine's speed (their times mean nothing).
  int bench_iters = 20;
  std::string report_path;
  std::string device_facts_markdown;  // for the report
  long long layout_max_ranks = 1LL << 20;
  bool layout = true;
  bool layout_corrupt = false;
};

/// Checks 3 and 4: NCCL on this job's ranks (one GPU each). nccl_checks.cpp.
void nccl_checks(report& rep, const options& opt);
/// The init-timeout probe: a world of 2 that only this process joins. nccl_checks.cpp.
void probe_init_timeout(report& rep);
/// abort() of a communicator whose collective is stuck in a kernel (2 ranks or more; a
/// process of its own, since a failure here may leave the device unusable). nccl_checks.cpp.
void probe_abort_hung(report& rep);
/// Check 2: the layout evaluated in kernels for every rank of every case, compared with
/// the host. `on_device == false`: the nvcc TU's host code stands in for the kernels (a
/// self-test of the harness without a GPU); `corrupt`: one value of rank 0 is altered before
/// the comparison (the self-test that the comparison is live). layout_host.cpp.
void layout_checks(report& rep, bool on_device, long long max_ranks, bool corrupt = false);
/// Compares an example's output on the CPU backend with its output on NCCL. compare.cpp.
result compare_outputs(const std::string& cpu_text, const std::string& gpu_text);

}  // namespace gpu_check
