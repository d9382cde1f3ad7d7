// tests/reliability/lifecycle.cpp: communicator lifecycle under mpirun (2 and 4 ranks).
//
// 1. Device meshes (init_device_mesh; 10,000 on 2 ranks in CI) created and destroyed in a
//    loop, each with
//    flattens, slices and unflattens: the number of live MPI communicators, counted by PMPI
//    wrappers (comm_counter.cpp), is exactly baseline + what the meshes report while they
//    live, returns to the baseline after each iteration, and never grows.
// 2. Ownership: copies share, moves transfer, the last handle frees every communicator
//    exactly once (a second free of a handle is recorded as a violation; under ASan a
//    double delete of the state would be fatal), slices outlive their parent, an owned
//    world is freed with the last handle, adopted communicators (from_comms) once.
//
//   lifecycle [cycles]   (default 10000 device meshes; two test cases, churn and ownership)
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <devmesh/devmesh.hpp>

#include "../mpi/mpi_doctest.hpp"
#include "comm_counter.hpp"

namespace reliability_lifecycle_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;
using namespace dm::literals;

using dp_tp = dm::mesh<dm::dim<"dp">, dm::dim<"tp", 2>>;  // dp inferred from the world
using line = dm::mesh<dm::dim<"all">>;                     // the world as one dim
using pair = dm::mesh<dm::dim<"x", 2>>;                    // smaller than the world (np > 2)

static long live() { return static_cast<long>(comm_counter::live()); }

/// Sum of world ranks over dim N's group, through the mesh, against the layout.
template <dm::fixed_string N, class M>
void check_sum(const M& m) {
  std::vector<long> v{m.rank()};
  dm::all_reduce<N>(m, std::span(v), dm::op::sum);
  long expected = 0;
  for (int r : dm::group<N>(m.layout(), m.rank())) expected += r;
  CHECK_EQ(v[0], expected);
}

/// No communicator was freed that the wrappers never handed out, or twice.
void no_unknown_frees() {
  CHECK_MESSAGE(comm_counter::unknown_frees() == std::size_t{0}, comm_counter::first_violation());
}

TEST_CASE("churn: device meshes created and destroyed, the live communicators back to the baseline") {
  const auto world = dm::mpi::world();
  const int iterations = std::atoi(test::arg(0, "10000").c_str()) / 2;  // two device meshes per iteration
  const long baseline = live();
  long peak = baseline;
  int meshes = 0;
  for (int i = 0; i < iterations; ++i) {
    {
      auto m = dm::init_device_mesh<dp_tp>(world);  // control, dp and tp
      auto t = m.flatten<"tp_dp", "tp", "dp">();     // transposed: one more split
      auto ts = t.slice<"tp_dp">();                  // never creates
      auto again = m.flatten<"tp_dp", "tp", "dp">(); // cached: creates nothing
      auto l = dm::init_device_mesh<line>(world);    // control and "all" (a copy of the world)
      auto u = l.unflatten<"all", dm::dim<"a", 2>, dm::dim<"b">>();  // splits a and b
      auto v = u.flatten<"ba", "b", "a">();          // one split
      auto vs = v["ba"_dim];
      meshes += 2;
      const long during = live();
      peak = std::max(peak, during);
      // The count is what the meshes say they created: a private control communicator
      // per mesh and one per dim, whatever its groups (the world is never reused).
      CHECK_EQ(during - baseline, static_cast<long>(m.communicator_count() + l.communicator_count()));
      CHECK_EQ(m.communicator_count(), 4);  // control, dp, tp, tp_dp
      CHECK_EQ(l.communicator_count(), 5);  // control, all, a, b, ba
      CHECK_EQ(again.communicator_count(), m.communicator_count());
      if (i % 1000 == 0) {  // the communicators work and hold the layout's groups
        check_sum<"dp">(m);
        check_sum<"tp">(m);
        check_sum<"tp_dp">(ts);
        check_sum<"a">(u);
        check_sum<"b">(u);
        check_sum<"ba">(vs);
      }
    }
    if (live() != baseline) {
      CHECK_EQ(live(), baseline);
      break;  // one report, not thousands
    }
  }
  CHECK_EQ(live(), baseline);
  CHECK_EQ(peak - baseline, 9L);  // never more than one iteration's
  CHECK_EQ(meshes, 2 * iterations);
  if (test::world_rank() == 0)
    std::printf("churn: %d device meshes created and destroyed, peak %ld live communicators, back to %ld\n", meshes,
                peak, live());
  no_unknown_frees();
}

TEST_CASE("ownership: copies, moves, slices, an owned world, from_comms, the communicator wrapper") {
  const auto world = dm::mpi::world();
  const long baseline = live();
  // Copies share the communicators; the last copy frees them.
  {
    auto a = dm::init_device_mesh<dp_tp>(world);
    const long with_a = live();
    CHECK_EQ(with_a - baseline, static_cast<long>(a.communicator_count()));
    {
      auto b = a;        // copy: a second handle
      auto c = b;
      c = a;             // copy-assign over a handle of the same state
      auto& same = c;
      c = same;          // self copy-assign (through a reference: clang warns on c = c)
      CHECK_EQ(live(), with_a);
      check_sum<"tp">(c);
    }
    CHECK_EQ(live(), with_a);  // a still owns them
    check_sum<"dp">(a);
    // Move-construct: the new handle owns, nothing is created or freed.
    auto moved = std::move(a);
    CHECK_EQ(live(), with_a);
    check_sum<"dp">(moved);
    // Move-assign over a handle of ANOTHER state: that state's communicators are freed.
    auto other = dm::init_device_mesh<dp_tp>(world);
    CHECK_EQ(live() - with_a, static_cast<long>(other.communicator_count()));
    other = std::move(moved);
    CHECK_EQ(live(), with_a);
    check_sum<"tp">(other);
    // Copy-assign over another state: likewise.
    auto third = dm::init_device_mesh<dp_tp>(world);
    third = other;
    CHECK_EQ(live(), with_a);
  }
  CHECK_EQ(live(), baseline);

  // A slice outlives the mesh it came from and keeps the communicators alive.
  {
    auto tp = [&] {
      auto m = dm::init_device_mesh<dp_tp>(world);
      return m["tp"_dim];
    }();
    CHECK(live() > baseline);
    check_sum<"tp">(tp);
    std::vector<int> one{1};
    tp.all_reduce(std::span(one), dm::op::sum);  // the unnamed 1-D call
    CHECK_EQ(one[0], 2);
  }
  CHECK_EQ(live(), baseline);

  // A world handed over as an rvalue is owned by the mesh and freed with its last handle,
  // after the splits made from it.
  {
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    auto m = dm::init_device_mesh<dp_tp>(dm::mpi::communicator::adopt(dup));
    CHECK_EQ(live() - baseline, 1L + m.communicator_count());
    CHECK(m.world().native() == dup);
    check_sum<"dp">(m);
  }
  CHECK_EQ(live(), baseline);

  // A mesh smaller than the world: members get one communicator, the others none (every
  // rank holds the mesh's control communicator).
  if (world.size() > 2) {
    auto p = dm::init_device_mesh(world, pair{});
    CHECK_EQ(live() - baseline, p.is_member() ? 2L : 1L);
    if (p.is_member()) check_sum<"x">(p);
  }
  CHECK_EQ(live(), baseline);

  // Lazy mode: a dim's communicator appears on first use, and goes with the mesh.
  {
    dm::device_mesh_options<dm::mpi::communicator> o;
    o.lazy = true;
    auto m = dm::init_device_mesh<dp_tp>(world, o);
    const long after_init = live();
    check_sum<"dp">(m);  // dp never spans the world in world order: a split
    CHECK_EQ(live() - after_init, 1L);
    check_sum<"dp">(m);
    CHECK_EQ(live() - after_init, 1L);
  }
  CHECK_EQ(live(), baseline);

  // Adopted communicators (from_comms) are moved in and freed exactly once, by the mesh.
  {
    const dp_tp layout = dp_tp::for_world(world.size());
    std::array<dm::mpi::communicator, 2> comms;
    for (int d = 0; d < 2; ++d) {
      const auto sa = layout.comm_split(world.rank(), d);
      comms[static_cast<std::size_t>(d)] = world.split(sa.color, sa.key);
    }
    CHECK_EQ(live() - baseline, 2L);
    auto m = dm::from_comms(world, std::move(comms), layout);
    CHECK((!comms[0].valid() && !comms[1].valid()));  // moved from: they own nothing now
    CHECK_EQ(live() - baseline, 3L);  // the adopted two and the mesh's control
    check_sum<"tp">(m);
  }
  CHECK_EQ(live(), baseline);

  // The communicator wrapper itself: move-construct, move-assign over an owning one (frees
  // it), self move-assign, borrowed handles never freed.
  {
    auto c = world.split(0, world.rank());
    auto d = std::move(c);
    CHECK((!c.valid() && d.valid() && d.owns()));
    CHECK_EQ(live() - baseline, 1L);
    d = world.split(world.rank() % 2, world.rank());
    CHECK_EQ(live() - baseline, 1L);
    auto& alias = d;
    d = std::move(alias);
    CHECK(d.valid());
    CHECK_EQ(live() - baseline, 1L);
    auto b = dm::mpi::communicator::borrow(d.native());
    CHECK(!b.owns());
  }
  CHECK_EQ(live(), baseline);
  if (test::world_rank() == 0) std::printf("ownership: copies, moves, slices, owned world, from_comms: done\n");
  no_unknown_frees();
}
}  // namespace reliability_lifecycle_test
