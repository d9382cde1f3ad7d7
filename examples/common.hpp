// examples/common.hpp: what every example shares, so that each one shows only its idea.
//
//   int main(int argc, char** argv) {
//     return examples::main(argc, argv, [](auto& world) { return run(world); });
//   }
//
// - Backend choice: MPI (host memory, runs anywhere) by default; `--backend nccl` or
//   DEVMESH_BACKEND=nccl selects NCCL (device memory, one GPU per process), compiled in when
//   the example is built by nvcc and linked with devmesh::nccl. A `run` that is a template
//   over the world communicator serves both; a `run` written for one backend
//   (`int run(dm::mpi::communicator&)`, example 04) is passed as is, and the other backend
//   is refused with a clear message.
// - In a template over the backend the mesh's type depends on it, so the named members would
//   need `mesh.template all_reduce<"dp">(...)`; the free forms do not
//   (`dm::all_reduce<"dp">(mesh, ...)`). The examples mostly read the way PyTorch code does:
//   a dim is a 1-D submesh, `mesh["dp"_dim].all_reduce(...)` (mesh_2d["dp"] in Python); it
//   shares the mesh's communicator (no new one) and is made once, before the loop.
// - buffer<T, Comm>: an array in the backend's memory space (std::vector for MPI, cudaMalloc
//   for NCCL); stream<Comm>: no_stream for MPI, a cudaStream_t for NCCL.
// - for_each<Comm>(n, f, s): f(0..n-1), a host loop for MPI, a CUDA kernel for NCCL, where f
//   is a functor whose operator() is DEVMESH_HOST_DEVICE.
// - Host-side helpers over MPI_COMM_WORLD (the NCCL world is bootstrapped from it): checks
//   that every rank agrees on, rank-ordered printing, printing each rank's view of a mesh
//   (print.hpp draws them), broadcasting a string.
#pragma once
#include <devmesh/devmesh.hpp>

#include <mpi.h>

#include "print.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#if defined(DEVMESH_WITH_NCCL) && defined(__CUDACC__)
#define EXAMPLES_WITH_NCCL 1
#include <cuda_runtime_api.h>
#endif

namespace examples {
namespace dm = devmesh;

// ---- host-side helpers over MPI_COMM_WORLD ---------------------------------------------
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

/// Collective: every rank says whether its check passed; if any failed, every rank throws
/// (so no rank is left waiting in a collective), naming the failed ranks and this rank's view.
inline void check(bool ok, const std::string& what) {
  const int mine = ok ? 0 : 1;
  std::vector<int> failed(static_cast<std::size_t>(world_size()));
  MPI_Allgather(&mine, 1, MPI_INT, failed.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::string ranks;
  for (std::size_t r = 0; r < failed.size(); ++r)
    if (failed[r]) {
      if (!ranks.empty()) ranks += ',';
      ranks += std::to_string(r);
    }
  if (!ranks.empty())
    throw std::runtime_error("check failed on rank(s) " + ranks + ": " + what + (ok ? " (passed here)" : ""));
}

/// Collective: every rank's string, on rank 0 (empty elsewhere), in rank order.
inline std::vector<std::string> gather_strings(const std::string& mine) {
  const int n = world_size(), me = world_rank();
  const int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(n)), offsets(static_cast<std::size_t>(n));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < n; ++r) offsets[static_cast<std::size_t>(r)] = total, total += lens[static_cast<std::size_t>(r)];
  std::string all(static_cast<std::size_t>(me == 0 ? total : 0), '\0');
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (me == 0)
    for (int r = 0; r < n; ++r)
      out.emplace_back(std::string_view(all).substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                                                    static_cast<std::size_t>(lens[static_cast<std::size_t>(r)])));
  return out;
}

/// Collective: every rank's line, printed by rank 0 in rank order.
inline void print_ordered(const std::string& line) {
  for (const auto& l : gather_strings(line)) std::cout << l << '\n';
  std::cout << std::flush;
}

/// Collective: what each rank sees (e.g. dm::rank_grid(mesh) of its submesh), printed
/// by rank 0 once per distinct view, after the ranks that see it (print.hpp's by_rank).
inline void print_by_rank(const std::string& title, const std::string& view, const std::string& indent = "  ") {
  const auto views = gather_strings(view);
  if (world_rank() == 0) std::cout << title << '\n' << by_rank(views, indent) << std::flush;
}

/// Collective: rank 0's string on every rank.
inline std::string broadcast_string(std::string s) {
  int len = static_cast<int>(s.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
  s.resize(static_cast<std::size_t>(len));
  MPI_Bcast(s.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
  return s;
}

/// x in scientific notation with 2 decimals: 4.47e-08.
inline std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", x);
  return buf;
}

// ---- memory spaces ----------------------------------------------------------------------
/// True for backends whose collectives take device memory (NCCL).
template <class Comm>
inline constexpr bool on_device = !std::is_same_v<typename Comm::stream_type, dm::no_stream>;

#if defined(EXAMPLES_WITH_NCCL)
inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}
#endif

/// Where collectives run: nothing for MPI; a CUDA stream for NCCL.
template <class Comm>
class stream {
 public:
  using type = typename Comm::stream_type;
  stream() {
#if defined(EXAMPLES_WITH_NCCL)
    if constexpr (on_device<Comm>) cuda_check(cudaStreamCreate(&s_), "cudaStreamCreate");
#endif
  }
  ~stream() {
#if defined(EXAMPLES_WITH_NCCL)
    if constexpr (on_device<Comm>) cudaStreamDestroy(s_);
#endif
  }
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  type get() const { return s_; }
  operator type() const { return s_; }
  /// Waits for everything enqueued (NCCL collectives and kernels only enqueue).
  void sync() const {
#if defined(EXAMPLES_WITH_NCCL)
    if constexpr (on_device<Comm>) cuda_check(cudaStreamSynchronize(s_), "cudaStreamSynchronize");
#endif
  }

 private:
  type s_{};
};

/// n elements of T where Comm's collectives want them: host for MPI, device for NCCL.
template <class T, class Comm>
class buffer {
 public:
  explicit buffer(std::size_t n) : n_(n), host_(on_device<Comm> ? 0 : n) { allocate(); }
  explicit buffer(const std::vector<T>& values)
      : n_(values.size()), host_(on_device<Comm> ? std::vector<T>() : values) {
    if constexpr (on_device<Comm>) allocate(), assign(values);
  }
  ~buffer() {
#if defined(EXAMPLES_WITH_NCCL)
    if (dev_) cudaFree(dev_);
#endif
  }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;

  T* data() { return on_device<Comm> ? dev_ : host_.data(); }
  const T* data() const { return on_device<Comm> ? dev_ : host_.data(); }
  std::size_t size() const { return n_; }
  std::span<T> span() { return {data(), n_}; }
  std::span<const T> cspan() const { return {data(), n_}; }

  /// Copies host values in (values.size() == size()).
  void assign(const std::vector<T>& values) {
    if (values.size() != n_) throw std::logic_error("buffer::assign: wrong size");
    if constexpr (on_device<Comm>) {
#if defined(EXAMPLES_WITH_NCCL)
      cuda_check(cudaMemcpy(dev_, values.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
#endif
    } else {
      std::copy(values.begin(), values.end(), host_.begin());
    }
  }
  /// The values, on the host (call after stream::sync()).
  std::vector<T> to_host() const {
    if constexpr (on_device<Comm>) {
      std::vector<T> out(n_);
#if defined(EXAMPLES_WITH_NCCL)
      cuda_check(cudaMemcpy(out.data(), dev_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
#endif
      return out;
    } else {
      return host_;
    }
  }

 private:
  void allocate() {
#if defined(EXAMPLES_WITH_NCCL)
    if constexpr (on_device<Comm>) {
      cuda_check(cudaMalloc(reinterpret_cast<void**>(&dev_), n_ * sizeof(T) + 1), "cudaMalloc");
      cuda_check(cudaMemset(dev_, 0, n_ * sizeof(T)), "cudaMemset");
    }
#endif
  }

  std::size_t n_;
  std::vector<T> host_;
  T* dev_ = nullptr;
};

// ---- data-parallel loops ----------------------------------------------------------------
#if defined(EXAMPLES_WITH_NCCL)
template <class F>
__global__ void for_each_kernel(int n, F f) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) f(i);
}
#endif

/// f(i) for i in [0, n): a host loop on the MPI path, a CUDA kernel on `s` on the NCCL path.
template <class Comm, class F>
void for_each(int n, const F& f, const stream<Comm>& s) {
  if constexpr (on_device<Comm>) {
#if defined(EXAMPLES_WITH_NCCL)
    if (n == 0) return;  // an empty block: a launch of zero blocks is an error
    constexpr int block = 128;
    for_each_kernel<<<(n + block - 1) / block, block, 0, s.get()>>>(n, f);
    cuda_check(cudaGetLastError(), "kernel launch");
#endif
  } else {
    (void)s;
    for (int i = 0; i < n; ++i) f(i);
  }
}

// ---- backend choice and main ------------------------------------------------------------
enum class backend { mpi, nccl };

/// `--backend mpi|nccl` (or `--backend=...`), else DEVMESH_BACKEND, else mpi.
inline backend chosen_backend(int argc, char** argv) {
  std::string name;
  if (const char* env = std::getenv("DEVMESH_BACKEND")) name = env;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--backend" && i + 1 < argc) name = argv[++i];
    else if (a.rfind("--backend=", 0) == 0) name = a.substr(10);
  }
  if (name.empty() || name == "mpi") return backend::mpi;
  if (name == "nccl") return backend::nccl;
  throw std::runtime_error("unknown backend '" + name + "' (from --backend or DEVMESH_BACKEND): use mpi or nccl");
}

/// Initializes MPI, makes the chosen backend's world and calls run(world) under
/// dm::report_once: an error is printed once, by the first rank that had it, naming the ranks
/// ("error on ranks 0-7: devmesh: ..."), and every rank exits with 1. An error before the
/// world exists (a bad --backend) becomes "rank r: error: ..." on every rank.
template <class Run>
int main(int argc, char** argv, Run run) {
  dm::mpi::environment env(argc, argv);
  try {
    if (chosen_backend(argc, argv) == backend::nccl) {
#if defined(EXAMPLES_WITH_NCCL)
      if constexpr (std::is_invocable_v<Run&, dm::nccl::communicator&>) {
        auto world = dm::nccl::world(dm::mpi::world());  // one GPU per process, by local rank
        return dm::report_once(world, [&] { return run(world); });
      } else {
        throw std::runtime_error("this example is written for the MPI backend only: run it without --backend nccl");
      }
#else
      throw std::runtime_error(
          "this build has no NCCL backend: build the example with nvcc and link devmesh::nccl");
#endif
    }
    auto world = dm::mpi::world();
    return dm::report_once(world, [&] { return run(world); });
  } catch (const std::exception& e) {
    const std::string line = "rank " + std::to_string(world_rank()) + ": error: " + e.what() + "\n";
    std::fputs(line.c_str(), stderr);  // one write: lines of different ranks do not interleave
    return 1;
  }
}

}  // namespace examples
