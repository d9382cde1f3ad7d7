// tests/nccl/nvcc.cu: the NCCL backend compiled by nvcc (host code of a .cu translation
// unit), every collective member template instantiated, and run over the test double.
#include <cstdio>
#include <type_traits>
#include <vector>

#include "common.hpp"

namespace dm = devmesh;
using namespace nccl_test;

template <class T>
bool round_trip(const dm::nccl::communicator& c) {
  const int n = c.size();
  const std::size_t un = static_cast<std::size_t>(n);
  std::vector<T> a(un, T(1)), b(un, T(0));
  c.all_reduce(a.data(), b.data(), un, dm::op::sum, nullptr);
  c.reduce(a.data(), b.data(), un, dm::op::max, 0, nullptr);
  c.broadcast(a.data(), un, 0, nullptr);
  std::vector<T> g(un * un);
  c.all_gather(a.data(), g.data(), un, nullptr);
  c.reduce_scatter(g.data(), b.data(), un, std::is_integral_v<T> ? dm::op::sum : dm::op::avg, nullptr);
  c.all_to_all(g.data(), g.data(), un, nullptr);
  c.sendrecv(a.data(), 1, (c.rank() + 1) % n, b.data(), 1, (c.rank() + n - 1) % n, nullptr);
  c.barrier(nullptr);
  std::vector<T> s(1, T(1));
  c.all_reduce(s.data(), s.data(), 1, dm::op::sum, nullptr);
  cudaStreamSynchronize(nullptr);  // the double is asynchronous, as a GPU: before reading or freeing
  return s[0] == T(n);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  bool ok = true;
  {
    auto w = dm::nccl::world(MPI_COMM_WORLD, fast());
    auto c = w.split(0, w.rank(), fast());
    dm::nccl::group g;
    g.end();
    ok = round_trip<float>(c) && round_trip<double>(w) && round_trip<int>(c) && round_trip<long long>(w);
  }
  ok = ok && devmesh_fake_nccl_live_comms() == 0;
  const bool all = all_true(ok);
  if (world_rank() == 0) std::printf("nvcc-compiled backend over the double: %s\n", all ? "ok" : "FAILED");
  MPI_Finalize();
  return all ? 0 : 1;
}
