// Example 5: DDP training with a checkpoint, as in PyTorch's DDP tutorial (demo_checkpoint).
//
// Every rank holds the whole ToyModel and trains on its own samples; after each backward the
// gradients are averaged over "dp" (what DDP's hooks do). Then, as in the tutorial:
//   if rank == 0: torch.save(model.state_dict(), CHECKPOINT_PATH)
//   dist.barrier()                       # nobody loads before rank 0 has written
//   model.load_state_dict(torch.load(CHECKPOINT_PATH))
// Here every rank first throws its parameters away (as a restarted job would), loads the
// file rank 0 wrote to a fresh temporary directory, and training continues. The program
// asserts that the parameters are identical on all ranks after loading and at the end, and
// that they match a single-process run of the same model on all samples.
//
// The mesh is 1-D, so its collectives need no dim name: mesh.all_reduce(grad, dm::op::avg).
//
// It prints the loss of every step next to one process's, and the checkpoint's round trip:
// what rank 0 wrote, and what every rank had before, after forgetting and after loading.
// Run: mpirun -np 8 ./05_ddp_checkpoint [--backend nccl]
#include "common.hpp"
#include "toy_model.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

namespace dm = devmesh;
namespace fs = std::filesystem;

using ddp_mesh = dm::mesh<dm::dim<"dp">>;  // 1-D, its size is the job's

constexpr int local_batch = 4;
constexpr int steps_before = 5, steps_after = 5;
constexpr float lr = 0.5f;

template <class Comm>
struct trainer {
  const dm::device_mesh<ddp_mesh, Comm>& mesh;
  examples::stream<Comm>& s;
  examples::buffer<float, Comm> params{toy::initial_params()};  // same init everywhere
  examples::buffer<float, Comm> x{local_batch * toy::in}, y{local_batch * toy::out};
  examples::buffer<float, Comm> rows{local_batch * toy::n_params}, losses{local_batch}, grad{toy::n_params};
  examples::buffer<float, Comm> loss{1};
  std::vector<float> history;  // the global loss before each step

  trainer(const dm::device_mesh<ddp_mesh, Comm>& m, examples::stream<Comm>& st) : mesh(m), s(st) {
    std::vector<float> hx, hy;
    toy::make_batch(mesh.rank() * local_batch, local_batch, hx, hy);  // this rank's samples
    x.assign(hx), y.assign(hy);
  }

  void step() {
    const float scale = 1.f / static_cast<float>(local_batch * toy::out);
    examples::for_each(local_batch,
                       toy::sample_grads{params.data(), x.data(), y.data(), rows.data(), losses.data(),
                                         toy::n_params, scale},
                       s);
    examples::for_each(toy::n_params, toy::sum_rows{rows.data(), local_batch, toy::n_params, grad.data()}, s);
    mesh.all_reduce(grad.span(), dm::op::avg, s);  // DDP: the average gradient over "dp"
    examples::for_each(toy::n_params, toy::sgd{params.data(), grad.data(), lr}, s);
    examples::for_each(1, toy::sum_rows{losses.data(), local_batch, 1, loss.data()}, s);
    mesh.all_reduce(loss.span(), dm::op::avg, s);  // the loss over all samples
    s.sync();
    history.push_back(loss.to_host()[0]);
  }

  /// True on every rank iff every rank has bit-identical parameters (min == max over dp).
  bool identical_everywhere() {
    examples::buffer<float, Comm> lo(toy::n_params), hi(toy::n_params);
    mesh.all_reduce(params.cspan(), lo.span(), dm::op::min, s);
    mesh.all_reduce(params.cspan(), hi.span(), dm::op::max, s);
    s.sync();
    return lo.to_host() == hi.to_host() && lo.to_host() == params.to_host();
  }
};

/// "sum 1.2345678, p[0..2] = 0.1, 0.2, 0.3" (or "165 NaN") of a parameter vector.
inline std::string describe(const std::vector<float>& p) {
  const auto nans = std::count_if(p.begin(), p.end(), [](float v) { return std::isnan(v); });
  if (nans) return std::to_string(nans) + " NaN";
  double sum = 0;
  for (float v : p) sum += v;
  char buf[128];
  std::snprintf(buf, sizeof buf, "sum %.7f, p[0..2] = %.7f, %.7f, %.7f", sum, static_cast<double>(p[0]),
                static_cast<double>(p[1]), static_cast<double>(p[2]));
  return buf;
}

template <class Comm>
int run(Comm& world) {
  auto mesh = dm::init_device_mesh<ddp_mesh>(world);  // dp = the number of ranks
  const int me = mesh.rank();
  examples::stream<Comm> s;
  trainer<Comm> model(mesh, s);
  std::vector<float> reference = toy::initial_params();
  const auto ref_losses =
      toy::train_reference(reference, mesh.size() * local_batch, steps_before + steps_after, lr);
  auto print_steps = [&](int from, int to) {
    if (me != 0) return;
    for (int i = from; i < to; ++i)
      std::printf("%4d  %-21.7f %.7f\n", i, static_cast<double>(model.history[static_cast<std::size_t>(i)]),
                  static_cast<double>(ref_losses[static_cast<std::size_t>(i)]));
    std::fflush(stdout);
  };

  if (me == 0)
    std::cout << "mesh = " << mesh << "\n"
              << "dp group: " << examples::list(mesh.layout().group(me)) << " (rank r trains on samples [" << local_batch
              << "r, " << local_batch << "r + " << local_batch << "))\n\n"
              << "step  loss (DDP, " << mesh.size() << " ranks)  loss (1 process)\n"
              << std::flush;
  for (int i = 0; i < steps_before; ++i) model.step();
  print_steps(0, steps_before);

  // Rank 0 saves; the path is rank 0's temporary directory, sent to everyone.
  std::string dir;
  if (me == 0) {
    std::string tmpl = (fs::temp_directory_path() / "devmesh_ckpt_XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
    dir = tmpl;
  }
  const fs::path checkpoint = fs::path(examples::broadcast_string(dir)) / "model.checkpoint";
  const std::vector<float> before = model.params.to_host();
  if (me == 0) {
    std::ofstream(checkpoint, std::ios::binary)
        .write(reinterpret_cast<const char*>(before.data()), static_cast<std::streamsize>(before.size() * sizeof(float)));
    std::cout << "checkpoint after step " << steps_before - 1 << ": rank 0 wrote " << fs::file_size(checkpoint)
              << " bytes (" << toy::n_params << " floats) to " << checkpoint.filename() << ": " << describe(before)
              << "\n" << std::flush;
  }
  mesh.barrier(s);  // dist.barrier(): nobody loads before rank 0 has written

  // Every rank "restarts": forgets its parameters and loads the checkpoint.
  model.params.assign(std::vector<float>(toy::n_params, std::numeric_limits<float>::quiet_NaN()));
  const std::vector<float> forgotten = model.params.to_host();
  std::vector<float> loaded(toy::n_params);
  std::ifstream in(checkpoint, std::ios::binary);
  in.read(reinterpret_cast<char*>(loaded.data()), static_cast<std::streamsize>(loaded.size() * sizeof(float)));
  examples::check(static_cast<bool>(in), "the checkpoint is readable and has " + std::to_string(toy::n_params) + " floats");
  model.params.assign(loaded);
  const bool same_as_before = model.params.to_host() == before;
  examples::print_by_rank("barrier; then every rank forgot its parameters and loaded the file:",
                          "before: " + describe(before) + "\nforgotten: " + describe(forgotten) +
                              "\nloaded: " + describe(model.params.to_host()) +
                              (same_as_before ? " (bit-identical to before)\n" : " (DIFFERENT from before)\n"));
  examples::check(same_as_before, "every rank loaded exactly the parameters it had");
  examples::check(model.identical_everywhere(), "parameters identical on all ranks after loading");

  for (int i = 0; i < steps_after; ++i) model.step();
  print_steps(steps_before, steps_before + steps_after);
  // The step's all_reduce synchronized everyone: rank 0 may delete the checkpoint now.
  if (me == 0) fs::remove_all(checkpoint.parent_path());
  examples::check(model.identical_everywhere(), "parameters identical on all ranks after training on");

  const float diff = toy::max_abs_diff(model.params.to_host(), reference, toy::n_params);
  examples::check(diff <= 1e-5f, "DDP matches one process (max |param diff| " + std::to_string(diff) + ")");
  const float loss_diff = toy::max_abs_diff(model.history, ref_losses, ref_losses.size());
  examples::check(model.history.back() < model.history.front() && loss_diff <= 1e-5f,
                  "the loss decreases, as in one process (max |loss diff| " + std::to_string(loss_diff) + ")");
  if (me == 0)
    std::cout << "OK: saved by rank 0 after " << steps_before << " steps, loaded by all " << mesh.size() << " ranks, "
              << steps_after << " more steps; parameters identical on every rank and equal to one process (max diff "
              << examples::sci(diff) << ")\n";
  return 0;
}

int main(int argc, char** argv) {
  return examples::main(argc, argv, [](auto& world) { return run(world); });
}
