// Example 13: Megatron-Core's process groups, from its command-line sizes, on one device mesh.
//
// Megatron reads tp, cp, pp, ep and expert tp (etp) from its arguments; dp is what is left of
// the world. Its RankGenerator lays the ranks out by an order string that lists the FASTEST
// dim first: "tp-cp-ep-dp-pp" (the default) or "tp-cp-ep-pp-dp". A devmesh mesh lists the
// slowest dim first, so the dense view is the world unflattened into the order reversed:
//   tp-cp-ep-dp-pp   dense (pp, dp, cp, tp)   expert (pp, edp, ep, etp)
//   tp-cp-ep-pp-dp   dense (dp, pp, cp, tp)   expert (edp, pp, ep, etp)
// with the sizes known only at run time (PyTorch's _unflatten(dim, sizes, names)): dp and
// edp inferred. The expert view is Megatron's second RankGenerator (tp=etp, ep, dp=edp, pp,
// cp=1): with the default order, the dense view's dp x cp x tp flattened and cut again into
// (edp, ep, etp), pp shared; an ep may straddle cp and tp (PyTorch 2.15's cut: the flattened
// dims coalesced, then cut). Both views come from one init_device_mesh, so pp, which both
// name, is one communicator; with options.share_equal_groups a dim of another name whose
// groups equal one made already (edp = dp, ep = tp, the size-1 dims below) gets that
// communicator too (on NCCL a communicator costs GPU memory). As Megatron's register_view,
// the views must agree on the dims they share (pp): checked.
//
// Megatron's embedding groups (the first and last stage of each pipeline group) are groups
// that are not a dim: mesh.subgroup<"pp">({0, -1}).
//
// It prints every group of every dim of both views (world ranks) and the embedding groups,
// then runs one collective per view: the sum of world ranks over tp (dense) and over ep
// (expert), and over the embedding group, checked on every rank against Megatron's rank
// arithmetic.
// Run: mpirun -np 8 ./13_megatron_layout --tp 2 --pp 2 --ep 2 [--cp 1] [--etp 1]
//      [--order tp-cp-ep-dp-pp|tp-cp-ep-pp-dp]
#include "common.hpp"

#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace dm = devmesh;

namespace {

struct megatron_args {
  int tp = 1, cp = 1, pp = 1, ep = 1, etp = 1;
  std::string order = "tp-cp-ep-dp-pp";
};

megatron_args parse(int argc, char** argv) {
  megatron_args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    int* size = k == "--tp" ? &a.tp : k == "--cp" ? &a.cp : k == "--pp" ? &a.pp : k == "--ep" ? &a.ep
              : k == "--etp" ? &a.etp : nullptr;
    if (k == "--order")
      a.order = argv[i + 1];
    else if (size)
      *size = std::atoi(argv[i + 1]);
    else if (k != "--backend")
      throw std::runtime_error("unknown argument " + k + " (use --tp --cp --pp --ep --etp --order)");
  }
  if (a.order != "tp-cp-ep-dp-pp" && a.order != "tp-cp-ep-pp-dp")
    throw std::runtime_error("--order " + a.order + ": this example knows tp-cp-ep-dp-pp and tp-cp-ep-pp-dp");
  return a;
}

/// "name: [a, b] [c, d] ...": every group of dim N over the root, as world ranks.
template <dm::fixed_string N, class Layout>
std::string groups_line(const Layout& l) {
  std::string out = "  " + std::string(N.view()) + ":";
  for (const auto& g : dm::all_groups<N>(l)) out += " " + examples::list(g);
  return out + "\n";
}

/// The groups of dim N in both views, as lists of world ranks.
template <dm::fixed_string N, class L>
std::vector<std::vector<int>> groups(const L& l) {
  std::vector<std::vector<int>> out;
  for (const auto& g : dm::all_groups<N>(l)) out.emplace_back(g.begin(), g.end());
  return out;
}

/// The sum of world ranks over this rank's communicator of dim N, and what Megatron's
/// arithmetic says it is (the group this rank is in, from the layout).
template <dm::fixed_string N, class Mesh>
void check_sum(const Mesh& mesh, const char* view) {
  std::vector<long> v{mesh.rank()};
  mesh.template all_reduce<N>(std::span(v), dm::op::sum);
  long want = 0;
  for (int r : mesh.layout().template group<N>(mesh.position())) want += r;
  examples::check(v[0] == want, std::string(view) + ": the sum over " + std::string(N.view()));
}

template <class Dense, class Expert>
void report(const megatron_args& a, int world, const Dense& dense, const Expert& expert, int created) {
  const auto& d = dense.layout();
  const auto& e = expert.layout();
  dm::check_shared_dims(d, e);  // Megatron's register_view: pp has the same groups in both views
  if (dense.rank() != 0) return;
  std::printf("world %d, --order %s: tp=%d cp=%d pp=%d dp=%d (inferred), ep=%d etp=%d edp=%d (inferred)\n", world,
              a.order.c_str(), a.tp, a.cp, a.pp, d.template size<"dp">(), a.ep, a.etp, e.template size<"edp">());
  std::printf("dense view %s\n%s%s%s%s", dm::to_string(d).c_str(), groups_line<"pp">(d).c_str(),
              groups_line<"dp">(d).c_str(), groups_line<"cp">(d).c_str(), groups_line<"tp">(d).c_str());
  std::printf("expert view %s\n%s%s%s%s", dm::to_string(e).c_str(), groups_line<"pp">(e).c_str(),
              groups_line<"edp">(e).c_str(), groups_line<"ep">(e).c_str(), groups_line<"etp">(e).c_str());
  std::printf("embedding (the first and last stage of each pp group):");
  for (const auto& g : groups<"pp">(d))
    std::printf(" %s", examples::list(g.size() > 1 ? std::vector<int>{g.front(), g.back()} : g).c_str());
  std::printf("\ncommunicators created for both views: %d (dims of equal groups share one)\n", created);
}

/// Megatron's embedding group: pp's first and last stage; the sum of world ranks over it.
template <class Dense>
void check_embedding(const Dense& dense) {
  auto embedding = dense.template subgroup<"pp">({0, -1});
  const int stage = dense.template local_rank<"pp">(), last = dense.template size<"pp">() - 1;
  examples::check(embedding.valid() == (stage == 0 || stage == last), "the embedding group's members");
  if (!embedding.valid()) return;
  const auto g = dense.layout().template group<"pp">(dense.position());
  long v = dense.rank(), want = g[0] + (last > 0 ? g[last] : 0);
  embedding.all_reduce(&v, &v, 1, dm::op::sum);
  examples::check(v == want, "the sum over the embedding group");
}

int run(dm::mpi::communicator& world, const megatron_args& a) {
  using world_mesh = dm::mesh<dm::dim<"world">>;
  dm::device_mesh_options<dm::mpi::communicator> options;
  options.share_equal_groups = true;  // equal groups, one communicator, whatever the dims' names
  auto root = dm::init_device_mesh(world, world_mesh(world.size()), options);
  const int n = world.size();
  if (a.order == "tp-cp-ep-dp-pp") {
    auto dense = root.unflatten<"world", dm::dim<"pp">, dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>(
        a.pp, dm::dynamic_size, a.cp, a.tp);
    auto expert = dense.flatten<"dp_cp_tp", "dp", "cp", "tp">()
                      .slice<"pp", "dp_cp_tp">()
                      .unflatten<"dp_cp_tp", dm::dim<"edp">, dm::dim<"ep">, dm::dim<"etp">>(
                          dm::dynamic_size, a.ep, a.etp);
    report(a, n, dense, expert, root.communicator_count());
    check_sum<"tp">(dense, "dense");
    check_sum<"ep">(expert, "expert");
    check_embedding(dense);
  } else {
    auto dense = root.unflatten<"world", dm::dim<"dp">, dm::dim<"pp">, dm::dim<"cp">, dm::dim<"tp">>(
        dm::dynamic_size, a.pp, a.cp, a.tp);
    auto expert = root.unflatten<"world", dm::dim<"edp">, dm::dim<"pp">, dm::dim<"ep">, dm::dim<"etp">>(
        dm::dynamic_size, a.pp, a.ep, a.etp);
    report(a, n, dense, expert, root.communicator_count());
    check_sum<"tp">(dense, "dense");
    check_sum<"ep">(expert, "expert");
    check_embedding(dense);
  }
  if (root.rank() == 0) std::printf("OK: one all_reduce per view (tp, ep) and over the embedding groups matches Megatron's groups\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The MPI backend only (host buffers): asked for NCCL, examples::main says so on every rank.
  return examples::main(argc, argv, [&](dm::mpi::communicator& world) { return run(world, parse(argc, argv)); });
}
