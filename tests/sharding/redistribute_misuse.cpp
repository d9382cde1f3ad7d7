// redistribute's compile-time misuses (redistribute/redistribute.hpp), each a static_assert
// with a devmesh message: DEVMESH_CASE=1 in and out of different element types, 2 an out
// that cannot be written, 3 a mesh on a backend without the v-collectives (declared_comm: a
// communicator with only the required members), 4 std::vector<bool> buffers (packed bits: bool
// elements in std::array<bool, N> or bool arrays move, tests/sharding/redistribute_mpi.cpp), 5 and 6
// the same for full_tensor and distribute from a root (issue 41: they failed to match, with the
// standard library's notes). Without DEVMESH_CASE the same calls, right,
// compile (the control). Each case runs through tests/compile_fail/run_case.sh: its
// diagnostic must be the first error and the only one.
// expect-case-1: devmesh: redistribute: in and out must hold the same element type
// expect-case-2: devmesh: redistribute: out must be writable
// expect-case-3: devmesh: redistribute needs a backend with the v-collectives all_to_allv and reduce_scatterv
// expect-case-4: devmesh: redistribute: in and out must be contiguous ranges, and std::vector<bool> is not one
// expect-case-5: devmesh: full_tensor: local and full must be contiguous ranges, and std::vector<bool> is not one
// expect-case-6: devmesh: distribute: full and local must be contiguous ranges, and std::vector<bool> is not one
#include <devmesh/redistribute.hpp>

#include <array>
#include <vector>

namespace dm = devmesh;
using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
using rows = dm::sharding<mesh2d, dm::on<"dp", dm::shard<0>>>;
using cols = dm::sharding<mesh2d, dm::on<"tp", dm::shard<1>>>;

void call(const dm::device_mesh<mesh2d, dm::mpi::communicator>& mesh) {
  std::vector<double> in(32), out(16);
#if DEVMESH_CASE == 1
  std::vector<float> other(16);
  dm::redistribute(mesh, rows{}, cols{}, dm::extents<8, 8>{}, in, other);
#elif DEVMESH_CASE == 2
  const std::vector<double> fixed(16);
  dm::redistribute(mesh, rows{}, cols{}, dm::extents<8, 8>{}, in, fixed);
#elif DEVMESH_CASE == 4
  std::vector<bool> flags_in(32), flags_out(16);
  dm::redistribute(mesh, rows{}, cols{}, dm::extents<8, 8>{}, flags_in, flags_out);
#elif DEVMESH_CASE == 5
  std::vector<bool> block(32), whole(64);
  dm::full_tensor(mesh, rows{}, dm::extents<8, 8>{}, block, whole);
#elif DEVMESH_CASE == 6
  std::vector<bool> whole(64), block(32);
  dm::distribute(mesh, rows{}, dm::extents<8, 8>{}, whole, block, 0);
#else
  dm::redistribute(mesh, rows{}, cols{}, dm::extents<8, 8>{}, in, out);
  std::array<bool, 32> flags_in{};  // bools in memory: they move
  bool flags_out[16] = {};
  dm::redistribute(mesh, rows{}, cols{}, dm::extents<8, 8>{}, flags_in, flags_out);
  std::array<bool, 64> flags_all{};
  dm::full_tensor(mesh, rows{}, dm::extents<8, 8>{}, flags_in, flags_all);
  dm::distribute(mesh, rows{}, dm::extents<8, 8>{}, flags_all, flags_in);
  dm::distribute(mesh, rows{}, dm::extents<8, 8>{}, flags_all, flags_in, 0);
#endif
}

#if DEVMESH_CASE == 3
#include "../compile_fail/support/declared_comm.hpp"
void call_declared(const dm::device_mesh<mesh2d, declared_comm>& mesh) {
  std::vector<double> in(32), out(16);
  dm::redistribute(mesh, rows{}, cols{}, dm::extents<8, 8>{}, in, out);
}
#endif
