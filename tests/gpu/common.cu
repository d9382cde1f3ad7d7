// tests/gpu/common.cu: the device side of common.hpp (a delay kernel, bounded stream
// waits, streams) and a free TCP port. Under the double (GPU_CHECK_DOUBLE, compiled by g++)
// the same functions use only what the double provides.
#include "common.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gpu_check {

#if !defined(GPU_CHECK_DOUBLE)
namespace {
__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void delay_kernel(unsigned long long delay_ns) {
  const unsigned long long t0 = global_ns();
  while (global_ns() - t0 < delay_ns) {
  }
}
}  // namespace

void enqueue_delay(unsigned delay_us, cudaStream_t s) {
  delay_kernel<<<1, 1, 0, s>>>(1000ull * delay_us);
  cuda_ok(cudaGetLastError(), "delay_kernel launch");
}

bool wait_stream(cudaStream_t s, double seconds, std::string& error) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return true;
    if (e != cudaErrorNotReady) {
      error = "cudaStreamQuery: " + cuda_text(e);
      return false;
    }
    if (seconds_since(t0) > seconds) {
      error = "the stream did not complete within " + std::to_string(static_cast<int>(seconds)) + " s (a hung collective?)";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

stream::stream() { cuda_ok(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"); }
#else
void enqueue_delay(unsigned, cudaStream_t) {}

bool wait_stream(cudaStream_t s, double, std::string& error) {
  const cudaError_t e = cudaStreamSynchronize(s);
  if (e != cudaSuccess) error = "cudaStreamSynchronize: " + cuda_text(e);
  return e == cudaSuccess;
}

stream::stream() { cuda_ok(cudaStreamCreate(&s_), "cudaStreamCreate"); }
#endif

stream::~stream() {
  if (s_) cudaStreamDestroy(s_);
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    throw std::runtime_error("bind() to a free port failed");
  }
  close(fd);
  return ntohs(a.sin_port);
}

}  // namespace gpu_check
