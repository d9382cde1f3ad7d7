// Example 3: HSDP gradient sync (hybrid sharded data parallel) on a (replicate=2, shard=4) mesh,
// written with DTensor's placements.
//
// HSDP is FSDP inside a replica group and DDP across them, as in PyTorch's DeviceMesh recipe:
//   mesh_2d = init_device_mesh("cuda", (2, 4), mesh_dim_names=("replicate", "shard"))
//   model = FSDP(ToyModel(), device_mesh=mesh_2d, sharding_strategy=HYBRID_SHARD)
// Here each tensor says how it is laid out on the mesh, as a DTensor's placements do, and
// dm::redistribute runs the steps between two layouts, planned at compile time:
//   parameters  [Replicate(), Shard(0)]       each rank keeps its chunk of the flat parameters
//   full        [Replicate(), Replicate()]    what the forward pass reads
//   gradients   [Partial(avg), Partial(avg)]  each rank's gradient of its own samples
//   1. distribute: every rank keeps its chunk of the initial parameters (165 over 4 ranks:
//      42, 42, 42, 39, torch.chunk's rule; no padding, no hand-computed shard length);
//   2. forward: parameters -> full (an all-gather over "shard");
//   3. backward: the local gradient of the full parameters (real ToyModel backward);
//   4. gradients -> parameters: the average over all 8 ranks, each keeping its chunk (the plan
//      printed below: a reduce-scatter over "shard", an all-reduce over "replicate");
//   5. SGD on the chunk.
// All 8 ranks see different data (world rank r trains on samples [4r, 4r + 4)), so after the
// averages every chunk has the full 32-sample gradient. The program checks that the loss goes
// down and that it matches a single-process run of the same model on all 32 samples (computed
// on every rank), and exits non-zero otherwise.
//
// It prints the mesh (rank table and grid), the specs and each plan, what each rank holds, then
// the loss of every step next to one process's.
//
// Run: mpirun -np 8 ./03_hsdp                  (MPI, host code)
//      mpirun -np 8 ./03_hsdp --backend nccl   (NCCL, one GPU per rank, a CUDA kernel)
#include "common.hpp"
#include "toy_model.hpp"

#include <devmesh/redistribute.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace dm = devmesh;

using hsdp_mesh = dm::mesh<dm::dim<"replicate", 2>, dm::dim<"shard", 4>>;
using params_spec = dm::sharding<hsdp_mesh, dm::on<"shard", dm::shard<0>>>;  // unnamed dims: Replicate
using full_spec = dm::sharding<hsdp_mesh>;
using grads_spec = dm::sharding<hsdp_mesh, dm::on<"replicate", dm::partial<dm::reduction::avg>>,
                                dm::on<"shard", dm::partial<dm::reduction::avg>>>;
constexpr dm::extents<toy::n_params> flat_params;  // the parameters as one flat tensor
constexpr dm::extents<1> one;                        // the loss

// The plans, computed by the compiler: each step is one collective over one group of the mesh.
constexpr auto gather_plan = dm::plan_redistribute(params_spec{}, full_spec{});
constexpr auto sync_plan = dm::plan_redistribute(grads_spec{}, params_spec{});
static_assert(gather_plan.collectives() == 1 && sync_plan.collectives() == 2);

constexpr int local_batch = 4;  // samples per rank
constexpr int steps = 10;
constexpr float lr = 0.5f;
constexpr float tolerance = 1e-5f;

template <class Comm>
int run(Comm& world) {
  // The whole setup: one communicator per dim, created collectively.
  auto mesh_2d = dm::init_device_mesh<hsdp_mesh>(world);
  examples::stream<Comm> stream;  // no_stream on MPI; a cudaStream_t on NCCL
  const int me = mesh_2d.rank(), pos = mesh_2d.position();

  // 1. Each rank keeps its chunk of the parameters: its block under params_spec.
  const auto chunk = static_cast<std::size_t>(params_spec{}.local_size(flat_params, pos));
  const dm::tensor_index first = params_spec{}.global_offset(flat_params, pos)[0];
  examples::buffer<float, Comm> init(toy::initial_params()), shard(chunk);  // init: the same on every rank
  dm::distribute(mesh_2d, params_spec{}, flat_params, init.cspan(), shard.span(), stream);

  // This rank's data: a distinct slice of the global batch.
  std::vector<float> hx, hy;
  toy::make_batch(me * local_batch, local_batch, hx, hy);
  examples::buffer<float, Comm> x(hx), y(hy);

  if (me == 0)
    std::cout << "mesh_2d = " << mesh_2d << "\n\n"
              << dm::rank_table(mesh_2d.layout()) << "\n"
              << dm::rank_grid(mesh_2d) << "\n"
              << "parameters " << dm::to_string(params_spec{}) << ", full " << dm::to_string(full_spec{})
              << ", gradients " << dm::to_string(grads_spec{}) << "\n"
              << "forward, parameters -> full:\n" << dm::to_string(gather_plan, mesh_2d.layout())
              << "gradient sync, gradients -> parameters:\n" << dm::to_string(sync_plan, mesh_2d.layout()) << "\n";
  examples::print_ordered("rank " + std::to_string(me) + ": parameters [" + std::to_string(first) + ", " +
                          std::to_string(first + static_cast<dm::tensor_index>(chunk)) + ") of " +
                          std::to_string(toy::n_params) + ", samples [" + std::to_string(me * local_batch) + ", " +
                          std::to_string((me + 1) * local_batch) + ")");

  examples::buffer<float, Comm> params(toy::n_params), grad(toy::n_params), grad_shard(chunk);
  examples::buffer<float, Comm> rows(static_cast<std::size_t>(local_batch * toy::n_params)), losses(local_batch),
      loss(1), mean_loss(1);
  const float scale = 1.f / static_cast<float>(local_batch * toy::out);  // MSE over the local batch

  std::vector<float> history;
  for (int step = 0; step < steps; ++step) {
    // 2. Forward needs the full parameters.
    dm::redistribute(mesh_2d, params_spec{}, full_spec{}, flat_params, shard.cspan(), params.span(), stream);
    // 3. Forward and backward, one sample per index (host loop / CUDA kernel).
    examples::for_each(local_batch,
                       toy::sample_grads{params.data(), x.data(), y.data(), rows.data(), losses.data(), toy::n_params,
                                         scale},
                       stream);
    examples::for_each(toy::n_params, toy::sum_rows{rows.data(), local_batch, toy::n_params, grad.data()}, stream);
    examples::for_each(1, toy::sum_rows{losses.data(), local_batch, 1, loss.data()}, stream);
    // 4. Gradient sync: the average over every rank, each keeping its chunk.
    dm::redistribute(mesh_2d, grads_spec{}, params_spec{}, flat_params, grad.cspan(), grad_shard.span(), stream);
    // 5. The optimizer updates the chunk only.
    examples::for_each(static_cast<int>(chunk), toy::sgd{shard.data(), grad_shard.data(), lr}, stream);
    // The global loss (mean over all 32 samples): Partial(avg) on both dims -> Replicate.
    dm::redistribute(mesh_2d, grads_spec{}, full_spec{}, one, loss.cspan(), mean_loss.span(), stream);
    stream.sync();
    history.push_back(mean_loss.to_host()[0]);
  }
  dm::full_tensor(mesh_2d, params_spec{}, flat_params, shard.cspan(), params.span(), stream);
  stream.sync();
  const std::vector<float> trained = params.to_host();

  // The same model on one process: every sample of every rank, one full-batch gradient.
  std::vector<float> reference = toy::initial_params();
  const std::vector<float> ref_history = toy::train_reference(reference, mesh_2d.world_size() * local_batch, steps, lr);

  if (me == 0) {
    std::cout << "\nstep  loss (HSDP, " << mesh_2d.world_size() << " ranks)  loss (1 process)\n";
    for (int s = 0; s < steps; ++s)
      std::printf("%4d  %-22.7f %.7f\n", s, static_cast<double>(history[static_cast<std::size_t>(s)]),
                  static_cast<double>(ref_history[static_cast<std::size_t>(s)]));
  }
  const float param_diff = toy::max_abs_diff(trained, reference, toy::n_params);
  const float loss_diff = toy::max_abs_diff(history, ref_history, history.size());
  examples::check(history.back() < 0.8f * history.front(), "the loss decreases by at least 20%");
  examples::check(param_diff <= tolerance && loss_diff <= tolerance,
                  "HSDP matches the single-process run: max |param diff| " + std::to_string(param_diff) +
                      ", max |loss diff| " + std::to_string(loss_diff));
  if (me == 0)
    std::printf("OK: loss %.4f -> %.4f; parameters match one process within %.1e (max diff %.2e)\n",
                static_cast<double>(history.front()), static_cast<double>(history.back()),
                static_cast<double>(tolerance), static_cast<double>(param_diff));
  return 0;
}

int main(int argc, char** argv) {
  return examples::main(argc, argv, [](auto& world) { return run(world); });
}
