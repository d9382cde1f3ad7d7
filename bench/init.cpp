// bench/init.cpp: creating one communicator per mesh dim, four ways, under mpirun -np N.
//
//   devmesh        dm::init_device_mesh: MPI_Comm_idup of the world (the mesh's private
//                  control communicator), one MPI_Comm_create_group per dim (collective over
//                  the dim's group only; its members are known from the layout), and two
//                  agreement steps over the control communicator: before creating, one
//                  all-reduce of an error flag and the mesh's SHA-256 digest (9 words); after,
//                  one all-reduce of every creation's outcome (a word per dim).
//                  collective_bytes_received is what those deliver per rank: constant in the
//                  world size (an all-gather would grow)
//   pytorch        PyTorch's new_group pattern (_init_process_groups without split_group):
//                  for every dim, materialise the rank tensor, swapdims + reshape, and let
//                  EVERY rank create EVERY subgroup (MPI_Comm_create is collective over the
//                  world, as new_group is); keep the one that holds the rank
//   create_group   the same groups, each created only by its members (MPI_Comm_create_group)
//   cart           MPI_Cart_create + one MPI_Cart_sub per dim
//   split_only     the mesh's splits alone (mesh.comm_split(rank, d) + MPI_Comm_split per dim,
//                  none for a 1-D mesh over the world), without init_device_mesh's checks:
//                  what devmesh cost before it created dims with MPI_Comm_create_group (the
//                  create_group row is that way without the control communicator and checks)
//
// Meshes (products equal N): 3-D (max(N/4,1), min(2,N/2), 2), 2-D (2, N/2), 1-D (N).
// Output: one JSON object per (mesh, method) on rank 0's stdout; communicator-creating calls
// per rank (counted with PMPI, max over ranks), other collectives per rank, median over
// repetitions of the slowest rank's wall time. The methods run in rotating order.
// usage: mpirun -np N init [--reps R]
#include <devmesh/mpi/native.hpp>  // <mpi.h> without the C++ bindings

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <devmesh/devmesh.hpp>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpi_counters.hpp"

namespace dm = devmesh;

namespace {

int world_rank = 0, world_size = 1;

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI error in ") + what);
}

/// PyTorch's pg_ranks_by_dim for dim d: mesh.swapdims(-1, d).reshape(-1, shape[d]).
std::vector<std::vector<int>> pytorch_groups(const std::vector<int>& shape, int d) {
  const int nd = static_cast<int>(shape.size());
  int world = 1;
  for (int s : shape) world *= s;
  std::vector<int> mesh(static_cast<std::size_t>(world));
  std::iota(mesh.begin(), mesh.end(), 0);
  std::vector<int> perm(static_cast<std::size_t>(nd));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[d], perm[nd - 1]);
  std::vector<long> stride(static_cast<std::size_t>(nd));
  for (long s = 1, i = nd - 1; i >= 0; --i) stride[i] = s, s *= shape[i];
  std::vector<int> coord(static_cast<std::size_t>(nd), 0), flat;
  long src = 0;
  for (int i = 0; i < world; ++i) {
    flat.push_back(mesh[src]);
    for (int j = nd - 1; j >= 0; --j) {
      const int k = perm[j];
      src += stride[k];
      if (++coord[j] < shape[k]) break;
      src -= stride[k] * shape[k];
      coord[j] = 0;
    }
  }
  std::vector<std::vector<int>> rows;
  for (int r = 0; r < world / shape[d]; ++r) rows.emplace_back(flat.begin() + r * shape[d], flat.begin() + (r + 1) * shape[d]);
  return rows;
}

std::vector<MPI_Comm> make_pytorch(const std::vector<int>& shape, bool members_only) {
  // PyTorch's special case: a 1-D mesh over the whole world reuses the default group.
  if (!members_only && shape.size() == 1) return {MPI_COMM_WORLD};
  MPI_Group world_group;
  check(MPI_Comm_group(MPI_COMM_WORLD, &world_group), "MPI_Comm_group");
  std::vector<MPI_Comm> mine;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    MPI_Comm dim_comm = MPI_COMM_NULL;
    for (const auto& ranks : pytorch_groups(shape, d)) {
      const bool member = std::find(ranks.begin(), ranks.end(), world_rank) != ranks.end();
      if (members_only && !member) continue;
      MPI_Group g;
      check(MPI_Group_incl(world_group, static_cast<int>(ranks.size()), ranks.data(), &g), "MPI_Group_incl");
      MPI_Comm c = MPI_COMM_NULL;
      if (members_only)
        check(MPI_Comm_create_group(MPI_COMM_WORLD, g, d, &c), "MPI_Comm_create_group");
      else
        check(MPI_Comm_create(MPI_COMM_WORLD, g, &c), "MPI_Comm_create");
      MPI_Group_free(&g);
      if (member) dim_comm = c;
    }
    mine.push_back(dim_comm);
  }
  MPI_Group_free(&world_group);
  return mine;
}

std::vector<MPI_Comm> make_cart(const std::vector<int>& shape) {
  const int nd = static_cast<int>(shape.size());
  std::vector<int> periods(static_cast<std::size_t>(nd), 0);
  MPI_Comm cart;
  check(MPI_Cart_create(MPI_COMM_WORLD, nd, shape.data(), periods.data(), 0, &cart), "MPI_Cart_create");
  std::vector<MPI_Comm> out;
  for (int d = 0; d < nd; ++d) {
    std::vector<int> remain(static_cast<std::size_t>(nd), 0);
    remain[d] = 1;
    MPI_Comm c;
    check(MPI_Cart_sub(cart, remain.data(), &c), "MPI_Cart_sub");
    out.push_back(c);
  }
  out.push_back(cart);  // freed with the others
  return out;
}

template <class Layout>
std::vector<MPI_Comm> make_splits(const Layout& layout) {
  if (Layout::ndim == 1) return {MPI_COMM_WORLD};
  std::vector<MPI_Comm> out;
  for (int d = 0; d < Layout::ndim; ++d) {
    const dm::split_args sa = layout.comm_split(world_rank, d);
    MPI_Comm c;
    check(MPI_Comm_split(MPI_COMM_WORLD, sa.color, sa.key, &c), "MPI_Comm_split");
    out.push_back(c);
  }
  return out;
}

void free_all(std::vector<MPI_Comm>& comms) {
  for (MPI_Comm& c : comms)
    if (c != MPI_COMM_NULL && c != MPI_COMM_WORLD) MPI_Comm_free(&c);
}

/// Every dim's communicator of every method must hold the same ranks in the same order.
void same_groups(const std::vector<MPI_Comm>& a, const std::vector<MPI_Comm>& b, const char* what) {
  for (std::size_t d = 0; d < std::min(a.size(), b.size()); ++d) {
    int result = MPI_UNEQUAL;
    check(MPI_Comm_compare(a[d], b[d], &result), "MPI_Comm_compare");
    if (result != MPI_CONGRUENT && result != MPI_IDENT) {
      std::fprintf(stderr, "init: rank %d: %s dim %zu differs from devmesh's\n", world_rank, what, d);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
}

template <class Layout>
struct bench_mesh {
  std::string label;
  std::vector<int> shape;
  Layout layout;

  std::vector<MPI_Comm> devmesh_comms(const dm::device_mesh<Layout, dm::mpi::communicator>& m) const {
    std::vector<MPI_Comm> out;
    if constexpr (Layout::ndim == 3)
      out = {dm::comm<"dp">(m).native(), dm::comm<"cp">(m).native(), dm::comm<"tp">(m).native()};
    else if constexpr (Layout::ndim == 2)
      out = {dm::comm<"dp">(m).native(), dm::comm<"tp">(m).native()};
    else
      out = {dm::comm<"world">(m).native()};
    return out;
  }

  void run(const dm::mpi::communicator& world, int reps) const {
    constexpr int nm = 5;
    const char* methods[nm] = {"devmesh", "pytorch", "create_group", "cart", "split_only"};
    std::vector<double> times[nm];
    long creates[nm] = {}, collectives[nm] = {}, received[nm] = {};
    for (int rep = 0; rep < reps; ++rep) {
      for (int k = 0; k < nm; ++k) {
        const int method = (rep + k) % nm;  // rotate the order: no method always goes first
        check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        const bench::mpi_call_counts before = bench::mpi_calls;
        const double t0 = MPI_Wtime();
        std::vector<MPI_Comm> comms;
        std::optional<dm::device_mesh<Layout, dm::mpi::communicator>> mesh;
        if (method == 0) mesh.emplace(dm::init_device_mesh(world, layout));
        if (method == 1) comms = make_pytorch(shape, false);
        if (method == 2) comms = make_pytorch(shape, true);
        if (method == 3) comms = make_cart(shape);
        if (method == 4) comms = make_splits(layout);
        const double local = MPI_Wtime() - t0;
        const long created = bench::mpi_calls.comm_create - before.comm_create;
        const long other = bench::mpi_calls.collective - before.collective;
        const long bytes = bench::mpi_calls.received_bytes - before.received_bytes;
        double slowest = 0;
        long max_created = 0, max_other = 0, max_bytes = 0;
        check(PMPI_Reduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
        check(PMPI_Reduce(&created, &max_created, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
        check(PMPI_Reduce(&other, &max_other, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
        check(PMPI_Reduce(&bytes, &max_bytes, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
        times[method].push_back(slowest);
        creates[method] = max_created;
        collectives[method] = max_other;
        received[method] = max_bytes;
        if (rep == 0 && method != 0) {  // check the groups once, against a fresh devmesh mesh
          const auto ref = dm::init_device_mesh(world, layout);
          same_groups(devmesh_comms(ref), comms, methods[method]);
        }
        free_all(comms);
      }
    }
    if (world_rank != 0) return;
    for (int m = 0; m < nm; ++m) {
      std::sort(times[m].begin(), times[m].end());
      std::printf(
          "{\"np\": %d, \"mesh\": \"%s\", \"ndim\": %d, \"method\": \"%s\", \"comm_create_calls\": %ld, "
          "\"other_collectives\": %ld, \"collective_bytes_received\": %ld, \"median_s\": %.9g, \"min_s\": %.9g, "
          "\"reps\": %d}\n",
          world_size, label.c_str(), Layout::ndim, methods[m], creates[m], collectives[m], received[m],
          times[m][times[m].size() / 2],
          times[m].front(), reps);
    }
    std::fflush(stdout);
  }
};

std::string shape_label(const std::vector<int>& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out.append(",");
    out.append(std::to_string(s[i]));
  }
  out.append(s.size() == 1 ? ",)" : ")");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 20;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
  dm::mpi::environment env(argc, argv);
  const auto world = dm::mpi::world();
  world_rank = world.rank();
  world_size = world.size();
  const int n = world_size;
  if (n < 2 || n % 2 != 0) {
    if (world_rank == 0) std::fprintf(stderr, "init: run with an even number of ranks >= 2\n");
    return 1;
  }
  using mesh3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;
  using mesh2 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;
  using mesh1 = dm::mesh<dm::dim<"world">>;
  const std::vector<int> s3{std::max(n / 4, 1), std::min(2, n / 2), 2}, s2{2, n / 2}, s1{n};
  bench_mesh<mesh3>{shape_label(s3), s3, mesh3(s3[0], s3[1], s3[2])}.run(world, reps);
  bench_mesh<mesh2>{shape_label(s2), s2, mesh2(s2[0], s2[1])}.run(world, reps);
  bench_mesh<mesh1>{shape_label(s1), s1, mesh1(s1[0])}.run(world, reps);
  return 0;
}
