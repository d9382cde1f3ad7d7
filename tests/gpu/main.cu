// tests/gpu/main.cu: gpu-check, the program behind scripts/gpu-check (docs/nccl.md, "The GPU
// check"). Run it as one process for the single-GPU checks or under mpirun with one rank per
// GPU for the multi-GPU ones; scripts/gpu-check does both and more.
//
//   gpu_check [--bench] [--bench-max BYTES] [--bench-iters N] [--report FILE] [--layout-max-ranks N] [--no-layout]
//       1. device facts  2. layout in kernels (one process only)  3./4. NCCL on this job's
//       ranks  5. busbw (--bench; the report goes to FILE)
//   gpu_check --probe-init-timeout      a non-blocking init that must time out (one process)
//   mpirun -np 2 gpu_check --probe-abort-hung   abort() of a collective stuck in a kernel
//   gpu_check --gpus                    prints the number of visible GPUs
//   gpu_check --compare NAME CPU NCCL   an example's outputs on both backends (files)
//   gpu_check --layout-selftest [--layout-max-ranks N] [--layout-corrupt]
//                                       check 2's harness without a GPU (--layout-corrupt:
//                                       one value altered, which must fail)
//
// Every check prints PASS/FAIL/SKIP and a detail; the last line is "N passed, N failed".
// Without a GPU: "gpu-check: no GPU: <CUDA's error>", the summary, exit code 2.
#include <devmesh/devmesh.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common.hpp"

namespace gpu_check {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::ostringstream os;
  os << f.rdbuf();
  return os.str();
}

#if !defined(GPU_CHECK_DOUBLE)
std::string version_text(int v) {  // CUDA: 13000 -> 13.0
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
std::string nccl_version_text(int v) {  // NCCL >= 2.9: 22809 -> 2.28.9
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}

#define GPU_CHECK_STR2(x) #x
#define GPU_CHECK_STR(x) GPU_CHECK_STR2(x)
const char* compiled_archs() {
#if defined(__CUDA_ARCH_LIST__)
  return GPU_CHECK_STR(__CUDA_ARCH_LIST__);
#else
  return "?";
#endif
}

__global__ void hello_kernel(int* out, int device) { out[threadIdx.x] = device * 1000 + static_cast<int>(threadIdx.x); }

/// A kernel of this binary runs on `device` and writes what it should.
result kernel_runs(int device) {
  if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) return {false, "cudaSetDevice: " + cuda_text(e)};
  int* d = nullptr;
  if (cudaError_t e = cudaMalloc(&d, 64 * sizeof(int)); e != cudaSuccess) return {false, "cudaMalloc: " + cuda_text(e)};
  hello_kernel<<<1, 64>>>(d, device);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  std::vector<int> h(64, -1);
  if (e == cudaSuccess) e = cudaMemcpy(h.data(), d, 64 * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d);
  if (e != cudaSuccess) return {false, "kernel: " + cuda_text(e)};
  for (int i = 0; i < 64; ++i)
    if (h[static_cast<std::size_t>(i)] != device * 1000 + i) return {false, "the kernel wrote wrong values"};
  return {true, ""};
}

/// "GPU 0: NVIDIA H100 (compute capability 9.0, 79.2 GiB, PCI 0000:1b:00.0)"
std::string describe_device(int device) {
  cudaDeviceProp p{};
  if (cudaError_t e = cudaGetDeviceProperties(&p, device); e != cudaSuccess)
    return "GPU " + std::to_string(device) + ": cudaGetDeviceProperties: " + cuda_text(e);
  char buf[512];
  std::snprintf(buf, sizeof buf, "GPU %d: %s (compute capability %d.%d, %.1f GiB, PCI %04x:%02x:%02x.0)", device, p.name,
                p.major, p.minor, static_cast<double>(p.totalGlobalMem) / (1u << 30), p.pciDomainID, p.pciBusID,
                p.pciDeviceID);
  return buf;
}

int local_rank() {
  for (const char* v : devmesh::nccl::local_rank_variables)
    if (const char* s = std::getenv(v)) return std::atoi(s);
  return 0;
}
#endif

/// Check 1. Returns false when there is no usable GPU (the caller stops).
bool device_facts(report& rep, options& opt) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  const bool have = e == cudaSuccess && count > 0;
  const std::string why = e != cudaSuccess ? "cudaGetDeviceCount failed: " + cuda_text(e)
                                           : "cudaGetDeviceCount reports " + std::to_string(count) + " devices";
  if (!all_ranks(have)) {
    const auto whys = gather_strings(have ? std::string() : why);
    std::string first;
    for (const auto& w : whys)
      if (!w.empty() && first.empty()) first = w;
    rep.note("gpu-check: no GPU: " + first);
    rep.check("device: at least one GPU visible", false, first);
    return false;
  }
#if defined(GPU_CHECK_DOUBLE)
  (void)opt;
  rep.check("device: at least one GPU visible", true, std::to_string(count) + " (the NCCL test double's)");
  rep.skip("device facts", "the NCCL test double has no devices to describe");
  return true;
#else
  {
    int driver = 0, runtime = 0, nccl = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    ncclGetVersion(&nccl);
    const std::string facts = std::to_string(count) + " GPU(s) visible on rank 0's node; driver (CUDA) " +
                              version_text(driver) + ", runtime " + version_text(runtime) + ", NCCL library " +
                              nccl_version_text(nccl) + " (built with nccl.h " + nccl_version_text(NCCL_VERSION_CODE) +
                              "), device code for sm " + compiled_archs();
    rep.check("device: at least one GPU visible", true, std::to_string(count) + " GPU(s)");
    // NCCL adds API in minor releases (2.x), not patch releases (2.x.y): a library of the
    // headers' minor release works even when its patch is older (2.28.3 under nccl.h 2.28.9
    // ran every check on an H200), one of an older minor may lack a symbol devmesh calls.
    const bool nccl_ok = nccl / 100 >= NCCL_VERSION_CODE / 100;
    const std::string nccl_note =
        nccl < NCCL_VERSION_CODE ? (nccl_ok ? "; NCCL library of an older patch release than nccl.h (same API)"
                                            : "; NCCL library of an older minor release than nccl.h (API may be missing)")
                                 : "";
    rep.check("device: driver, runtime and NCCL versions", driver / 1000 >= runtime / 1000 && nccl_ok,
              facts + nccl_note);
    std::string md = "## Devices\n\n- " + facts + "\n";
    if (world_size() == 1) {
      for (int d = 0; d < count; ++d) {
        const std::string what = describe_device(d);
        md += "- " + what + "\n";
        rep.run("device " + std::to_string(d) + ": a kernel of this binary runs", [&]() -> result {
          result r = kernel_runs(d);
          r.detail = what + (r.detail.empty() ? "" : ": " + r.detail);
          return r;
        });
      }
    } else {
      const int dev = local_rank();
      const std::string what = dev < count ? describe_device(dev) : "no device " + std::to_string(dev);
      const auto all = gather_strings("rank " + std::to_string(world_rank()) + ": " + what);
      for (const auto& line : all) md += "- " + line + "\n";
      rep.run("device per rank: a kernel of this binary runs on each rank's GPU (its local rank)", [&]() -> result {
        if (dev >= count) return {false, what};
        result r = kernel_runs(dev);
        r.detail = world_rank() == 0 ? "rank 0: " + what : what;
        return r;
      });
      for (const auto& line : all) rep.note("  " + line);
    }
    opt.device_facts_markdown = md;
    return true;
  }
#endif
}

int usage() {
  std::fprintf(stderr,
               "usage: gpu_check [--bench] [--bench-max BYTES] [--bench-iters N] [--report FILE] [--layout-max-ranks N] [--no-layout]\n"
               "       gpu_check --probe-init-timeout | --probe-abort-hung | --gpus | --compare NAME CPU_OUTPUT NCCL_OUTPUT\n"
               "       gpu_check --layout-selftest [--layout-max-ranks N] [--layout-corrupt]\n");
  return 64;
}

}  // namespace
}  // namespace gpu_check

int main(int argc, char** argv) {
  using namespace gpu_check;
  options opt;
  std::string mode = "checks";
  std::vector<std::string> compare_args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--bench") opt.bench = true;
      else if (a == "--bench-max") opt.bench_max_bytes = std::stoull(next());
      else if (a == "--bench-iters") opt.bench_iters = std::stoi(next());
      else if (a == "--report") opt.report_path = next();
      else if (a == "--layout-max-ranks") opt.layout_max_ranks = std::stoll(next());
      else if (a == "--no-layout") opt.layout = false;
      else if (a == "--layout-corrupt") opt.layout_corrupt = true;
      else if (a == "--probe-init-timeout" || a == "--probe-abort-hung" || a == "--gpus" || a == "--layout-selftest")
        mode = a.substr(2);
      else if (a == "--compare") {
        mode = "compare";
        compare_args = {next(), next(), next()};
      } else return usage();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpu_check: %s\n", e.what());
      return usage();
    }
  }

  if (mode == "gpus") {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      std::printf("gpu-check: no GPU: %s\n", e != cudaSuccess ? ("cudaGetDeviceCount failed: " + cuda_text(e)).c_str()
                                                                : "cudaGetDeviceCount reports 0 devices");
      return 2;
    }
    std::printf("%d\n", count);
    return 0;
  }
  if (mode == "compare") {
    report rep;
    rep.run("example " + compare_args[0] + ": --backend nccl output equals the CPU backend's", [&] {
      return compare_outputs(read_file(compare_args[1]), read_file(compare_args[2]));
    });
    return rep.finish();
  }
  if (mode == "layout-selftest") {
#if !defined(GPU_CHECK_DOUBLE)
    report rep;
    layout_checks(rep, false, opt.layout_max_ranks, opt.layout_corrupt);
    return rep.finish();
#else
    return usage();
#endif
  }

  devmesh::mpi::environment env(argc, argv);
  report rep;
  // One process started without a launcher: GPU 0 (devmesh reads the launcher's local rank).
  bool launcher = false;
  for (const char* v : devmesh::nccl::local_rank_variables) launcher = launcher || std::getenv(v);
  if (!launcher && world_size() == 1) setenv("LOCAL_RANK", "0", 1);

  if (!device_facts(rep, opt)) {
    rep.finish();
    return 2;
  }
  if (mode == "probe-init-timeout") {
    if (world_size() != 1) {
      rep.check("--probe-init-timeout", false, "run it as one process");
      return rep.finish();
    }
    probe_init_timeout(rep);
    return rep.finish();
  }
  if (mode == "probe-abort-hung") {
    probe_abort_hung(rep);
    return rep.finish();
  }
#if !defined(GPU_CHECK_DOUBLE)
  if (world_size() == 1 && opt.layout) {
    cudaSetDevice(0);
    layout_checks(rep, true, opt.layout_max_ranks);
  }
#endif
  nccl_checks(rep, opt);
  return rep.finish();
}
