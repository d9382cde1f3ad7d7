// Example 3: HSDP gradient sync (hybrid sharded data parallel) on a (replicate=2, shard=4) mesh.
//
// HSDP is FSDP inside a replica group and DDP across them, as in PyTorch's DeviceMesh recipe:
//   mesh_2d = init_device_mesh("cuda", (2, 4), mesh_dim_names=("replicate", "shard"))
//   model = FSDP(ToyModel(), device_mesh=mesh_2d, sharding_strategy=HYBRID_SHARD)
// Here the FSDP steps are spelled out, each one a collective on one named dim:
//   1. every rank keeps 1/4 of the flat parameters (its shard along "shard");
//   2. forward: all_gather<"shard"> rebuilds the full parameters;
//   3. backward: the local gradient of the full parameters (real ToyModel backward);
//   4. reduce_scatter<"shard">: each rank gets the average of its shard's gradient over
//      the 4 ranks of its replica; all_reduce<"replicate"> averages it across the 2 replicas;
//   5. SGD on the shard.
// All 8 ranks see different data (world rank r trains on samples [4r, 4r + 4)), so after
// the two averages every shard has the full 32-sample gradient. The program checks that the
// loss goes down and that it matches a single-process run of the same model on all 32
// samples (computed on every rank), and exits non-zero otherwise.
//
// Each dim is used through its 1-D submesh, as PyTorch code uses mesh_2d["shard"]:
//   auto shard_mesh = mesh_2d["shard"_dim];   shard_mesh.all_gather(...)
// which is mesh_2d.all_gather<"shard">(...) on the same communicator; in a template over the
// backend (`run` serves both) its free form dm::all_gather<"shard">(mesh_2d, ...) reads the same.
//
// It prints the mesh (rank table and grid), what each rank holds (its groups, its shard of
// the parameters, its samples), then the loss of every step next to one process's.
//
// Run: mpirun -np 8 ./03_hsdp                  (MPI, host code)
//      mpirun -np 8 ./03_hsdp --backend nccl   (NCCL, one GPU per rank, a CUDA kernel)
#include "common.hpp"
#include "toy_model.hpp"

#include <cstdio>
#include <string>
#include <vector>

using namespace devmesh::literals;

namespace dm = devmesh;

using hsdp_mesh = dm::mesh<dm::dim<"replicate", 2>, dm::dim<"shard", 4>>;

constexpr int local_batch = 4;  // samples per rank
constexpr int steps = 10;
constexpr float lr = 0.5f;
constexpr float tolerance = 1e-5f;

template <class Comm>
int run(Comm& world) {
  // The whole setup: one communicator per dim, created collectively.
  auto mesh_2d = dm::init_device_mesh<hsdp_mesh>(world);
  auto shard_mesh = mesh_2d["shard"_dim];          // FSDP within a replica: (0,1,2,3), (4,5,6,7)
  auto replicate_mesh = mesh_2d["replicate"_dim];  // DDP across replicas: (0,4), (1,5), ...
  examples::stream<Comm> stream;                   // no_stream on MPI; a cudaStream_t on NCCL

  // 1. Shard the flat parameters over "shard" (padded so that 4 shards are equal).
  constexpr int shards = hsdp_mesh{}.size<"shard">();
  constexpr int shard_len = (toy::n_params + shards - 1) / shards;  // 42
  constexpr int padded = shard_len * shards;                         // 168
  const int my_shard = shard_mesh.local_rank();
  std::vector<float> init = toy::initial_params();  // identical on every rank
  init.resize(padded, 0.f);
  examples::buffer<float, Comm> shard(
      std::vector<float>(init.begin() + my_shard * shard_len, init.begin() + (my_shard + 1) * shard_len));

  // This rank's data: a distinct slice of the global batch.
  const int me = mesh_2d.rank();
  std::vector<float> hx, hy;
  toy::make_batch(me * local_batch, local_batch, hx, hy);
  examples::buffer<float, Comm> x(hx), y(hy);

  if (me == 0)
    std::cout << "mesh_2d = " << mesh_2d << "\n\n"
              << dm::rank_table(mesh_2d.layout()) << "\n"
              << dm::rank_nested(mesh_2d) << "\n"
              << dm::rank_grid(mesh_2d) << "\n";
  examples::print_ordered("rank " + std::to_string(me) + ": shard group " + examples::list(shard_mesh.layout().group(me)) +
                          " (shard " + std::to_string(my_shard) + ": parameters [" + std::to_string(my_shard * shard_len) +
                          ", " + std::to_string((my_shard + 1) * shard_len) + ") of " + std::to_string(padded) +
                          "), replicate group " + examples::list(replicate_mesh.layout().group(me)) + ", samples [" +
                          std::to_string(me * local_batch) + ", " + std::to_string((me + 1) * local_batch) + ")");

  examples::buffer<float, Comm> params(padded), grad(padded), grad_shard(shard_len);
  examples::buffer<float, Comm> rows(static_cast<std::size_t>(local_batch * padded)), losses(local_batch), loss(1);
  const float scale = 1.f / static_cast<float>(local_batch * toy::out);  // MSE over the local batch

  std::vector<float> history;
  for (int step = 0; step < steps; ++step) {
    // 2. Forward needs the full parameters: gather the 4 shards of this replica.
    shard_mesh.all_gather(shard.cspan(), params.span(), stream);
    // 3. Forward and backward, one sample per index (host loop / CUDA kernel).
    examples::for_each(local_batch,
                       toy::sample_grads{params.data(), x.data(), y.data(), rows.data(), losses.data(), padded, scale},
                       stream);
    examples::for_each(padded, toy::sum_rows{rows.data(), local_batch, padded, grad.data()}, stream);
    examples::for_each(1, toy::sum_rows{losses.data(), local_batch, 1, loss.data()}, stream);
    // 4. Gradient sync: average over the shard group, keeping only this rank's shard,
    //    then over the replicas.
    shard_mesh.reduce_scatter(grad.cspan(), grad_shard.span(), dm::op::avg, stream);
    replicate_mesh.all_reduce(grad_shard.span(), dm::op::avg, stream);
    // 5. The optimizer updates the shard only.
    examples::for_each(shard_len, toy::sgd{shard.data(), grad_shard.data(), lr}, stream);
    // The global loss (mean over all 32 samples): the same two averages.
    shard_mesh.all_reduce(loss.span(), dm::op::avg, stream);
    replicate_mesh.all_reduce(loss.span(), dm::op::avg, stream);
    stream.sync();
    history.push_back(loss.to_host()[0]);
  }
  shard_mesh.all_gather(shard.cspan(), params.span(), stream);
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
