// Unflatten with run-time sizes on a device mesh (issue 40 item 2; PyTorch's
// `_unflatten(dim, sizes, names)`): Megatron's dense view (pp, dp, cp, tp) cut from the world
// with sizes known at run time (dp inferred), and its expert view (pp, edp, ep, etp) cut from
// the dense view's dp x cp x tp, as Megatron and TorchTitan build them, on one root. Checked:
// every dim's communicator holds the group Megatron's rank arithmetic gives, in order; the
// expert dims that coincide with dense ones share their communicators (nothing created); a
// rank whose sizes the core refuses, and ranks that pass different sizes, make every rank
// throw mesh_error (never a rank waiting for one that threw); the mesh works afterwards. And
// groups that are not a dim (mesh.subgroup: Megatron's embedding groups).
// Run under mpirun with 1, 2, 4 and 8 ranks.
#include <span>
#include <string>
#include <vector>

#include <devmesh/devmesh.hpp>

#include "mpi_doctest.hpp"

namespace mpi_unflatten_sizes_test {  // one per file: a unity TU holds several files

namespace dm = devmesh;
using world_mesh = dm::mesh<dm::dim<"world">>;

/// Megatron's sizes for w ranks: tp = 2 and pp = 2 where they divide, cp = 1; ep = 2 where
/// dp x cp x tp allows it, etp = 1.
struct sizes {
  int tp, pp, cp, ep, etp;
  static sizes for_world(int w) {
    sizes s{w % 2 == 0 ? 2 : 1, 1, 1, 1, 1};
    s.pp = (w / s.tp) % 2 == 0 ? 2 : 1;
    s.ep = (w / s.pp) % 2 == 0 ? 2 : 1;
    return s;
  }
};

/// The world ranks of this rank's communicator of dim `name` (gathered over it), in order.
template <class M>
std::vector<int> members(const M& mesh, const char* name) {
  const auto& c = mesh.comm(name);
  std::vector<int> out(static_cast<std::size_t>(c.size()));
  int me = mesh.rank();
  c.all_gather(&me, out.data(), 1);
  return out;
}

/// The group of this rank along digit `d` of a mixed-radix rank (sizes slowest first).
std::vector<int> group_of(int rank, const std::vector<int>& radix, std::size_t d) {
  std::vector<int> digit(radix.size());
  int r = rank;
  for (std::size_t i = radix.size(); i-- > 0;) digit[i] = r % radix[i], r /= radix[i];
  std::vector<int> out;
  for (int v = 0; v < radix[d]; ++v) {
    digit[d] = v;
    int x = 0;
    for (std::size_t i = 0; i < radix.size(); ++i) x = x * radix[i] + digit[i];
    out.push_back(x);
  }
  return out;
}

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

TEST_CASE("dense and expert views from run-time sizes, on one root") {
  auto world = dm::mpi::world();
  const int w = world.size(), me = world.rank();
  const sizes s = sizes::for_world(w);
  auto root = dm::init_device_mesh(world, world_mesh(w));
  // Megatron's default order tp-cp-ep-dp-pp: the mesh (pp, dp, cp, tp), dp inferred.
  auto dense = root.unflatten<"world", dm::dim<"pp">, dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>(
      s.pp, dm::dynamic_size, s.cp, s.tp);
  const int dp = w / (s.pp * s.cp * s.tp);
  CHECK(dense.size<"dp">() == dp);
  const std::vector<int> radix{s.pp, dp, s.cp, s.tp};
  const char* names[] = {"pp", "dp", "cp", "tp"};
  for (std::size_t d = 0; d < 4; ++d) CHECK_MESSAGE(members(dense, names[d]) == group_of(me, radix, d), names[d]);

  // The expert view: dp x cp x tp flattened, then cut as (edp, ep, etp); pp is shared.
  const int before = dense.communicator_count();
  auto expert = dense.flatten<"dp_cp_tp", "dp", "cp", "tp">()
                    .slice<"pp", "dp_cp_tp">()
                    .unflatten<"dp_cp_tp", dm::dim<"edp">, dm::dim<"ep">, dm::dim<"etp">>(dm::dynamic_size, s.ep,
                                                                                         s.etp);
  const int edp = dp * s.cp * s.tp / (s.ep * s.etp);
  const std::vector<int> eradix{s.pp, edp, s.ep, s.etp};
  const char* enames[] = {"pp", "edp", "ep", "etp"};
  for (std::size_t d = 0; d < 4; ++d) CHECK_MESSAGE(members(expert, enames[d]) == group_of(me, eradix, d), enames[d]);
  CHECK(expert.comm<"pp">().native() == dense.comm<"pp">().native());  // a shared dim: one communicator
  // New communicators only for new group functions: dp_cp_tp, and each of edp, ep, etp that
  // is not one of the dense view's (etp = 1 is, as every size-1 dim).
  CHECK(expert.communicator_count() <= before + 4);

  // One collective per view: the sum of world ranks over tp, and over ep.
  std::vector<long> v{me};
  dense.all_reduce<"tp">(std::span(v), dm::op::sum);
  long want = 0;
  for (int r : group_of(me, radix, 3)) want += r;
  CHECK(v[0] == want);
  v[0] = me;
  expert.all_reduce<"ep">(std::span(v), dm::op::sum);
  want = 0;
  for (int r : group_of(me, eradix, 2)) want += r;
  CHECK(v[0] == want);
}

/// Runs f expecting a mesh_error; returns its message ("" and a failed check if none).
template <class F>
std::string mesh_error_of(F&& f, const char* what) {
  try {
    f();
  } catch (const dm::mesh_error& e) {
    return e.what();
  }
  FAIL_CHECK(std::string(what) << ": no mesh_error");
  return "";
}

TEST_CASE("run-time sizes the core refuses on one rank, or that differ: every rank throws") {
  auto world = dm::mpi::world();
  const int w = world.size(), me = world.rank();
  if (w < 2) return;
  auto root = dm::init_device_mesh(world, world_mesh(w));
  using cut = dm::dim<"tp">;
  // Rank 0 asks for tp = 3, which does not divide the world (w is 2, 4 or 8): it alone is
  // refused by the core, and every rank throws its refusal.
  std::string msg = mesh_error_of(
      [&] { (void)root.unflatten<"world", dm::dim<"dp">, cut>(dm::dynamic_size, me == 0 ? 3 : 1); }, "refused on rank 0");
  CHECK_MESSAGE(contains(msg, "rank 0"), msg);
  CHECK_MESSAGE(contains(msg, "unflatten"), msg);
  // Valid sizes, different on one rank: the ranks disagree on the mesh, every rank throws.
  msg = mesh_error_of(
      [&] { (void)root.unflatten<"world", dm::dim<"dp">, cut>(dm::dynamic_size, me == w - 1 ? w : 1); }, "differ");
  CHECK_MESSAGE(contains(msg, "the ranks disagree"), msg);
  // The root still derives afterwards.
  auto m = root.unflatten<"world", dm::dim<"dp">, cut>(dm::dynamic_size, 2);
  CHECK(m.size<"tp">() == 2);
  CHECK(m.size<"dp">() == w / 2);
}

TEST_CASE("lazy mode: the step is local, so is the refusal") {
  auto world = dm::mpi::world();
  dm::device_mesh_options<dm::mpi::communicator> options;
  options.lazy = true;
  auto root = dm::init_device_mesh(world, world_mesh(world.size()), options);
  const std::string msg =
      mesh_error_of([&] { (void)root.unflatten<"world", dm::dim<"a">, dm::dim<"b">>(dm::dynamic_size, 0); }, "size 0");
  CHECK_MESSAGE(contains(msg, "b"), msg);
  auto m = root.unflatten<"world", dm::dim<"a">, dm::dim<"b">>(dm::dynamic_size, 1);
  CHECK(m.size<"a">() == world.size());
}

TEST_CASE("groups that are not a dim: the first and last stage of each pp group") {
  auto world = dm::mpi::world();
  const int w = world.size(), me = world.rank();
  auto root = dm::init_device_mesh(world, world_mesh(w));
  const int tp = w % 2 == 0 ? 2 : 1, pp = w / tp;
  auto dense = root.unflatten<"world", dm::dim<"pp">, dm::dim<"tp">>(dm::dynamic_size, tp);
  // Megatron's embedding group: the first and the last stage of each pipeline group.
  auto embedding = dense.subgroup<"pp">({0, -1});
  const int stage = dense.local_rank<"pp">();
  const bool chosen = stage == 0 || stage == pp - 1;
  CHECK(embedding.valid() == chosen);
  if (chosen) {
    std::vector<int> got(static_cast<std::size_t>(embedding.size()));
    embedding.all_gather(&me, got.data(), 1);
    const int t = me % tp;  // this rank's pp group: t, t + tp, ...; its ends
    const std::vector<int> want = pp == 1 ? std::vector<int>{t} : std::vector<int>{t, t + (pp - 1) * tp};
    CHECK(got == want);
  }
  // The order given is the communicator's order: the last stage first.
  auto reversed = dense.subgroup("pp", std::vector<int>{-1, 0});
  if (chosen && pp > 1) CHECK(reversed.rank() == (stage == pp - 1 ? 0 : 1));
  if (w < 2) return;
  // One rank out of range, then one rank choosing otherwise: every rank throws.
  std::string msg = mesh_error_of([&] { (void)dense.subgroup<"pp">({0, me == 0 ? pp : -1}); }, "out of range");
  CHECK_MESSAGE(contains(msg, "is not in [-" + std::to_string(pp) + ", " + std::to_string(pp) + ")"), msg);
  if (pp > 1) {  // (with pp = 1, -1 and 0 are the same rank: the same choice)
    msg = mesh_error_of([&] { (void)dense.subgroup<"pp">({me == w - 1 ? -1 : 0}); }, "chosen otherwise");
    CHECK_MESSAGE(contains(msg, "disagree"), msg);
  }
  auto again = dense.subgroup<"pp">({0});  // still works
  CHECK(again.valid() == (stage == 0));
}

}  // namespace mpi_unflatten_sizes_test
