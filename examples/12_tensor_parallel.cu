// Example 12: a Megatron-style tensor-parallel MLP on a (dp=2, tp=4) mesh, written with
// DTensor's placements: y = relu(x W1) W2.
//
// PyTorch's tensor-parallel recipe (ColwiseParallel for the first linear, RowwiseParallel for the
// second) lays the tensors out as:
//   x   [batch, in]       [Shard(0), Replicate()]   the batch split over dp, whole on each tp rank
//   W1  [in, hidden]      [Replicate(), Shard(1)]   columns over tp
//   h   [batch, hidden]   [Shard(0), Shard(1)]      relu(x W1): each tp rank its columns, no communication
//   W2  [hidden, out]     [Replicate(), Shard(0)]   rows over tp
//   y   [batch, out]      [Shard(0), Partial(sum)]  h W2: each tp rank a partial sum
// and one collective finishes the layer: y to [Shard(0), Replicate()], an all-reduce over tp
// (planned at compile time and printed; with sequence parallelism, [Shard(0), Shard(0)] would be
// a reduce-scatter). hidden = 10 is uneven over 4 tp ranks (3, 3, 3, 1: torch.chunk's rule):
// no padding anywhere. The weights and the batch start whole on every rank (the same seed) and
// dm::distribute keeps each rank's block. The program checks y against one process computing
// relu(x W1) W2 on the whole batch, and exits non-zero otherwise.
//
// Run: mpirun -np 8 ./12_tensor_parallel                  (MPI, host code)
//      mpirun -np 8 ./12_tensor_parallel --backend nccl   (NCCL, one GPU per rank, a CUDA kernel)
#include "common.hpp"
#include "toy_model.hpp"  // toy::uniform, toy::max_abs_diff

#include <devmesh/redistribute.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace dm = devmesh;

using tp_mesh = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
constexpr int batch = 8, in = 6, hidden = 10, out = 5;
constexpr dm::extents<batch, in> x_shape;
constexpr dm::extents<in, hidden> w1_shape;
constexpr dm::extents<hidden, out> w2_shape;
constexpr dm::extents<batch, out> y_shape;

using x_spec = dm::sharding<tp_mesh, dm::on<"dp", dm::shard<0>>>;
using w1_spec = dm::sharding<tp_mesh, dm::on<"tp", dm::shard<1>>>;  // column parallel
using h_spec = dm::sharding<tp_mesh, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<1>>>;
using w2_spec = dm::sharding<tp_mesh, dm::on<"tp", dm::shard<0>>>;  // row parallel
using y_partial = dm::sharding<tp_mesh, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::partial<dm::reduction::sum>>>;
using y_spec = x_spec;

constexpr auto finish_plan = dm::plan_redistribute(y_partial{}, y_spec{});
static_assert(finish_plan.collectives() == 1);

constexpr float tolerance = 1e-5f;

/// c = a b (a: rows x inner, b: inner x cols, row-major), relu'd if asked; one index = one
/// element of c (a host loop or a CUDA kernel: examples::for_each).
struct matmul {
  const float* a;
  const float* b;
  float* c;
  int inner, cols;
  bool relu;
  DEVMESH_HOST_DEVICE void operator()(int e) const {
    const int i = e / cols, j = e % cols;
    float s = 0.f;
    for (int k = 0; k < inner; ++k) s += a[i * inner + k] * b[k * cols + j];
    c[e] = relu && s < 0.f ? 0.f : s;
  }
};

std::vector<float> values(int n, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = toy::uniform(seed + static_cast<std::uint64_t>(i));
  return v;
}

/// relu(x W1) W2 on one process.
std::vector<float> reference(const std::vector<float>& x, const std::vector<float>& w1, const std::vector<float>& w2) {
  std::vector<float> h(batch * hidden), y(batch * out);
  for (int e = 0; e < batch * hidden; ++e) matmul{x.data(), w1.data(), h.data(), in, hidden, true}(e);
  for (int e = 0; e < batch * out; ++e) matmul{h.data(), w2.data(), y.data(), hidden, out, false}(e);
  return y;
}

template <class Spec, class E>
std::string shape_of(const Spec& spec, const E& ext, int pos) {
  const auto s = spec.local_shape(ext, pos);
  return std::to_string(s[0]) + "x" + std::to_string(s[1]);
}

template <class Comm>
int run(Comm& world) {
  auto mesh = dm::init_device_mesh<tp_mesh>(world);
  examples::stream<Comm> stream;  // no_stream on MPI; a cudaStream_t on NCCL
  const int me = mesh.rank(), pos = mesh.position();
  const std::vector<float> hx = values(batch * in, 1), hw1 = values(in * hidden, 100), hw2 = values(hidden * out, 200);

  // Every rank holds the whole tensors (the same seed); each keeps its block.
  const auto block = [&](const auto& spec, const auto& ext) {
    return static_cast<std::size_t>(spec.local_size(ext, pos));
  };
  examples::buffer<float, Comm> x_full(hx), w1_full(hw1), w2_full(hw2);
  examples::buffer<float, Comm> x(block(x_spec{}, x_shape)), w1(block(w1_spec{}, w1_shape)),
      w2(block(w2_spec{}, w2_shape)), h(block(h_spec{}, dm::extents<batch, hidden>{})),
      y_sum(block(y_partial{}, y_shape)), y(block(y_spec{}, y_shape)), y_full(batch * out);
  dm::distribute(mesh, x_spec{}, x_shape, x_full.cspan(), x.span(), stream);
  dm::distribute(mesh, w1_spec{}, w1_shape, w1_full.cspan(), w1.span(), stream);
  dm::distribute(mesh, w2_spec{}, w2_shape, w2_full.cspan(), w2.span(), stream);

  if (me == 0)
    std::cout << "mesh = " << mesh << "\n\n"
              << dm::rank_grid(mesh) << "\n"
              << "x " << dm::to_string(x_spec{}) << ", W1 " << dm::to_string(w1_spec{}) << ", h "
              << dm::to_string(h_spec{}) << ", W2 " << dm::to_string(w2_spec{}) << ", y " << dm::to_string(y_partial{})
              << " -> " << dm::to_string(y_spec{}) << "\n"
              << "finishing the layer, y -> " << dm::to_string(y_spec{}) << ":\n"
              << dm::to_string(finish_plan, mesh.layout()) << "\n";
  examples::print_ordered("rank " + std::to_string(me) + ": x " + shape_of(x_spec{}, x_shape, pos) + ", W1 " +
                          shape_of(w1_spec{}, w1_shape, pos) + ", h " +
                          shape_of(h_spec{}, dm::extents<batch, hidden>{}, pos) + ", W2 " +
                          shape_of(w2_spec{}, w2_shape, pos) + ", y " + shape_of(y_spec{}, y_shape, pos));

  // The layer: two local matmuls, one collective.
  const auto rows = static_cast<int>(x_spec{}.local_shape(x_shape, pos)[0]);
  const auto cols = static_cast<int>(w1_spec{}.local_shape(w1_shape, pos)[1]);  // this rank's hidden columns
  examples::for_each(rows * cols, matmul{x.data(), w1.data(), h.data(), in, cols, true}, stream);
  examples::for_each(rows * out, matmul{h.data(), w2.data(), y_sum.data(), cols, out, false}, stream);
  dm::redistribute(mesh, y_partial{}, y_spec{}, y_shape, y_sum.cspan(), y.span(), stream);

  // The check: the whole y on every rank against one process's.
  dm::full_tensor(mesh, y_spec{}, y_shape, y.cspan(), y_full.span(), stream);
  stream.sync();
  const std::vector<float> got = y_full.to_host(), want = reference(hx, hw1, hw2);
  const float diff = toy::max_abs_diff(got, want, want.size());
  examples::check(diff <= tolerance, "y matches one process: max |diff| " + std::to_string(diff));
  if (me == 0) {
    std::printf("\ny (row 0 of %d): ", batch);
    for (int j = 0; j < out; ++j) std::printf("%s%.6f", j ? " " : "", static_cast<double>(got[static_cast<std::size_t>(j)]));
    std::printf("\nOK: y = relu(x W1) W2 matches one process within %.1e (max diff %.2e)\n",
                static_cast<double>(tolerance), static_cast<double>(diff));
  }
  return 0;
}

int main(int argc, char** argv) {
  return examples::main(argc, argv, [](auto& world) { return run(world); });
}
