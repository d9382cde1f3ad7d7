// tests/nccl/mesh.cpp: dm::init_device_mesh over NCCL-on-the-double, 8 ranks, (2,2,2) mesh:
// one ncclCommSplit per dim with the core's colors/keys, commName "mesh:<dim>", membership
// checked against the layout, collectives on every dim, and a split fault on one rank that
// ends init_device_mesh with a comm_error on every rank and nothing left alive.
#include <doctest/doctest.h>

#include <span>
#include <string>
#include <vector>

#include <devmesh/devmesh.hpp>

#include "common.hpp"
#include "../mpi/mpi_doctest.hpp"

namespace nccl_mesh_test {  // one per file: a unity TU holds several files (devmesh_test_program)

namespace dm = devmesh;
using namespace dm::literals;
using namespace nccl_test;
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;

template <dm::fixed_string N, class M>
void check_dim(const M& mesh, const mesh3d& layout, int r, const std::string& name) {
  const auto& c = dm::comm<N>(mesh);
  const auto group = dm::group<N>(layout, r);
  REQUIRE(c.valid());
  CHECK(c.size() == static_cast<int>(group.size()));
  CHECK(c.rank() == group.index_of(r));
  devmesh_fake_comm_info info{};
  REQUIRE(devmesh_fake_nccl_comm_info(c.native(), &info));
  CHECK(std::string(info.comm_name) == "mesh:" + name);
  for (int i = 0; i < c.size(); ++i) CHECK(info.world_ranks[i] == group[i]);
  // Collectives on the dim, through the mesh: sum of world ranks of the group.
  std::vector<int> v{r};
  dm::all_reduce<N>(mesh, std::span(v), dm::op::sum, nullptr);
  REQUIRE(cudaStreamSynchronize(nullptr) == cudaSuccess);  // the double is asynchronous, as a GPU
  int expected = 0;
  for (int i = 0; i < static_cast<int>(group.size()); ++i) expected += group[i];
  CHECK(v[0] == expected);
  std::vector<int> all(group.size());
  const std::vector<int> mine{r};
  dm::all_gather<N>(mesh, std::span<const int>(mine), std::span(all), nullptr);
  REQUIRE(cudaStreamSynchronize(nullptr) == cudaSuccess);
  for (std::size_t i = 0; i < all.size(); ++i) CHECK(all[i] == group[static_cast<int>(i)]);
}

TEST_CASE("init_device_mesh<(2,2,2)> over nccl::world(mpi::world()) on the double") {
  {
    auto world = dm::nccl::world(dm::mpi::world(), fast());
    const int splits = devmesh_fake_nccl_split_calls();
    auto mesh = dm::init_device_mesh<mesh3d>(world);
    CHECK(devmesh_fake_nccl_split_calls() - splits <= 3);  // one split per dim at most
    constexpr mesh3d layout{};
    const int r = world.rank();
    CHECK(mesh.is_member());
    check_dim<"dp">(mesh, layout, r, "dp");
    check_dim<"cp">(mesh, layout, r, "cp");
    check_dim<"tp">(mesh, layout, r, "tp");
    // A group batches the collectives of two dims into one ncclGroupEnd.
    std::vector<float> a{1.f}, b{1.f};
    const int ends = devmesh_fake_nccl_group_ends();
    {
      dm::nccl::group g;
      mesh.all_reduce<"dp">(std::span(a), dm::op::sum, nullptr);
      mesh.all_reduce<"tp">(std::span(b), dm::op::sum, nullptr);
    }
    CHECK(devmesh_fake_nccl_group_ends() == ends + 1);
    REQUIRE(cudaStreamSynchronize(nullptr) == cudaSuccess);
    CHECK(a[0] == 2.f);
    CHECK(b[0] == 2.f);
  }
  CHECK(devmesh_fake_nccl_live_comms() == 0);
  CHECK(devmesh_fake_nccl_destroyed_unfinalized() == 0);
}

TEST_CASE("abort(): ncclCommAbort of every dim's communicator, then every handle throws") {
  {
    auto world = dm::nccl::world(dm::mpi::world(), fast());
    auto mesh = dm::init_device_mesh<mesh3d>(world);
    auto tp = mesh["tp"_dim];
    const int aborted = devmesh_fake_nccl_aborted();
    mesh.abort();
    CHECK(devmesh_fake_nccl_aborted() - aborted == 3);  // the three dims' (the world is not the mesh's)
    std::vector<float> a{1.f};
    std::string what;
    try {
      tp.all_reduce(std::span(a), dm::op::sum, nullptr);
    } catch (const dm::comm_error& e) {
      what = e.what();
    }
    CHECK(what.find("abort") != std::string::npos);
    CHECK(mesh.comm<"dp">().aborted());
    // The world communicator the mesh was made over is untouched.
    CHECK(!world.aborted());
    world.all_reduce(a.data(), a.data(), 1, dm::op::sum, nullptr);
    REQUIRE(cudaStreamSynchronize(nullptr) == cudaSuccess);
  }
  CHECK(devmesh_fake_nccl_live_comms() == 0);
}
}  // namespace nccl_mesh_test
