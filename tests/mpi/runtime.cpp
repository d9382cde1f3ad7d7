// device_mesh runtime behaviour on the MPI backend: communicator counts and caching,
// meshes smaller than the world, the init consistency check (every rank throws, quickly),
// world-size mismatch, from_comms validation and ownership, lazy mode, per-dim options,
// and MPI errors as exceptions. Run under mpirun with 1, 2, 4 and 8 ranks.
#include <algorithm>
#include <array>
#include <chrono>
#include <span>
#include <string>
#include <vector>

#include <unordered_set>

#include <devmesh/devmesh.hpp>

#include "mpi_doctest.hpp"

namespace mpi_runtime_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;
using namespace dm::literals;
using mesh2 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;
using mesh3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;

namespace {

/// (dp, tp) sizes for w ranks: tp = 2 when it divides.
mesh2 layout2(int w) { return w % 2 == 0 ? mesh2(w / 2, 2) : mesh2(w, 1); }

std::string comm_name(MPI_Comm c) {
  char buf[MPI_MAX_OBJECT_NAME]{};
  int len = 0;
  MPI_Comm_get_name(c, buf, &len);
  return std::string(buf, static_cast<std::size_t>(len));
}

/// Runs f expecting a mesh_error on every rank; returns the message (empty if none).
template <class F>
std::string expect_mesh_error(F&& f, const char* what) {
  std::string message, problem;
  try {
    f();
    problem = ": did not throw";
  } catch (const dm::mesh_error& e) {
    message = e.what();
  } catch (const std::exception& e) {
    problem = std::string(": unexpected exception type: ") + e.what();
    message = "?";
  }
  CHECK_MESSAGE(problem.empty(), what << problem);
  return message;
}

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

TEST_CASE("communicators: one per dim, cached by flatten and unflatten, shared by handles") {
  auto world = dm::mpi::world();
  const int w = world.size();
  const int dp = w >= 4 ? 2 : 1, tp = w >= 2 ? 2 : 1;
  auto mesh = dm::init_device_mesh(world, mesh3(dp, w / (dp * tp), tp));
  const int c0 = mesh.communicator_count();
  // One communicator per dim, whatever its groups: size-1 dims and a dim spanning the
  // world included (never the world communicator itself, never shared between dims).
  CHECK_EQ(c0, 1 + 3);  // the mesh's private control communicator, then one per dim
  auto congruent = [](MPI_Comm a, MPI_Comm b) {
    int r = MPI_UNEQUAL;
    MPI_Comm_compare(a, b, &r);
    return r == MPI_CONGRUENT;
  };
  // Slicing and operator[] never create.
  auto s = mesh.slice<"tp", "dp">();
  auto t = mesh["tp"_dim];
  CHECK_EQ(mesh.communicator_count(), c0);
  // Flatten creates one communicator; the same alias again (from any handle) creates
  // nothing; another name for the same groups is another dim: its own communicator.
  auto f1 = mesh.flatten<"dp_cp", "dp", "cp">();
  const int c1 = mesh.communicator_count();
  CHECK_EQ(c1, c0 + 1);
  auto f2 = mesh.flatten<"dp_cp2", "dp", "cp">();
  auto f3 = mesh.slice<"dp", "cp">().flatten<"dp_cp">();
  CHECK_EQ(mesh.communicator_count(), c1 + 1);
  CHECK(f1.comm<"dp_cp">().native() != f2.comm<"dp_cp2">().native());
  CHECK(congruent(f1.comm<"dp_cp">().native(), f2.comm<"dp_cp2">().native()));
  CHECK(f1.comm<"dp_cp">().native() == f3.comm<"dp_cp">().native());
  if (dp == 1) CHECK(congruent(f1.comm<"dp_cp">().native(), mesh.comm<"cp">().native()));
  auto f4 = mesh.flatten<"cp_dp", "cp", "dp">();
  CHECK_EQ(mesh.communicator_count(), c1 + 2);
  // The whole mesh spans the world in world order: its own copy, not the world.
  const int c2 = mesh.communicator_count();
  auto all = mesh.flatten<"all">();
  CHECK_EQ(mesh.communicator_count(), c2 + 1);
  CHECK(all.comm().native() != MPI_COMM_WORLD);
  CHECK(all.comm().native() != world.native());
  CHECK(congruent(all.comm().native(), MPI_COMM_WORLD));
  // Unflatten creates a communicator per new dim.
  auto u = mesh.unflatten<"tp", dm::dim<"t0", 1>, dm::dim<"t1">>();
  CHECK_EQ(mesh.communicator_count(), c2 + 3);
  CHECK(congruent(u.comm<"t1">().native(), mesh.comm<"tp">().native()));
  if (w == 8) {
    using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;
    auto m = dm::init_device_mesh<mesh3d>(world);
    CHECK_EQ(m.communicator_count(), 4);
    auto v = m.flatten<"all">().unflatten<"all", dm::dim<"x", 2>, dm::dim<"y", 4>>();
    CHECK_EQ(m.communicator_count(), 7);  // all, x, y
    auto v2 = m.flatten<"all">().unflatten<"all", dm::dim<"x", 2>, dm::dim<"y", 4>>();
    CHECK_EQ(m.communicator_count(), 7);  // the same dims: cached
    CHECK(v.comm<"x">().native() == v2.comm<"x">().native());
    CHECK(congruent(v.comm<"x">().native(), m.comm<"dp">().native()));
  }
  (void)s, (void)t, (void)f4;
  // By index (get_all_groups): the same communicators as by name; out of range throws.
  CHECK(mesh.comm(0).native() == mesh.comm<"dp">().native());
  CHECK(mesh.comm(2).native() == mesh.comm<"tp">().native());
  CHECK_EQ(mesh.comm(1).size(), mesh.size<"cp">());
  CHECK(contains(expect_mesh_error([&] { (void)mesh.comm(3); }, "comm(3)"), "comm(3)"));
  // Handles share state: a copy sees the same communicators and counts.
  auto copy = f1;
  CHECK_EQ(copy.communicator_count(), mesh.communicator_count());
}

TEST_CASE("a mesh smaller than the world: members and non-members, eager and lazy") {
  auto world = dm::mpi::world();
  const int w = world.size();
  if (w < 2) return;
  const int n = w / 2;  // the mesh covers world ranks [0, n)
  auto mesh = dm::init_device_mesh(world, mesh2(1, n));
  const bool member = world.rank() < n;
  CHECK_EQ(mesh.is_member(), member);
  CHECK_EQ(mesh.coordinate().has_value(), member);
  auto flat = mesh.flatten<"all">();  // collective over the world, members or not
  if (member) {
    CHECK_EQ((*mesh.coordinate())[1], world.rank());
    CHECK_EQ(mesh.local_rank<"tp">(), world.rank());
    CHECK_EQ(mesh.comm<"tp">().size(), n);
    std::vector<int> v{world.rank()};
    mesh.all_reduce<"tp">(std::span(v), dm::op::sum);
    CHECK_EQ(v[0], n * (n - 1) / 2);
    flat.all_reduce(std::span(v), dm::op::max);
    CHECK_EQ(v[0], n * (n - 1) / 2);
  } else {
    std::vector<int> v{1};
    const std::string m1 = expect_mesh_error([&] { mesh.all_reduce<"tp">(std::span(v), dm::op::sum); }, "non-member");
    CHECK((contains(m1, "all_reduce on dim 'tp'") && contains(m1, "is not a member of this mesh")));
    expect_mesh_error([&] { (void)mesh.comm<"dp">(); }, "non-member comm");
    expect_mesh_error([&] { (void)mesh.local_rank<"dp">(); }, "non-member local_rank");
    expect_mesh_error([&] { flat.barrier(); }, "non-member barrier");
  }
  // Lazy mode on a smaller mesh: the first use is collective over the members only.
  dm::device_mesh_options<dm::mpi::communicator> lazy;
  lazy.lazy = true;
  auto lm = dm::init_device_mesh(world, mesh2(1, n), lazy);
  CHECK_EQ(lm.communicator_count(), 2);  // control, and the members' (parent of the rest)
  if (member) {
    std::vector<int> v{1};
    lm.all_reduce<"tp">(std::span(v), dm::op::sum);  // first use: created now
    CHECK_EQ(v[0], n);
    CHECK_EQ(lm.communicator_count(), 3);
    CHECK_EQ(lm.comm<"dp">().size(), 1);
    CHECK_EQ(lm.communicator_count(), 4);
  } else {
    expect_mesh_error([&] { (void)lm.comm<"dp">(); }, "lazy non-member");
  }
}

TEST_CASE("the consistency check: ranks that disagree all throw") {
  auto world = dm::mpi::world();
  const int w = world.size();
  const int me = world.rank();
  if (w < 2) return;
  const auto t0 = std::chrono::steady_clock::now();
  // Rank 1 was "compiled with another shape".
  std::string msg = expect_mesh_error(
      [&] {
        if (me == 1)
          dm::init_device_mesh(world, mesh2(1, w));
        else
          dm::init_device_mesh(world, mesh2(w, 1));
      },
      "shape mismatch");
  CHECK(contains(msg, "rank 1 has mesh((dp=1, tp=" + std::to_string(w) + ")"));
  const std::string others = w == 2 ? "rank 0 has" : (w == 3 ? "ranks 0,2 have" : "ranks 0,2-" + std::to_string(w - 1) + " have");
  CHECK(contains(msg, others + " mesh((dp=" + std::to_string(w) + ", tp=1)"));
  // Same sizes, another name, and another mesh type.
  using other = dm::mesh<dm::dim<"dp">, dm::dim<"cp">>;
  msg = expect_mesh_error(
      [&] {
        if (me == w - 1)
          dm::init_device_mesh(world, other(w, 1));
        else
          dm::init_device_mesh(world, mesh2(w, 1));
      },
      "name mismatch");
  CHECK(contains(msg, "rank " + std::to_string(w - 1) + " has mesh((dp=" + std::to_string(w) + ", cp=1)"));
  // Same layout, other backend options on one rank.
  dm::device_mesh_options<dm::mpi::communicator> opts;
  if (me == 0) opts.per_dim["tp"].hints = {{"mpi_assert_no_any_tag", "true"}};
  msg = expect_mesh_error([&] { dm::init_device_mesh(world, mesh2(w, 1), opts); }, "options mismatch");
  CHECK((contains(msg, "rank 0 has") && contains(msg, "tp{mpi_assert_no_any_tag=true}")));
  // A failure on one rank only (its mesh does not fit the world): every rank throws.
  msg = expect_mesh_error([&] { dm::init_device_mesh(world, me == 0 ? mesh2(2 * w, 1) : mesh2(w, 1)); },
                          "one rank fails");
  CHECK(contains(msg, "init_device_mesh failed on rank 0 of " + std::to_string(w)));
  CHECK(contains(msg, "does not fit the world size"));
  // Flattening different dims on one rank: every rank throws instead of splitting wrongly.
  // (With 2 ranks dp has size 1 and both orders are the same groups: no mismatch.)
  auto mesh = dm::init_device_mesh(world, layout2(w));
  if (w >= 4) msg = expect_mesh_error(
      [&] {
        if (me == 0)
          (void)mesh.flatten<"x", "tp", "dp">();
        else
          (void)mesh.flatten<"x", "dp", "tp">();
      },
      "flatten mismatch");
  if (w >= 4) CHECK((contains(msg, "flatten: the ranks disagree") && contains(msg, "rank 0 has")));
  const int before = mesh.communicator_count();
  (void)mesh.flatten<"x", "dp", "tp">();  // still usable afterwards
  CHECK(mesh.communicator_count() <= before + 1);
  // No wall-clock verdict: a slow, loaded machine is not a hang (ctest's TIMEOUT is the
  // backstop, the library's deadline the real bound).
  (void)t0;
}

TEST_CASE("meshes that do not fit the world: every rank throws") {
  auto world = dm::mpi::world();
  const int w = world.size();
  // Larger than the world: every rank throws.
  std::string msg = expect_mesh_error([&] { dm::init_device_mesh(world, mesh2(w, 2)); }, "larger than world");
  CHECK((contains(msg, "does not fit the world size") && contains(msg, "the world " + std::to_string(w))));
  using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;
  if (w < 8) expect_mesh_error([&] { dm::init_device_mesh<mesh3d>(world); }, "static mesh larger than world");
  // A dynamic dim that cannot be inferred from the world size.
  using bad = dm::mesh<dm::dim<"dp">, dm::dim<"tp", 3>>;
  msg = expect_mesh_error([&] { dm::init_device_mesh<bad>(world); }, "for_world");
  CHECK(contains(msg, "not a positive multiple"));
}

TEST_CASE("from_comms: adopted, borrowed, and wrong communicators rejected on every rank") {
  auto world = dm::mpi::world();
  const int w = world.size(), me = world.rank();
  const mesh2 l = layout2(w);
  const int tp = l.size<"tp">();
  auto split = [&](int color, int key) {
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, color, key, &c);
    return c;
  };
  // Valid communicators, adopted (the mesh frees them).
  {
    MPI_Comm dp = split(me % tp, me / tp), tpc = split(me / tp, me % tp);
    auto mesh = dm::from_comms(world, {dm::mpi::communicator::adopt(dp), dm::mpi::communicator::adopt(tpc)}, l);
    CHECK_EQ(mesh.communicator_count(), 1);  // control only: the dims are adopted
    CHECK(mesh.comm<"dp">().native() == dp);
    std::vector<int> v{me};
    mesh.all_reduce<"tp">(std::span(v), dm::op::sum);
    CHECK_EQ(v[0], (me / tp) * tp * tp + tp * (tp - 1) / 2);
    auto f = mesh.flatten<"all">();  // world-sized: a communicator of its own
    CHECK_EQ(mesh.communicator_count(), 2);
    CHECK(f.comm().native() != world.native());
  }
  // Borrowed: still usable after the mesh is gone.
  {
    MPI_Comm dp = split(me % tp, me / tp), tpc = split(me / tp, me % tp);
    {
      auto mesh = dm::from_comms(world, {dm::mpi::communicator::borrow(dp), dm::mpi::communicator::borrow(tpc)}, l);
      CHECK(mesh.comm<"tp">().native() == tpc);
    }
    int size = 0;
    CHECK_EQ(MPI_Comm_size(tpc, &size), MPI_SUCCESS);
    CHECK_EQ(size, tp);
    MPI_Comm_free(&dp);
    MPI_Comm_free(&tpc);
  }
  if (w < 2) return;
  // Swapped communicators: rejected on every rank, naming the dim.
  {
    MPI_Comm dp = split(me % tp, me / tp), tpc = split(me / tp, me % tp);
    const std::string msg = expect_mesh_error(
        [&] { dm::from_comms(world, {dm::mpi::communicator::borrow(tpc), dm::mpi::communicator::borrow(dp)}, l); },
        "swapped");
    CHECK((contains(msg, "from_comms failed") && contains(msg, "dim 'dp'")));
    MPI_Comm_free(&dp);
    MPI_Comm_free(&tpc);
  }
  // Right groups, wrong order inside a group (key reversed): rejected.
  if (l.size<"dp">() > 1) {
    MPI_Comm dp = split(me % tp, -(me / tp)), tpc = split(me / tp, me % tp);
    const std::string msg = expect_mesh_error(
        [&] { dm::from_comms(world, {dm::mpi::communicator::borrow(dp), dm::mpi::communicator::borrow(tpc)}, l); },
        "reversed order");
    CHECK((contains(msg, "dim 'dp'") && contains(msg, "index")));
    MPI_Comm_free(&dp);
    MPI_Comm_free(&tpc);
  }
  // Right sizes, wrong members on one rank's group only when there are two dp groups of 2+.
  if (tp == 2 && w >= 4) {
    // dp groups {0,2,4..} and {1,3,5..}: build instead {0,3,...} / {1,2,...} (mixed).
    const int color = (me % 2) ^ ((me / 2) % 2);
    MPI_Comm dp = split(color, me / tp), tpc = split(me / tp, me % tp);
    const std::string msg = expect_mesh_error(
        [&] { dm::from_comms(world, {dm::mpi::communicator::borrow(dp), dm::mpi::communicator::borrow(tpc)}, l); },
        "wrong members");
    CHECK((contains(msg, "dim 'dp'") && contains(msg, "the layout's group has world rank")));
    MPI_Comm_free(&dp);
    MPI_Comm_free(&tpc);
  }
}

void call_options(dm::mpi::communicator& world);

TEST_CASE("per-dim options and lazy mode") {
  auto world = dm::mpi::world();
  const int w = world.size();
  int created = 0;
  dm::device_mesh_options<dm::mpi::communicator> opts;
  opts.defaults.on_create = [&](MPI_Comm) { ++created; };
  opts.per_dim["dp"].name = "data-parallel";
  opts.per_dim["dp"].hints = {{"mpi_assert_no_any_source", "true"}};
  auto mesh = dm::init_device_mesh(world, layout2(w), opts);
  // Every dim its own communicator, with its own options (groups of one rank included).
  CHECK_EQ(mesh.communicator_count(), 1 + 2);
  CHECK_EQ(created, 1);  // tp, with the defaults' hook; dp has its own options, without it
  CHECK(comm_name(mesh.comm<"dp">().native()) == "data-parallel");
  CHECK(comm_name(mesh.comm<"tp">().native()) == "mesh:tp");
  {
    MPI_Info info = MPI_INFO_NULL;
    MPI_Comm_get_info(mesh.comm<"dp">().native(), &info);
    CHECK(info != MPI_INFO_NULL);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  }
  // Lazy: nothing is created until first use; then once.
  dm::device_mesh_options<dm::mpi::communicator> lazy;
  lazy.lazy = true;
  auto lm = dm::init_device_mesh(world, mesh3(1, w, 1), lazy);
  CHECK_EQ(lm.communicator_count(), 2);
  auto flat = lm.flatten<"dp_tp", "dp", "tp">();
  CHECK_EQ(lm.communicator_count(), 2);
  std::vector<int> v{1};
  lm.all_reduce<"cp">(std::span(v), dm::op::sum);
  CHECK_EQ(v[0], w);
  CHECK_EQ(lm.communicator_count(), 3);  // cp spans the world: a copy of its own
  CHECK(lm.comm<"cp">().native() != world.native());
  lm.all_reduce<"tp">(std::span(v), dm::op::sum);
  CHECK_EQ(lm.communicator_count(), 4);
  flat.all_reduce<"dp_tp">(std::span(v), dm::op::sum);  // same groups as tp, another dim
  CHECK_EQ(lm.communicator_count(), 5);
  CHECK_EQ(v[0], w);
  call_options(world);
}

// flatten / unflatten with backend options (PyTorch's backend_override): the new dims'
// communicators get them; options a dim has already are never silently replaced; ranks that
// pass different options all throw.
void call_options(dm::mpi::communicator& world) {
  const int w = world.size();
  dm::device_mesh_options<dm::mpi::communicator> opts;
  opts.per_dim["dp_cp"].name = "from-init";
  for (bool lazy : {false, true}) {
    opts.lazy = lazy;
    auto mesh = dm::init_device_mesh(world, mesh3(1, w, 1), opts);
    dm::mpi::comm_options named;
    named.name = "per-call";
    auto flat = mesh.flatten<"cp_tp", "cp", "tp">(named);
    CHECK(comm_name(flat.comm<"cp_tp">().native()) == "per-call");
    auto unflat = mesh.unflatten<"cp", dm::dim<"c1">, dm::dim<"c2", 1>>(named);
    CHECK((comm_name(unflat.comm<"c1">().native()) == "per-call" &&
           comm_name(unflat.comm<"c2">().native()) == "per-call"));
    CHECK(comm_name(unflat.comm<"tp">().native()) == "mesh:tp");  // not a new dim
    auto again = mesh.flatten<"cp_tp", "cp", "tp">(named);  // the same options again: the same communicator
    CHECK(again.comm<"cp_tp">().native() == flat.comm<"cp_tp">().native());
    dm::mpi::comm_options other;
    other.name = "other";
    CHECK_THROWS_WITH_AS((mesh.flatten<"cp_tp", "cp", "tp">(other)),
                         doctest::Contains("dim 'cp_tp' has other backend options"), dm::mesh_error);
    CHECK_THROWS_WITH_AS((mesh.flatten<"dp_cp", "dp", "cp">(other)),
                         doctest::Contains("dim 'dp_cp' has other backend options"), dm::mesh_error);
    (void)mesh.flatten<"x", "dp">().comm<"x">();  // made with the defaults ...
    CHECK_THROWS_WITH_AS((mesh.flatten<"x", "dp">(other)),
                         doctest::Contains("dim 'x' has other backend options"), dm::mesh_error);
    if (!lazy && w > 1) {  // ranks that pass different options: every rank throws
      dm::mpi::comm_options mine;
      mine.hints = {{"mpi_assert_no_any_tag", world.rank() == 0 ? "true" : "false"}};
      CHECK_THROWS_WITH_AS((mesh.flatten<"y", "dp", "cp">(mine)),
                           doctest::Contains("flatten with backend options"), dm::mesh_error);
      CHECK(mesh.options().per_dim.count("y") == 0);  // forgotten: a later flatten<"y"> uses the defaults
    }
  }
}

TEST_CASE("MPI errors and usage errors as exceptions") {
  auto world = dm::mpi::world();
  std::vector<int> buf{1};
  // Invalid root: MPI returns an error, devmesh throws it with the MPI error string.
  const std::string msg =
      CHECK_THROWS_WHAT(dm::mpi::error, world.broadcast(buf.data(), 1, world.size() + 5), "MPI_Bcast");
  CHECK((contains(msg, "MPI_ERR_ROOT") || contains(msg, "root")));
  CHECK_THROWS_WITH_AS(dm::mpi::communicator{}.split(0, 0), doctest::Contains("invalid communicator"), dm::comm_error);
  // Shift with mismatched buffers is a usage error.
  auto mesh = dm::init_device_mesh(world, mesh2(world.size(), 1));
  std::vector<int> two(2);
  CHECK_THROWS_WITH_AS(mesh.shift<"dp">(std::span(buf), std::span(two)),
                       doctest::Contains("send has 1 elements, recv 2"), dm::mesh_error);
  // Static-extent spans work as well as dynamic ones.
  std::array<int, 2> fixed{1, world.rank()};
  mesh.all_reduce<"dp">(std::span(fixed), dm::op::sum);
  CHECK_EQ(fixed[0], world.size());
  CHECK_EQ(fixed[1], world.size() * (world.size() - 1) / 2);
  std::array<int, 2> copy{};
  mesh["dp"_dim].all_reduce(std::span(fixed), std::span(copy), dm::op::max);
  CHECK_EQ(copy[0], world.size());
}

}  // namespace

/// Run-time names and indices (PyTorch's get_group("tp"), get_local_rank("tp") / (1),
/// size("tp")), against the compile-time forms.
TEST_CASE("run-time names and indices against the compile-time forms") {
  auto world = dm::mpi::world();
  const int w = world.size();
  auto mesh = dm::init_device_mesh(world, mesh3(w >= 4 ? 2 : 1, w >= 4 ? w / 4 : 1, w >= 2 ? 2 : 1));
  auto flat = mesh.flatten<"dp_cp", "dp", "cp">();
  const auto n = flat.names();
  CHECK((n.size() == 3 && n[0] == "dp" && n[1] == "cp" && n[2] == "tp"));  // aliases are not dims
  CHECK_EQ(flat.dim_index("tp"), 2);
  CHECK_EQ(flat.dim_index("dp_cp"), 3);
  CHECK_EQ(flat.size("dp_cp"), flat.size<"dp_cp">());
  CHECK_EQ(flat.size("tp"), mesh.size<"tp">());
  CHECK(flat.comm("dp_cp").native() == flat.comm<"dp_cp">().native());
  CHECK(mesh.comm("cp").native() == mesh.comm<"cp">().native());
  CHECK_EQ(mesh.local_rank("tp"), mesh.local_rank<"tp">());
  CHECK_EQ(mesh.local_rank(1), mesh.local_rank<"cp">());
  CHECK_EQ(flat.local_rank("dp_cp"), flat.local_rank<"dp_cp">());
  const std::string m1 = expect_mesh_error([&] { (void)flat.comm("pp"); }, "comm(\"pp\")");
  CHECK((contains(m1, "unknown dim 'pp'") && contains(m1, "dp, cp, tp (aliases: dp_cp)")));
  CHECK(contains(expect_mesh_error([&] { (void)mesh.size("x"); }, "size(\"x\")"), "unknown dim 'x'"));
  CHECK(contains(expect_mesh_error([&] { (void)mesh.local_rank(3); }, "local_rank(3)"), "not in [0, 3)"));
  CHECK(contains(expect_mesh_error([&] { (void)mesh.local_rank(-1); }, "local_rank(-1)"), "not in [0, 3)"));
}

// PyTorch parity: _flatten() with the default name, mesh.mesh (ranks()), __eq__ / __hash__.
TEST_CASE("PyTorch parity: default flatten name, ranks(), equality, root(), concatenate, abort()") {
  auto world = dm::mpi::world();
  const int w = world.size();
  const int dp = w >= 4 ? 2 : 1, tp = w >= 2 ? 2 : 1;
  auto mesh = dm::init_device_mesh(world, mesh3(dp, w / (dp * tp), tp));
  const int me = mesh.rank();
  // flatten() names the dim as PyTorch does by default; its communicator spans the group.
  auto whole = mesh.slice<"dp", "cp">().flatten();
  CHECK(decltype(whole)::layout_type::name(0) == "dp_cp");
  CHECK_EQ(whole.comm().size(), dp * (w / (dp * tp)));
  // ranks(): this rank's submesh, row-major; a slice's holds this rank.
  const auto all = mesh.ranks();
  CHECK_EQ(static_cast<int>(all.size()), w);
  for (int i = 0; i < w; ++i) CHECK_EQ(all[i], i);
  const auto tps = mesh["tp"_dim].ranks();
  CHECK((std::ranges::find(tps, me) != tps.end() && static_cast<int>(tps.size()) == tp));
  // Equality: views of one mesh compare equal; a second init over the same world never does.
  CHECK((mesh == mesh.slice<"dp", "cp", "tp">()));
  CHECK((!(mesh == mesh.slice<"tp", "cp", "dp">())));  // other names order: never equal
  auto again = dm::init_device_mesh(world, mesh3(dp, w / (dp * tp), tp));
  CHECK((!(mesh == again) && again == again));
  CHECK(mesh["tp"_dim] == mesh.slice<"tp">());
  std::unordered_set<decltype(mesh)> set{mesh, mesh, again};
  CHECK_EQ(set.size(), 2u);
  CHECK((std::hash<decltype(mesh)>{}(mesh) == mesh.slice<"dp", "cp", "tp">().hash()));
  // root<M>(): the root over the same communicators, from any derived mesh; another type throws.
  const auto flat_tp = mesh.flatten<"cp_tp", "cp", "tp">().slice<"cp_tp">();
  CHECK((flat_tp.root<mesh3>() == mesh && mesh.root<mesh3>() == mesh && mesh["tp"_dim].root<mesh3>() == mesh));
  CHECK(flat_tp.root<mesh3>().comm<"tp">().native() == mesh.comm<"tp">().native());
  CHECK_THROWS_WITH_AS(flat_tp.root<decltype(flat_tp)::layout_type>(),
                       doctest::Contains("root<M>() with M a mesh of dims (cp_tp)"), dm::mesh_error);
  CHECK(!(again.root<mesh3>() == mesh));
  // ... its static twin too (converted, checked), and a static size that differs names it.
  if (w == 8) {
    using static3 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;
    CHECK((flat_tp.root<static3>() == mesh && flat_tp.root<static3>().comm<"cp">().native() == mesh.comm<"cp">().native()));
    using wrong = dm::mesh<dm::dim<"dp", 4>, dm::dim<"cp", 1>, dm::dim<"tp", 2>>;
    const std::string msg = CHECK_THROWS_WHAT(dm::mesh_error, flat_tp.root<wrong>(), "root<M>() with M a mesh of dims (dp, cp, tp)");
    CHECK(msg.find("the root of this mesh is mesh((dp=2, cp=2, tp=2), stride=(4, 2, 1))") != std::string::npos);
    CHECK(msg.find("dim 'dp' has size 2, the target type needs 4") != std::string::npos);
  }
  // concatenate: dims of derived meshes of one root, over the communicators they have.
  const int made = mesh.communicator_count();
  const auto cat = dm::concatenate(flat_tp, mesh["dp"_dim]);
  CHECK_EQ(mesh.communicator_count(), made);
  CHECK((cat.comm<"cp_tp">().native() == flat_tp.comm().native() &&
         cat.comm<"dp">().native() == mesh.comm<"dp">().native()));
  CHECK((cat.root<mesh3>() == mesh));
  CHECK_THROWS_WITH_AS(dm::concatenate(mesh["dp"_dim], again["tp"_dim]),
                       doctest::Contains("come from different roots"), dm::mesh_error);

  // abort(): every communicator devmesh made for the root is unusable, from every handle
  // derived from it; the world passed in is untouched. Local: no rank waits for another.
  auto doomed = dm::init_device_mesh(world, mesh3(dp, w / (dp * tp), tp));
  auto doomed_tp = doomed["tp"_dim];
  doomed.abort();
  const auto error_of = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const dm::comm_error& e) {
      return e.what();
    } catch (const std::exception& e) {
      return std::string("unexpected exception type: ") + e.what();
    }
    return "did not throw";
  };
  std::vector<float> one{1.0f};
  const std::string after = error_of([&] { doomed_tp.all_reduce(std::span<float>(one), dm::op::sum); });
  CHECK((contains(after, "all_reduce") && contains(after, "aborted")));
  CHECK(contains(error_of([&] { (void)doomed.flatten<"dp_cp", "dp", "cp">(); }), "aborted"));
  CHECK(contains(error_of([&] { (void)doomed.comm<"dp">().size(); doomed.barrier<"dp">(); }), "aborted"));
  int x = 1;
  world.all_reduce(&x, &x, 1, dm::op::sum);
  CHECK_EQ(x, w);
  CHECK(mesh.size() == w);  // another root's mesh is unaffected
  mesh.all_reduce<"tp">(std::span<float>(one), dm::op::sum);
  CHECK_EQ(one[0], static_cast<float>(tp));
}
}  // namespace mpi_runtime_test
