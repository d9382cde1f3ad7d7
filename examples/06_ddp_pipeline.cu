// Example 6: DDP with model parallelism, as the DDP tutorial's ToyMpModel.
//
// The tutorial puts net1 on dev0 and net2 on dev1 of one process and wraps the two-device
// model in DDP. Here each stage is a rank: on a (dp=4, pp=2) mesh, a replica is the two
// ranks of a "pp" group, stage 0 holds net1 (+ ReLU), stage 1 holds net2 and the loss.
//   forward:  stage 0 -> activations -> stage 1      (shift<"pp"> by +1)
//   backward: stage 1 -> dL/dactivations -> stage 0  (shift<"pp"> by -1)
// Each stage then averages its gradients over "dp" (the 4 ranks holding the same stage) and
// takes an SGD step. The program checks that the loss decreases and that both stages'
// parameters match a single-process run of the whole model on all samples.
//
// Each dim is used through its 1-D submesh, mesh["pp"_dim] (PyTorch's mesh["pp"]): the
// pipeline shifts along pp_mesh, DDP averages along dp_mesh.
//
// It prints the mesh (rank table and grid), each rank's replica, stage and groups, then the
// loss of every step (stage 1's, broadcast along pp) next to one process's.
// Run: mpirun -np 8 ./06_ddp_pipeline [--backend nccl]
#include "common.hpp"
#include "toy_model.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace dm = devmesh;
using namespace dm::literals;

using mp_mesh = dm::mesh<dm::dim<"dp", 4>, dm::dim<"pp", 2>>;

constexpr int local_batch = 4;  // samples per replica
constexpr int steps = 10;
constexpr float lr = 0.5f;

template <class Comm>
int run(Comm& world) {
  auto mesh = dm::init_device_mesh<mp_mesh>(world);
  auto pp_mesh = mesh["pp"_dim];  // the two stages of one replica: (0, 1), (2, 3), ...
  auto dp_mesh = mesh["dp"_dim];  // the 4 ranks holding the same stage: (0, 2, 4, 6), (1, 3, 5, 7)
  examples::stream<Comm> s;
  const int stage = pp_mesh.local_rank();
  const int replica = dp_mesh.local_rank();
  const int me = mesh.rank();
  // The parameters this stage owns: [first, last) of the flat ToyModel parameters.
  const int first = stage == 0 ? toy::w1 : toy::w2, last = stage == 0 ? toy::w2 : toy::n_params;
  const int owned = last - first;

  if (me == 0)
    std::cout << "mesh = " << mesh << "\n\n"
              << dm::rank_table(mesh.layout()) << "\n"
              << dm::rank_nested(mesh) << "\n"
              << dm::rank_grid(mesh) << "\n";
  examples::print_ordered("rank " + std::to_string(me) + ": replica " + std::to_string(replica) + ", stage " +
                          std::to_string(stage) + (stage == 0 ? " (net1 + ReLU" : " (net2 + loss") + ", parameters [" +
                          std::to_string(first) + ", " + std::to_string(last) + ")), pp group " +
                          examples::list(pp_mesh.layout().group(me)) + ", dp group " +
                          examples::list(dp_mesh.layout().group(me)) + ", samples [" +
                          std::to_string(replica * local_batch) + ", " + std::to_string((replica + 1) * local_batch) +
                          ")");

  // Both stages start from the same full initial parameters; each uses only its part.
  examples::buffer<float, Comm> params(toy::initial_params());
  std::vector<float> hx, hy;
  toy::make_batch(replica * local_batch, local_batch, hx, hy);  // the replica's samples
  examples::buffer<float, Comm> x(hx), y(hy);
  const std::size_t acts = local_batch * toy::hidden;
  examples::buffer<float, Comm> pre(acts), h(acts), h_in(acts), dh(acts), dh_in(acts);  // send / receive
  examples::buffer<float, Comm> rows(local_batch * toy::n_params), grad(toy::n_params), losses(local_batch), loss(1);
  examples::buffer<float, Comm> history(steps);  // the loss of each step (stage 1's)
  const float scale = 1.f / static_cast<float>(local_batch * toy::out);

  for (int step = 0; step < steps; ++step) {
    if (stage == 0) examples::for_each(local_batch, toy::stage0_forward{params.data(), x.data(), pre.data(), h.data()}, s);
    // Activations to the next stage: stage 0 sends, stage 1 receives (the ends send or
    // receive nothing: the pp dim is not periodic).
    pp_mesh.shift(h.cspan(), h_in.span(), +1, false, s);
    if (stage == 1)
      examples::for_each(local_batch,
                         toy::stage1_forward_backward{params.data(), h_in.data(), y.data(), rows.data(), losses.data(),
                                                      dh.data(), scale},
                         s);
    // Gradients of the activations back: stage 1 sends, stage 0 receives.
    pp_mesh.shift(dh.cspan(), dh_in.span(), -1, false, s);
    if (stage == 0) examples::for_each(local_batch, toy::stage0_backward{x.data(), pre.data(), dh_in.data(), rows.data()}, s);
    examples::for_each(toy::n_params, toy::sum_rows{rows.data(), local_batch, toy::n_params, grad.data()}, s);
    // DDP over the replicas, on this stage's parameters only.
    const auto mine = grad.span().subspan(static_cast<std::size_t>(first), static_cast<std::size_t>(owned));
    dp_mesh.all_reduce(mine, dm::op::avg, s);
    examples::for_each(owned, toy::sgd{params.data() + first, grad.data() + first, lr}, s);
    // The loss lives on stage 1: average it over its replicas (stage 0 averages zeros).
    examples::for_each(1, toy::sum_rows{losses.data(), local_batch, 1, loss.data()}, s);
    dp_mesh.all_reduce(loss.span(), dm::op::avg, s);
    examples::for_each(1, toy::sum_rows{loss.data(), 1, 1, history.data() + step}, s);
  }
  // Stage 1 knows the losses: broadcast them along pp, so that stage 0 (rank 0) has them.
  pp_mesh.broadcast(history.span(), /*root=*/1, s);
  s.sync();
  const std::vector<float> losses_seen = history.to_host();

  std::vector<float> reference = toy::initial_params();
  const auto ref_losses = toy::train_reference(reference, dp_mesh.size() * local_batch, steps, lr);
  const auto trained = params.to_host();
  float diff = 0.f;
  for (int i = first; i < last; ++i)
    diff = std::max(diff, std::abs(trained[static_cast<std::size_t>(i)] - reference[static_cast<std::size_t>(i)]));
  examples::check(diff <= 1e-5f, "stage " + std::to_string(stage) + " matches one process (max |param diff| " +
                                     std::to_string(diff) + ")");
  const float loss_diff = toy::max_abs_diff(losses_seen, ref_losses, ref_losses.size());
  examples::check(losses_seen.back() < losses_seen.front() && loss_diff <= 1e-5f,
                  "the loss decreases as in one process (max |loss diff| " + std::to_string(loss_diff) + ")");
  if (me == 0) {
    std::cout << "\nstep  loss (pipeline + DDP, " << mesh.size() << " ranks)  loss (1 process)\n";
    for (int i = 0; i < steps; ++i)
      std::printf("%4d  %-30.7f %.7f\n", i, static_cast<double>(losses_seen[static_cast<std::size_t>(i)]),
                  static_cast<double>(ref_losses[static_cast<std::size_t>(i)]));
    std::cout << std::flush;
  }
  examples::print_ordered((me == 0 ? std::string("\n") : std::string()) + "rank " + std::to_string(me) + ": stage " +
                          std::to_string(stage) + " parameters, max |diff| to one process " + examples::sci(diff));
  if (me == 0) std::cout << "OK: pipeline over pp + DDP over dp equals one process\n";
  return 0;
}

int main(int argc, char** argv) {
  return examples::main(argc, argv, [](auto& world) { return run(world); });
}
