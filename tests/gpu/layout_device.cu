// tests/gpu/layout_device.cu: the layout cases evaluated by CUDA kernels, one thread per
// rank (check 2). layout_host.cpp (compiled by g++) computes the same values on the host
// and compares them.
#include <cuda_runtime_api.h>

#include <cstring>
#include <string>
#include <type_traits>

#include "layout_cases.hpp"

namespace gpu_check::layout {

namespace {

template <int I>
__global__ void probe_kernel(layout_bytes bytes, int begin, int end, int width, value* out) {
  using L = layout_of<I>;
  using P = typename case_def<I>::probe;
  const L& m = *reinterpret_cast<const L*>(bytes.b);
  const long long r = begin + static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= end) return;
  P::run(m, static_cast<int>(r), out + (r - begin) * width);
}

std::string cuda_error(cudaError_t e, const char* what) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

}  // namespace

/// Evaluates case `index` for ranks [begin, end) into host memory `out` (width values per
/// rank). on_device: by probe_kernel on the current GPU; otherwise by this translation
/// unit's host code (the harness's self-test without a GPU). Returns an error text, or "".
std::string evaluate_nvcc(int index, int begin, int end, value* out, bool on_device) {
  std::string error = "no case " + std::to_string(index);
  for_each_case([&](auto ic) {
    constexpr int I = decltype(ic)::value;
    if (I != index) return;
    using L = layout_of<I>;
    using P = typename case_def<I>::probe;
    static_assert(std::is_trivially_copyable_v<L> && sizeof(L) <= sizeof(layout_bytes::b));
    constexpr int width = P::template width<L>();
    const L m = case_def<I>::layout();
    error.clear();
    if (!on_device) {
      for (int r = begin; r < end; ++r) P::run(m, r, out + static_cast<long long>(r - begin) * width);
      return;
    }
    layout_bytes bytes{};
    std::memcpy(bytes.b, &m, sizeof(L));
    const std::size_t size = static_cast<std::size_t>(end - begin) * width * sizeof(value);
    value* dev = nullptr;
    if (cudaError_t e = cudaMalloc(&dev, size); e != cudaSuccess) {
      error = cuda_error(e, "cudaMalloc");
      return;
    }
    constexpr int block = 256;
    const int blocks = (end - begin + block - 1) / block;
    probe_kernel<I><<<blocks, block>>>(bytes, begin, end, width, dev);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) error = cuda_error(e, "probe_kernel launch");
    if (error.empty() && (e = cudaDeviceSynchronize()) != cudaSuccess) error = cuda_error(e, "probe_kernel");
    if (error.empty() && (e = cudaMemcpy(out, dev, size, cudaMemcpyDeviceToHost)) != cudaSuccess)
      error = cuda_error(e, "cudaMemcpy");
    cudaFree(dev);
  });
  return error;
}

}  // namespace gpu_check::layout
