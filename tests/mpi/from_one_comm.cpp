// from_comms<"name">(world, comm): PyTorch's DeviceMesh.from_group(group) without a mesh, on
// 1-8 ranks. Communicators made with plain MPI_Comm_split (the expected members and order
// come from the split's own color and key, not from devmesh):
//   - the whole world in reverse order;
//   - the odd world ranks in reverse order (even ranks pass an invalid communicator and are
//     not members);
//   - one communicator per half (every rank passes one): every rank throws, naming the
//     mistake;
//   - options.rank_map set as well: every rank throws.
#include <cstdlib>
#include <string>
#include <vector>

#include <devmesh/devmesh.hpp>

#include "mpi_doctest.hpp"

namespace mpi_from_one_comm_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;
using C = dm::mpi::communicator;

namespace {

/// MPI_Comm_split of the world: ranks with `color` < 0 get no communicator.
C split(int color, int key) {
  MPI_Comm out = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, color < 0 ? MPI_UNDEFINED : color, key, &out);
  return out == MPI_COMM_NULL ? C() : C::adopt(out);
}

/// The world ranks of a communicator, in its rank order, all-gathered with plain MPI.
std::vector<int> members(MPI_Comm c) {
  int n = 0;
  MPI_Comm_size(c, &n);
  std::vector<int> out(static_cast<std::size_t>(n));
  const int me = test::world_rank();
  MPI_Allgather(&me, 1, MPI_INT, out.data(), 1, MPI_INT, c);
  return out;
}

/// A mesh over the ranks `expected` (world ranks, in order) adopted from `comm`.
void check_adopted(C& world, C comm, const std::vector<int>& expected, const char* label) {
  const int me = world.rank();
  const int index = [&] {
    for (std::size_t i = 0; i < expected.size(); ++i)
      if (expected[i] == me) return static_cast<int>(i);
    return -1;
  }();
  auto mesh = dm::from_comms<"dp">(world, std::move(comm));
  CHECK_EQ(mesh.size(), static_cast<int>(expected.size()));
  const bool identity_of_world = expected.size() == static_cast<std::size_t>(world.size()) && [&] {
    for (std::size_t i = 0; i < expected.size(); ++i)
      if (expected[i] != static_cast<int>(i)) return false;
    return true;
  }();
  CHECK((mesh.rank_map() == expected || (mesh.rank_map().empty() && identity_of_world)));
  CHECK_EQ(mesh.is_member(), index >= 0);
  if (index < 0) return;
  CHECK_EQ(mesh.local_rank<"dp">(), index);
  CHECK_EQ(mesh.position(), index);
  CHECK_EQ(mesh.comm<"dp">().rank(), index);
  CHECK(mesh.ranks() == expected);
  CHECK(members(mesh.comm<"dp">().native()) == expected);
  int x = me, sum = 0;
  for (int r : expected) sum += r;
  mesh.all_reduce<"dp">(std::span(&x, 1), dm::op::sum);
  CHECK_EQ(x, sum);
  if (me == 0 || index == 0) std::printf("%s: ok (%d ranks)\n", label, mesh.size());
}

}  // namespace

TEST_CASE("the whole world in reverse order") {
  auto world = dm::mpi::world();
  const int n = world.size();
  std::vector<int> expected;
  for (int r = n - 1; r >= 0; --r) expected.push_back(r);
  check_adopted(world, split(0, n - 1 - world.rank()), expected, "whole world, reversed");
}

TEST_CASE("the odd world ranks in reverse order; the even ones pass no communicator") {
  auto world = dm::mpi::world();
  const int n = world.size(), me = world.rank();
  std::vector<int> expected;
  for (int r = n - 1; r >= 0; --r)
    if (r % 2 == 1) expected.push_back(r);
  C comm = split(me % 2 == 1 ? 0 : -1, n - me);
  if (expected.empty()) {  // one rank: nobody passes a communicator
    CHECK_THROWS_WITH_AS(dm::from_comms<"dp">(world, std::move(comm)),
                         doctest::Contains("no world rank passed a valid communicator"), dm::mesh_error);
    return;
  }
  check_adopted(world, std::move(comm), expected, "odd ranks, reversed");
}

TEST_CASE("one communicator per half: every rank throws, naming the mistake") {
  auto world = dm::mpi::world();
  const int n = world.size(), me = world.rank();
  if (n < 2) return;
  C comm = split(me < n / 2 ? 0 : 1, me);
  const std::string what =
      CHECK_THROWS_WHAT(dm::mesh_error, dm::from_comms<"dp">(world, std::move(comm)), "from_comms<\"dp\">: ");
  CHECK((what.find("pass one communicator, not one per group") != std::string::npos ||
         what.find("the communicators passed differ") != std::string::npos));
}

TEST_CASE("options.rank_map set as well: every rank throws") {
  auto world = dm::mpi::world();
  dm::device_mesh_options<C> o;
  o.rank_map = {0};
  CHECK_THROWS_WITH_AS(dm::from_comms<"dp">(world, split(0, world.rank()), o),
                       doctest::Contains("options.rank_map is set on world rank 0"), dm::mesh_error);
}
TEST_CASE("DEVMESH_TIMEOUT malformed on the last rank alone: every rank throws it, promptly") {
  // The map step runs before init agrees on the options: the last rank's bad value must not
  // throw there alone and leave its peers waiting out their bound (600 s).
  auto world = dm::mpi::world();
  const int n = world.size(), me = world.rank();
  if (me == n - 1) setenv("DEVMESH_TIMEOUT", "5 s", 1);
  const std::string what = CHECK_THROWS_WHAT(dm::mesh_error, dm::from_comms<"dp">(world, split(0, me)),
                                             "DEVMESH_TIMEOUT='5 s' is not a number of seconds");
  unsetenv("DEVMESH_TIMEOUT");
  CHECK_MESSAGE(what.find("failed on rank " + std::to_string(n - 1) + " of ") != std::string::npos, what);
}
}  // namespace mpi_from_one_comm_test
