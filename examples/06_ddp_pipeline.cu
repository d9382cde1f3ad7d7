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
// `run` is a template over the backend, so named calls read `mesh.template shift<"pp">`.
// Run: mpirun -np 8 ./06_ddp_pipeline [--backend nccl]
#include "common.hpp"
#include "toy_model.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace dm = devmesh;

using mp_mesh = dm::mesh<dm::dim<"dp", 4>, dm::dim<"pp", 2>>;

constexpr int local_batch = 4;  // samples per replica
constexpr int steps = 10;
constexpr float lr = 0.5f;

template <class Comm>
int run(Comm& world) {
  auto mesh = dm::init_device_mesh<mp_mesh>(world);
  examples::stream<Comm> s;
  const int stage = mesh.template local_rank<"pp">();
  const int replica = mesh.template local_rank<"dp">();
  // The parameters this stage owns: [first, last) of the flat ToyModel parameters.
  const int first = stage == 0 ? toy::w1 : toy::w2, last = stage == 0 ? toy::w2 : toy::n_params;
  const int owned = last - first;

  // Both stages start from the same full initial parameters; each uses only its part.
  examples::buffer<float, Comm> params(toy::initial_params());
  std::vector<float> hx, hy;
  toy::make_batch(replica * local_batch, local_batch, hx, hy);  // the replica's samples
  examples::buffer<float, Comm> x(hx), y(hy);
  const std::size_t acts = local_batch * toy::hidden;
  examples::buffer<float, Comm> pre(acts), h(acts), h_in(acts), dh(acts), dh_in(acts);  // send / receive
  examples::buffer<float, Comm> rows(local_batch * toy::n_params), grad(toy::n_params), losses(local_batch), loss(1);
  const float scale = 1.f / static_cast<float>(local_batch * toy::out);

  std::vector<float> history;
  for (int step = 0; step < steps; ++step) {
    if (stage == 0) examples::for_each(local_batch, toy::stage0_forward{params.data(), x.data(), pre.data(), h.data()}, s);
    // Activations to the next stage: stage 0 sends, stage 1 receives (the ends send or
    // receive nothing: the pp dim is not periodic).
    mesh.template shift<"pp">(h.cspan(), h_in.span(), +1, false, s);
    if (stage == 1)
      examples::for_each(local_batch,
                         toy::stage1_forward_backward{params.data(), h_in.data(), y.data(), rows.data(), losses.data(),
                                                      dh.data(), scale},
                         s);
    // Gradients of the activations back: stage 1 sends, stage 0 receives.
    mesh.template shift<"pp">(dh.cspan(), dh_in.span(), -1, false, s);
    if (stage == 0) examples::for_each(local_batch, toy::stage0_backward{x.data(), pre.data(), dh_in.data(), rows.data()}, s);
    examples::for_each(toy::n_params, toy::sum_rows{rows.data(), local_batch, toy::n_params, grad.data()}, s);
    // DDP over the replicas, on this stage's parameters only.
    const auto mine = grad.span().subspan(static_cast<std::size_t>(first), static_cast<std::size_t>(owned));
    mesh.template all_reduce<"dp">(mine, dm::op::avg, s);
    examples::for_each(owned, toy::sgd{params.data() + first, grad.data() + first, lr}, s);
    // The loss lives on stage 1: average it over its replicas (stage 0 averages zeros).
    examples::for_each(1, toy::sum_rows{losses.data(), local_batch, 1, loss.data()}, s);
    mesh.template all_reduce<"dp">(loss.span(), dm::op::avg, s);
    s.sync();
    history.push_back(loss.to_host()[0]);
  }

  std::vector<float> reference = toy::initial_params();
  const auto ref_losses = toy::train_reference(reference, mesh.template size<"dp">() * local_batch, steps, lr);
  const auto trained = params.to_host();
  float diff = 0.f;
  for (int i = first; i < last; ++i)
    diff = std::max(diff, std::abs(trained[static_cast<std::size_t>(i)] - reference[static_cast<std::size_t>(i)]));
  examples::check(diff <= 1e-5f, "stage " + std::to_string(stage) + " matches one process (max |param diff| " +
                                     std::to_string(diff) + ")");
  const float loss_diff = stage == 1 ? toy::max_abs_diff(history, ref_losses, ref_losses.size()) : 0.f;
  examples::check(stage == 0 || (history.back() < history.front() && loss_diff <= 1e-5f),
                  "the loss decreases as in one process (max |loss diff| " + std::to_string(loss_diff) + ")");
  examples::print_ordered("rank " + std::to_string(mesh.rank()) + ": replica " + std::to_string(replica) + ", stage " +
                          std::to_string(stage) + " (params [" + std::to_string(first) + ", " + std::to_string(last) +
                          ")), max |diff| to one process " + std::to_string(diff) +
                          (stage == 1 ? ", loss " + std::to_string(history.front()) + " -> " +
                                            std::to_string(history.back())
                                      : std::string()));
  if (mesh.rank() == 0) std::cout << "OK: pipeline over pp + DDP over dp equals one process\n";
  return 0;
}

int main(int argc, char** argv) {
  return examples::main(argc, argv, [](auto& world) { return run(world); });
}
