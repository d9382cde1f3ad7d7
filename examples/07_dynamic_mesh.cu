// Example 7: a mesh whose "dp" size comes from the job size.
//
// PyTorch writes init_device_mesh("cuda", (-1, 2), mesh_dim_names=("dp", "tp")) style code
// by computing world_size // tp itself. In devmesh a dim without a size is dynamic:
//   using mesh_t = dm::mesh<dm::dim<"dp">, dm::dim<"tp", 2>>;
//   auto mesh = dm::init_device_mesh<mesh_t>(world);   // dp = world size / 2
// The same binary runs unchanged on 2, 4 or 8 ranks (ctest runs all three). Names and the
// tp size stay compile-time: mesh.size<"tp">() is a constant, a typo in a name does not
// compile; only dp's size is a run-time value. A world that tp does not divide is rejected
// on every rank with a devmesh::mesh_error (shown below without creating anything).
//
// The dims are used through their 1-D submeshes, mesh["tp"_dim] (PyTorch's mesh["tp"]).
//
// It prints the mesh it got (rank table and grid: its shape depends on the job), then each
// rank's coordinate and the sums over tp and over the whole world.
// Run: mpirun -np 2|4|8 ./07_dynamic_mesh [--backend nccl]
#include "common.hpp"

#include <vector>

namespace dm = devmesh;
using namespace dm::literals;

using mesh_t = dm::mesh<dm::dim<"dp">, dm::dim<"tp", 2>>;
static_assert(mesh_t::ndim == 2 && !mesh_t::is_static);  // the shape is known, one size is not

template <class Comm>
int run(Comm& world) {
  auto mesh = dm::init_device_mesh<mesh_t>(world);
  auto dp_mesh = mesh["dp"_dim];
  auto tp_mesh = mesh["tp"_dim];
  const int dp = dp_mesh.size(), tp = tp_mesh.size();  // tp is 2 at compile time, dp is not
  const int me = mesh.rank();
  examples::stream<Comm> s;

  if (me == 0)
    std::cout << "mesh = " << mesh << " (dp = " << world.size() << " ranks / tp " << tp << " = " << dp << ")\n\n"
              << dm::rank_table(mesh.layout()) << "\n"
              << dm::rank_nested(mesh) << "\n"
              << dm::rank_grid(mesh) << "\n";

  // A tiny tensor-parallel + data-parallel computation: each rank holds one number, the
  // tp pair adds theirs (a sharded dot product's partial sums), dp sums across replicas.
  examples::buffer<int, Comm> value(std::vector<int>{me + 1});
  tp_mesh.all_reduce(value.span(), dm::op::sum, s);
  s.sync();
  examples::buffer<int, Comm> total(std::vector<int>{value.to_host()[0]});
  dp_mesh.all_reduce(total.span(), dm::op::sum, s);
  s.sync();
  const int pair_sum = value.to_host()[0], all_sum = total.to_host()[0];

  const auto group = tp_mesh.layout().group(me);
  const int n = mesh.size();
  examples::check(dp * tp == world.size(), "dp * tp is the world size");
  examples::check(pair_sum == group[0] + group[1] + 2, "tp sums its pair");
  examples::check(all_sum == n * (n + 1) / 2, "tp then dp sums the whole world");
  examples::print_ordered("rank " + std::to_string(me) + ": (dp, tp) = (" + std::to_string(dp_mesh.local_rank()) + ", " +
                          std::to_string(tp_mesh.local_rank()) + "), tp group " + examples::list(group) +
                          ", dp group " + examples::list(dp_mesh.layout().group(me)) + "; 1 + rank summed over tp " +
                          std::to_string(pair_sum) + ", then over dp " + std::to_string(all_sum));
  if (me == 0) {
    try {
      (void)mesh_t::for_world(world.size() + 1);  // what an odd-sized job would get
    } catch (const dm::mesh_error& e) {
      std::cout << "a world of " << world.size() + 1 << " ranks: " << e.what() << "\n";
    }
    std::cout << "OK: dp = " << dp << " inferred from " << world.size() << " ranks\n";
  }
  return 0;
}

int main(int argc, char** argv) {
  return examples::main(argc, argv, [](auto& world) { return run(world); });
}
