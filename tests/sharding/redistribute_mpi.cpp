// dm::redistribute on 8 MPI ranks (redistribute/redistribute.hpp): every pair of
// tests/sharding/data/pytorch_2.15_redistribute.json (1-, 2- and 3-D meshes, even, uneven and
// empty shards, Partial of each op, _StridedShard, and the R -> P pairs PyTorch refuses) run
// for real, each rank's block after compared with the block real PyTorch 2.15 computed (a
// Partial target: redistributed once more to Replicate, and compared with the tensor the
// source stands for); random pairs on every mesh of the world's size (run on 1, 2, 4 and 8
// ranks), checked against the single-process reference; distribute, full_tensor and
// check_from_local; then what must throw before any communication does, on every rank.
#include "../mpi/mpi_doctest.hpp"
#include "pytorch_data.hpp"
#include "random_specs.hpp"
#include "redistribute_values.hpp"

#include <devmesh/redistribute.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <cmath>
#include <cstdint>
#include <random>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dm = devmesh;
using namespace devmesh_test;

namespace {

/// What an output block holds before redistribute writes it: an element it leaves unwritten
/// fails the comparison (a zero-initialized block would pass where zeros are due).
const double poison = std::nan("");

/// The device meshes made so far, by (number of dims, sizes): one type per number of dims.
std::map<std::vector<int>, std::shared_ptr<void>>& made_meshes() {
  static std::map<std::vector<int>, std::shared_ptr<void>> made;
  return made;
}

/// One device mesh per shape, made on first use (every rank walks the cases alike).
template <class Mesh>
const dm::device_mesh<Mesh, dm::mpi::communicator>& device_mesh_of(const Mesh& m) {
  using device_mesh = dm::device_mesh<Mesh, dm::mpi::communicator>;
  std::vector<int> key{Mesh::ndim};
  for (int d = 0; d < Mesh::ndim; ++d) key.push_back(m.size(d));
  auto& slot = made_meshes()[key];
  if (!slot) slot = std::make_shared<device_mesh>(dm::init_device_mesh(dm::mpi::world(), m));
  return *static_cast<const device_mesh*>(slot.get());
}

/// Frees the meshes device_mesh_of made when a test case ends, before MPI_Finalize (a
/// communicator outliving MPI cannot be freed: LeakSanitizer would say so).
struct meshes_of_this_case {
  meshes_of_this_case() = default;
  meshes_of_this_case(const meshes_of_this_case&) = delete;
  meshes_of_this_case& operator=(const meshes_of_this_case&) = delete;
  ~meshes_of_this_case() { made_meshes().clear(); }
};

struct tally {
  int pairs = 0, compared_with_pytorch = 0, partial_targets = 0;
};

template <int R, class Mesh>
void run_pair(const json& c, tally& sum) {
  std::vector<int> sizes;
  const Mesh m = mesh_of<Mesh>(c, sizes);
  const auto& mesh = device_mesh_of(m);
  std::array<dm::tensor_index, R> shape{};
  for (int t = 0; t < R; ++t) shape[t] = static_cast<dm::tensor_index>(c["tensor_shape"].items[t].num);
  const auto ext = dm::dextents<R>::from_array(shape);
  std::vector<parsed> ps, pd;
  for (const json& p : c["src"].items) ps.push_back(parse_placement(p.str));
  for (const json& p : c["dst"].items) pd.push_back(parse_placement(p.str));
  const auto src = spec_of(m, ps, sizes), dst = spec_of(m, pd, sizes);
  const int rank = mesh.position();
  const source in = source_of(m, src, ext, rank);
  std::vector<double> out(static_cast<std::size_t>(dst.local_size(ext, rank)), poison);  // every element written
  dm::redistribute(mesh, src, dst, ext, in.block, out);
  ++sum.pairs;

  bool dst_partial = false;
  for (const auto& p : pd) dst_partial = dst_partial || p.kind == 'P';
  if (dst_partial) {  // PyTorch's blocks are its own choice there: the reduction must be the tensor
    dm::dynamic_sharding<Mesh> whole(m);
    std::vector<double> all(static_cast<std::size_t>(whole.local_size(ext, rank)), poison);
    dm::redistribute(mesh, dst, whole, ext, out, all);
    const auto x = flat_indices(whole, ext, rank);
    for (std::size_t i = 0; i < all.size(); ++i) CHECK(all[i] == doctest::Approx(in.full(x[i])));
    ++sum.partial_targets;
    return;
  }
  const auto x = flat_indices(dst, ext, rank);
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i] == doctest::Approx(in.full(x[i])));
  if (!c.has("ranks")) return;
  for (const json& r : c["ranks"].items) {
    if (static_cast<int>(r["rank"].num) != rank) continue;
    REQUIRE(r["local_values"].items.size() == out.size());
    for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i] == doctest::Approx(r["local_values"].items[i].num));
    ++sum.compared_with_pytorch;
  }
}

template <class Mesh>
void run_pair(const json& c, tally& sum) {
  c["tensor_shape"].items.size() == 1 ? run_pair<1, Mesh>(c, sum) : run_pair<2, Mesh>(c, sum);
}

/// The recorded case's target spec, reached three ways from the tensor 0, 1, 2, ... (row-major):
/// distribute from every rank's copy, distribute from one root (the case's index mod 8), and
/// back with full_tensor, which must give the tensor again (Partial blocks included).
template <int R, class Mesh>
void distribute_case(const json& c, int index, int& checked) {
  std::vector<int> sizes;
  const Mesh m = mesh_of<Mesh>(c, sizes);
  const auto& mesh = device_mesh_of(m);
  std::array<dm::tensor_index, R> shape{};
  dm::tensor_index numel = 1;
  for (int t = 0; t < R; ++t) shape[t] = static_cast<dm::tensor_index>(c["tensor_shape"].items[t].num), numel *= shape[t];
  const auto ext = dm::dextents<R>::from_array(shape);
  std::vector<parsed> pd;
  for (const json& p : c["dst"].items) pd.push_back(parse_placement(p.str));
  const auto spec = spec_of(m, pd, sizes);
  const int rank = mesh.position(), root = index % 8;
  std::vector<double> full(static_cast<std::size_t>(numel));
  for (dm::tensor_index x = 0; x < numel; ++x) full[static_cast<std::size_t>(x)] = static_cast<double>(x);
  std::vector<double> every(static_cast<std::size_t>(spec.local_size(ext, rank))), rooted(every.size());
  dm::distribute(mesh, spec, ext, full, every);
  dm::distribute(mesh, spec, ext, rank == root ? full : std::vector<double>(), rooted, root);
  CHECK(every == rooted);
  bool partial = false;
  for (const auto& p : pd) partial = partial || p.kind == 'P';
  if (!partial) {
    const auto x = flat_indices(spec, ext, rank);
    for (std::size_t i = 0; i < every.size(); ++i) CHECK(every[i] == static_cast<double>(x[i]));
  }
  std::vector<double> back(static_cast<std::size_t>(numel));
  dm::full_tensor(mesh, spec, ext, rooted, back);
  CHECK(back == full);
  dm::check_from_local(mesh, spec, ext, every);
  ++checked;
}

/// One pair redistributed on m, checked against the single-process reference: the values
/// after stand for the source's tensor (a Partial target through full_tensor).
template <class Mesh, class Spec, std::size_t R>
void check_pair(const Mesh& m, const Spec& src, const Spec& dst, const std::array<dm::tensor_index, R>& shape) {
  const auto& mesh = device_mesh_of(m);
  const auto ext = dm::dextents<static_cast<int>(R)>::from_array(shape);
  const int rank = mesh.position();
  CAPTURE(dm::to_string(m));
  CAPTURE(shape);
  CAPTURE(dm::to_string(src));
  CAPTURE(dm::to_string(dst));
  const source in = source_of(m, src, ext, rank);
  std::vector<double> out(static_cast<std::size_t>(dst.local_size(ext, rank)), poison);  // every element written
  dm::redistribute(mesh, src, dst, ext, in.block, out);
  std::vector<double> whole(static_cast<std::size_t>(ext.size()), poison);
  dm::full_tensor(mesh, dst, ext, out, whole);
  for (std::size_t x = 0; x < whole.size(); ++x)
    REQUIRE(whole[x] == doctest::Approx(in.full(static_cast<dm::tensor_index>(x))));
  const auto at = flat_indices(dst, ext, rank);
  bool partial = false;
  for (int d = 0; d < Mesh::ndim; ++d) partial = partial || dst.table().at[d].is_partial();
  if (!partial)
    for (std::size_t k = 0; k < out.size(); ++k) REQUIRE(out[k] == doctest::Approx(in.full(at[k])));
}
/// Pairs of random specs redistributed on m, each checked (check_pair). Returns their number.
template <int R, class Mesh>
int random_pairs(const Mesh& m, const std::array<dm::tensor_index, R>& shape, int pairs, std::mt19937& rng) {
  for (int i = 0; i < pairs; ++i) {
    const auto src = random_spec<R>(m, rng), dst = random_spec<R>(m, rng);
    check_pair(m, src, dst, shape);
  }
  return pairs;
}

/// Random pairs on m, redistributed three times over in the same order, two extents each:
/// more pairs than a thread keeps plans and exchange surveys for, so kept ones are met
/// again, and replaced. Returns the number of calls.
template <class Mesh>
int pairs_again(const Mesh& m, std::mt19937& rng) {
  using spec = decltype(random_spec<2>(m, rng));
  std::vector<std::pair<spec, spec>> pairs;
  for (int i = 0; i < 6; ++i) pairs.emplace_back(random_spec<2>(m, rng), random_spec<2>(m, rng));
  int calls = 0;
  for (int round = 0; round < 3; ++round)
    for (const auto& [src, dst] : pairs)
      for (const std::array<dm::tensor_index, 2>& shape : {std::array<dm::tensor_index, 2>{5, 3}, {6, 8}})
        check_pair<Mesh, spec, 2>(m, src, dst, shape), ++calls;
  return calls;
}

using mesh24 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

}  // namespace

TEST_CASE("every recorded pair, redistributed on 8 ranks, gives PyTorch 2.15's blocks") {
  const meshes_of_this_case meshes;
  if (test::world_size() != 8) return test::skip("the recorded pairs are on meshes of 8 ranks");
  const json data = load(DEVMESH_PYTORCH_REDISTRIBUTE_JSON);
  tally sum;
  for (const json& c : data["cases"].items) {
    CAPTURE(c["id"].str);
    const std::size_t ndim = c["mesh"]["shape"].items.size();
    ndim == 1 ? run_pair<mesh1>(c, sum) : ndim == 2 ? run_pair<mesh2>(c, sum) : run_pair<mesh3>(c, sum);
  }
  if (test::world_rank() == 0)
    MESSAGE(sum.pairs << " pairs run, " << sum.compared_with_pytorch << " blocks compared with PyTorch's on rank 0, "
                      << sum.partial_targets << " Partial targets reduced and compared");
  CHECK(sum.pairs == static_cast<int>(data["cases"].items.size()));
  CHECK(sum.compared_with_pytorch > 300);
}

TEST_CASE("static specs, other element types: S(0),S(0) -> R,S(0), P(sum),R -> R,S(1), S(0),P(avg) -> P(sum),S(0)") {
  if (test::world_size() != 8) return test::skip("a mesh of 8 ranks");
  auto mesh = dm::init_device_mesh(dm::mpi::world(), mesh24{});
  using rows_twice = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<0>>>;
  using rows_on_tp = dm::sharding<mesh24, dm::on<"tp", dm::shard<0>>>;
  using grads = dm::sharding<mesh24, dm::on<"dp", dm::partial<dm::reduction::sum>>>;
  using cols_on_tp = dm::sharding<mesh24, dm::on<"tp", dm::shard<1>>>;
  const dm::extents<13, 5> ext;  // uneven: rows 7, 6 over dp then 2,2,2,1 and 2,2,2,0 over tp; then 4,4,4,1
  const int r = mesh.position();
  std::vector<float> in, out(static_cast<std::size_t>(rows_on_tp{}.local_size(ext, r)));
  for (auto x : flat_indices(rows_twice{}, ext, r)) in.push_back(static_cast<float>(x));
  dm::redistribute(mesh, rows_twice{}, rows_on_tp{}, ext, in, out);
  const auto want = flat_indices(rows_on_tp{}, ext, r);
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i] == static_cast<float>(want[i]));

  std::vector<std::int64_t> g(65), cols(static_cast<std::size_t>(cols_on_tp{}.local_size(ext, r)));
  for (std::int64_t x = 0; x < 65; ++x) g[static_cast<std::size_t>(x)] = x * (1 + mesh.local_rank<"dp">());
  dm::redistribute(mesh, grads{}, cols_on_tp{}, ext, g, cols);
  const auto at = flat_indices(cols_on_tp{}, ext, r);
  for (std::size_t i = 0; i < cols.size(); ++i) CHECK(cols[i] == 3 * at[i]);

  // an integer average reduce-scattered into blocks made Partial(sum) from Shard (zeros where
  // the dp half lacks a row): one zero-filling reduce_scatter over tp, the average's own path
  using averaged = dm::partial<dm::reduction::avg>;
  using summed = dm::partial<dm::reduction::sum>;
  using halves_averaged = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>, dm::on<"tp", averaged>>;
  using summed_rows = dm::sharding<mesh24, dm::on<"dp", summed>, dm::on<"tp", dm::shard<0>>>;
  static_assert(dm::plan_redistribute(halves_averaged{}, summed_rows{}).count == 1);
  std::vector<std::int64_t> half, rows(static_cast<std::size_t>(summed_rows{}.local_size(ext, r)), -1), whole(65);
  for (auto x : flat_indices(halves_averaged{}, ext, r)) half.push_back(2 * x * (1 + mesh.local_rank<"tp">()));
  dm::redistribute(mesh, halves_averaged{}, summed_rows{}, ext, half, rows);  // the average of 2x, 4x, 6x, 8x: 5x
  dm::redistribute(mesh, summed_rows{}, dm::sharding<mesh24>{}, ext, rows, whole);
  for (std::int64_t x = 0; x < 65; ++x) CHECK(whole[static_cast<std::size_t>(x)] == 5 * x);
}

TEST_CASE("calibrate: every dim measured, the same answer on every rank, kept by the mesh; options.links first") {
  if (test::world_size() != 8) return test::skip("a mesh of 8 ranks");
  auto mesh = dm::init_device_mesh(dm::mpi::world(), mesh24{});
  for (const auto& l : dm::mesh_links(mesh))  // before: the default within a node (no topology asked for)
    CHECK((l.source == dm::link_source::within_node && l.cost == dm::link_cost::shared_memory()));
  dm::calibrate_options quick;
  quick.latency_reps = 5, quick.bandwidth_reps = 3, quick.probe_bytes = 1 << 16;
  const auto c = dm::calibrate(mesh, quick);
  REQUIRE(c.dims.size() == 2);
  std::vector<double> mine;
  for (const auto& d : c.dims) {
    CHECK((d.latency_us > 0 && d.probe_us > 0 && d.cost.latency_us == d.latency_us && d.cost.gbytes_per_s > 0));
    CHECK(d.probe_bytes == (d.size - 1) * ((std::size_t{1} << 16) / 8 / (d.size - 1)) * 8);
    mine.push_back(d.latency_us), mine.push_back(d.cost.gbytes_per_s);
  }
  CHECK((c.dims[0].name == "dp" && c.dims[0].size == 2 && c.dims[1].name == "tp" && c.dims[1].size == 4));
  std::vector<double> least(mine.size()), most(mine.size());  // every rank the same numbers
  MPI_Allreduce(mine.data(), least.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine.data(), most.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  CHECK(least == most);
  const auto links = dm::mesh_links(mesh);
  for (std::size_t d = 0; d < 2; ++d)
    CHECK((links[d].source == dm::link_source::measured && links[d].cost == c.dims[d].cost));
  CHECK(dm::to_string(c).find("tp          4") != std::string::npos);
  CHECK(dm::links_table(mesh).find("calibrate") != std::string::npos);

  dm::device_mesh_options<dm::mpi::communicator> o;  // an option comes before a measurement
  o.links["dp"] = dm::link_cost::network();
  auto set = dm::init_device_mesh(dm::mpi::world(), mesh24{}, o);
  dm::calibrate(set, quick);
  CHECK((dm::mesh_links(set)[0].source == dm::link_source::option && dm::mesh_links(set)[0].cost == dm::link_cost::network()));
  CHECK(dm::mesh_links(set)[1].source == dm::link_source::measured);
}

/// The collectives a redistribute issued on this rank, from the mesh's flight record: "what on
/// channel" for the calls after the first `skip` recorded.
template <class DeviceMesh>
std::vector<std::string> calls_after(const DeviceMesh& mesh, std::uint64_t skip) {
  std::vector<std::string> out;
  for (const auto& e : mesh.flight_record().entries)
    if (e.id > skip) out.push_back(std::string(e.what) + " on " + e.on->name);
  return out;
}

TEST_CASE("the plan of specs built at run time follows the links: with dp across nodes a Partial over (dp, tp) is reduced within tp first") {
  if (test::world_size() != 8) return test::skip("a mesh of 8 ranks");
  using summed = dm::sharding<mesh24, dm::on<"dp", dm::partial<dm::reduction::sum>>, dm::on<"tp", dm::partial<dm::reduction::sum>>>;
  const dm::extents<256, 256> ext;  // 512 KiB of float64: past the links' latencies
  std::vector<double> in(256 * 256), out(256 * 256);
  // Specs built at run time: their plan is chosen by modelled time over the mesh's links (a
  // pair of static specs keeps its compile-time plan, by bytes, whatever the links: below).
  const auto from = dm::parse_sharding("P(sum),P(sum)", mesh24{});
  const auto to = dm::parse_sharding("R,R", mesh24{});
  const auto run = [&](const auto& mesh, bool static_specs = false) {
    for (std::size_t x = 0; x < in.size(); ++x) in[x] = static_cast<double>(x) * (1 + mesh.position());
    const std::uint64_t before = mesh.flight_record().recorded;
    if (static_specs)
      dm::redistribute(mesh, summed{}, dm::sharding<mesh24>{}, ext, in, out);
    else
      dm::redistribute(mesh, from, to, ext, in, out);
    for (std::size_t x = 0; x < out.size(); ++x) REQUIRE(out[x] == 36.0 * static_cast<double>(x));  // 1 + ... + 8
    return calls_after(mesh, before);
  };
  // uniform links (the default on one node): one all_reduce over the flattened group
  CHECK(run(dm::init_device_mesh(dm::mpi::world(), mesh24{})) == std::vector<std::string>{"all_reduce on dp_tp"});
  dm::device_mesh_options<dm::mpi::communicator> o;
  o.links["dp"] = dm::link_cost::network(), o.links["tp"] = dm::link_cost::nvlink();
  const auto slow_dp = dm::init_device_mesh(dm::mpi::world(), mesh24{}, o);
  CHECK(run(slow_dp) == std::vector<std::string>{"reduce_scatterv on tp", "all_reduce on dp", "all_to_allv on tp"});
  // The static pair: its constant plan, one all_reduce, on the same slow-dp mesh.
  CHECK(run(slow_dp, true) == std::vector<std::string>{"all_reduce on dp_tp"});
}

TEST_CASE("misuse throws before any communication, with the call in the message") {
  if (test::world_size() != 8) return test::skip("a mesh of 8 ranks");
  auto mesh = dm::init_device_mesh(dm::mpi::world(), mesh24{});
  using rows = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>>;
  using cols = dm::sharding<mesh24, dm::on<"tp", dm::shard<1>>>;
  const dm::extents<8, 8> ext;
  std::vector<double> in(32), out(16), wrong(15);
  const std::string wrong_out = "out has 15 elements; the block of position " + std::to_string(mesh.position()) +
                                " under R,S(1) has 16";
  CHECK_THROWS_WITH_AS(dm::redistribute(mesh, rows{}, cols{}, ext, in, wrong), doctest::Contains(wrong_out.c_str()),
                       dm::mesh_error);
  CHECK_THROWS_WITH_AS(dm::redistribute(mesh, rows{}, cols{}, ext, wrong, out),
                       doctest::Contains("in has 15 elements"), dm::mesh_error);
  std::vector<double> both(48);
  CHECK_THROWS_WITH_AS(dm::redistribute(mesh, rows{}, cols{}, ext, std::span(both).first(32), std::span(both).subspan(16, 16)),
                       doctest::Contains("in and out overlap"), dm::mesh_error);
  CHECK_THROWS_WITH_AS(dm::redistribute(mesh, rows{}, cols{}, ext, std::span(both).first(32), std::span(both).subspan(16, 16)),
                       doctest::Contains("devmesh: redistribute S(0),R -> R,S(1) on "), dm::mesh_error);
  CHECK_THROWS_WITH_AS(dm::redistribute(mesh, rows{}, cols{}, ext, in, wrong),
                       doctest::Contains("extents (8, 8), element type double, rank "), dm::mesh_error);
  using padded = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>, dm::chunks<dm::chunking::padded>>;
  CHECK_THROWS_WITH_AS(dm::redistribute(mesh, padded{}, cols{}, ext, in, out), doctest::Contains("chunking::padded"),
                       dm::mesh_error);
  // 2^32 elements: blocks that MPI's int counts cannot say, refused alike on every rank
  const dm::extents<65536, 65536> huge;
  CHECK_THROWS_WITH_AS(
      dm::redistribute(mesh, rows{}, dm::sharding<mesh24>{}, huge, std::vector<double>(), out),
      doctest::Contains("a block of 2147483648 elements (position 0, S(0),R) does not fit the backend's counts (at most 2147483647)"),
      dm::mesh_error);
  dm::redistribute(mesh, rows{}, cols{}, ext, in, out);  // the mesh still works
}

// Issue 41 item 1: with the default options every rank agrees on the call before any data moves.
// On a main without the agreement, each case below hangs or leaves wrong values on some ranks.

namespace {
/// Element x of rank r's block of the 8x8 tensor whose elements are their row-major indices, on
/// mesh24: under S(0) over dp (rows 4 dp .. 4 dp + 3), and under S(1) over tp (columns 2 tp, 2 tp + 1).
double rows_block(int r, std::size_t x) { return static_cast<double>(32 * (r / 4)) + static_cast<double>(x); }
double cols_block(int r, std::size_t x) {
  return static_cast<double>(8 * (x / 2) + 2 * static_cast<std::size_t>(r % 4) + x % 2);
}
}  // namespace
TEST_CASE("by default, a rank's wrong size, another spec, other extents or another type throws on every rank, "
          "naming it") {
  if (test::world_size() != 8) return test::skip("a mesh of 8 ranks");
  auto mesh = dm::init_device_mesh(dm::mpi::world(), mesh24{});
  using rows = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>>;
  using cols = dm::sharding<mesh24, dm::on<"tp", dm::shard<1>>>;
  using both = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<1>>>;
  const dm::extents<8, 8> ext;
  const int r = mesh.position();
  std::vector<double> in(32), out(r == 5 ? 15 : 16);
  CHECK_THROWS_WITH_AS(dm::redistribute(mesh, rows{}, cols{}, ext, in, out),
                       doctest::Contains("rank 5: out has 15 elements"), dm::mesh_error);
  out.resize(16);
  std::vector<double> quarter(8);
  const auto other_spec = [&] {
    if (r == 3) return dm::redistribute(mesh, rows{}, both{}, ext, in, quarter);
    dm::redistribute(mesh, rows{}, cols{}, ext, in, out);
  };
  // call #1 was the wrong size (agreed, then refused on every rank): this is call #2 on every rank
  CHECK_THROWS_WITH_AS(other_spec(),
                       doctest::Contains("the ranks disagree on the call: rank 3 has call #2: redistribute "
                                         "S(0),R -> S(0),S(1)"),
                       dm::mesh_error);
  const auto other_extents = [&] {  // rank 3's tensor is 8 x 16, its blocks sized for it: locally right
    if (r == 3) {
      std::vector<double> wide_in(64), wide_out(32);
      return dm::redistribute(mesh, rows{}, cols{}, dm::dextents<2>(8, 16), wide_in, wide_out);
    }
    dm::redistribute(mesh, rows{}, cols{}, dm::dextents<2>(8, 8), in, out);
  };
  CHECK_THROWS_WITH_AS(other_extents(),
                       doctest::Contains("rank 3 has call #3: redistribute S(0),R -> R,S(1) on mesh((dp=2, tp=4), "
                                         "stride=(4, 1)), extents (8, 16)"),
                       dm::mesh_error);
  const auto other_type = [&] {  // float on rank 6: as many elements, half the bytes
    if (r == 6) {
      std::vector<float> in_f(32), out_f(16);
      return dm::redistribute(mesh, rows{}, cols{}, ext, in_f, out_f);
    }
    dm::redistribute(mesh, rows{}, cols{}, ext, in, out);
  };
  CHECK_THROWS_WITH_AS(other_type(),
                       doctest::Contains("rank 6 has call #4: redistribute S(0),R -> R,S(1) on mesh((dp=2, tp=4), "
                                         "stride=(4, 1)), extents (8, 8), element type float"),
                       dm::mesh_error);
  // full_tensor and distribute agree too; a rank with another spec is named
  std::vector<double> full(64);
  const auto other_full = [&] {
    return r == 1 ? dm::full_tensor(mesh, cols{}, ext, out, full) : dm::full_tensor(mesh, rows{}, ext, in, full);
  };
  CHECK_THROWS_WITH_AS(other_full(), doctest::Contains("rank 1 has call #5: redistribute R,S(1) -> R,R"),
                       dm::mesh_error);
  const auto other_distribute = [&] {
    return r == 7 ? dm::distribute(mesh, cols{}, ext, full, out) : dm::distribute(mesh, rows{}, ext, full, in);
  };
  CHECK_THROWS_WITH_AS(other_distribute(), doctest::Contains("rank 7 has call #6: redistribute R,R -> R,S(1)"),
                       dm::mesh_error);
  for (std::size_t x = 0; x < in.size(); ++x) in[x] = rows_block(r, x);
  dm::redistribute(mesh, rows{}, cols{}, ext, in, out);  // and the mesh still works
  for (std::size_t x = 0; x < out.size(); ++x) CHECK(out[x] == cols_block(r, x));
}

TEST_CASE("no_call_check (per call) and options.check_sharding_calls = false: no agreement, values right; a rank "
          "whose option differs is refused at init") {
  if (test::world_size() != 8) return test::skip("a mesh of 8 ranks");
  using rows = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>>;
  using cols = dm::sharding<mesh24, dm::on<"tp", dm::shard<1>>>;
  const dm::extents<8, 8> ext;
  const auto run = [&](const auto& mesh, auto... no_check) {
    const int r = mesh.position();
    std::vector<double> in(32), out(16), full(64);
    for (std::size_t x = 0; x < in.size(); ++x) in[x] = rows_block(r, x);
    const std::uint64_t before = mesh.flight_record().recorded;
    dm::redistribute(mesh, rows{}, cols{}, ext, in, out, no_check...);  // an all_to_allv over tp
    for (std::size_t x = 0; x < out.size(); ++x) CHECK(out[x] == cols_block(r, x));
    dm::full_tensor(mesh, rows{}, ext, in, full, no_check...);
    for (std::size_t x = 0; x < full.size(); ++x) CHECK(full[x] == static_cast<double>(x));
    dm::distribute(mesh, cols{}, ext, full, out, no_check...);
    for (std::size_t x = 0; x < out.size(); ++x) CHECK(out[x] == cols_block(r, x));
    std::string steps;
    for (const std::string& c : calls_after(mesh, before)) steps += c + "; ";
    return steps;
  };
  const auto mesh = dm::init_device_mesh(dm::mpi::world(), mesh24{});
  const std::string steps = "all_to_allv on dp; all_to_allv on dp; ";  // distribute: local steps alone
  CHECK(run(mesh, dm::no_call_check) == steps);  // the steps alone: the agreement is not recorded either way
  CHECK(run(mesh) == steps);
  // Only the three calls without no_call_check agreed: the next agreed call is #4 (#7 had all six
  // agreed; checked: with redistribute's no_call_check agreeing, this said #5).
  std::vector<double> in(32), out(16), quarter(8);
  const auto other_spec = [&] {
    using both = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<1>>>;
    if (mesh.position() == 3) return dm::redistribute(mesh, rows{}, both{}, ext, in, quarter);
    dm::redistribute(mesh, rows{}, cols{}, ext, in, out);
  };
  CHECK_THROWS_WITH_AS(other_spec(), doctest::Contains("rank 3 has call #4: "), dm::mesh_error);
  dm::device_mesh_options<dm::mpi::communicator> off;
  off.check_sharding_calls = false;
  CHECK(run(dm::init_device_mesh(dm::mpi::world(), mesh24{}, off)) == steps);
  dm::device_mesh_options<dm::mpi::communicator> odd;
  odd.check_sharding_calls = mesh.position() != 2;
  std::string refused;
  try {
    (void)dm::init_device_mesh(dm::mpi::world(), mesh24{}, odd);
  } catch (const dm::mesh_error& e) {
    refused = e.what();
  }
  CAPTURE(refused);
  CHECK(refused.find("rank 2: [mpi") != std::string::npos);
  CHECK(refused.find("no check_sharding_calls") != std::string::npos);
}

TEST_CASE("DEVMESH_CHECK_SHARDING_CALLS: 0 or 1, overriding the option; anything else is an error at init on every "
          "rank, naming it") {
  if (test::world_size() != 8) return test::skip("a mesh of 8 ranks");
  using rows = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>>;
  using both = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<1>>>;
  if (test::world_rank() == 3) ::setenv("DEVMESH_CHECK_SHARDING_CALLS", "yes", 1);  // one rank alone: agreed
  CHECK_THROWS_WITH_AS(dm::init_device_mesh(dm::mpi::world(), mesh24{}),
                       doctest::Contains("rank 3: devmesh: DEVMESH_CHECK_SHARDING_CALLS='yes' is not a switch: 0 (off) "
                                         "or 1 (on)"),
                       dm::mesh_error);
  ::setenv("DEVMESH_CHECK_SHARDING_CALLS", "1", 1);
  dm::device_mesh_options<dm::mpi::communicator> off;
  off.check_sharding_calls = false;
  auto mesh = dm::init_device_mesh(dm::mpi::world(), mesh24{}, off);
  ::unsetenv("DEVMESH_CHECK_SHARDING_CALLS");
  std::vector<double> in(32), out(mesh.position() == 4 ? 7 : 8);
  CHECK_THROWS_WITH_AS(dm::redistribute(mesh, rows{}, both{}, dm::extents<8, 8>{}, in, out),
                       doctest::Contains("rank 4: out has 7 elements"), dm::mesh_error);  // agreed: every rank throws
}

TEST_CASE("with the check mode, ranks whose links choose another plan throw on every rank, before any step") {
  if (test::world_size() != 8) return test::skip("a mesh of 8 ranks");
  dm::device_mesh_options<dm::mpi::communicator> o;
  o.check_collectives = true;
  auto uniform = dm::init_device_mesh(dm::mpi::world(), mesh24{}, o);
  if (uniform.position() == 3) o.links["dp"] = dm::link_cost::network(), o.links["tp"] = dm::link_cost::nvlink();
  auto mesh = dm::init_device_mesh(dm::mpi::world(), mesh24{}, o);  // rank 3's options differ
  // specs built at run time: planned by the links (a static pair's plan is the same constant everywhere)
  const auto summed = dm::parse_sharding("P(sum),P(sum)", mesh24{});
  const auto replicated = dm::parse_sharding("R,R", mesh24{});
  const dm::extents<256, 256> ext;
  std::vector<double> in(256 * 256, 1.0), out(256 * 256);
  const std::uint64_t before = mesh.flight_record().recorded;
  CHECK_THROWS_WITH_AS(dm::redistribute(mesh, summed, replicated, ext, in, out),
                       doctest::Contains("plan reduce_scatter(tp) all_reduce(dp) all_gather(tp)"), dm::mesh_error);
  CHECK(calls_after(mesh, before).size() <= 1);  // the agreement alone, no step
  dm::redistribute(uniform, summed, replicated, ext, in, out);  // alike links: it runs
  CHECK(out[0] == 8.0);
}

TEST_CASE("distribute (from every rank, from a root), full_tensor and check_from_local on every recorded target") {
  const meshes_of_this_case meshes;
  if (test::world_size() != 8) return test::skip("the recorded pairs are on meshes of 8 ranks");
  const json data = load(DEVMESH_PYTORCH_REDISTRIBUTE_JSON);
  int index = 0, checked = 0;
  for (const json& c : data["cases"].items) {
    CAPTURE(c["id"].str);
    const std::size_t ndim = c["mesh"]["shape"].items.size(), rank = c["tensor_shape"].items.size();
    if (ndim == 1) rank == 1 ? distribute_case<1, mesh1>(c, index, checked) : distribute_case<2, mesh1>(c, index, checked);
    if (ndim == 2) rank == 1 ? distribute_case<1, mesh2>(c, index, checked) : distribute_case<2, mesh2>(c, index, checked);
    if (ndim == 3) rank == 1 ? distribute_case<1, mesh3>(c, index, checked) : distribute_case<2, mesh3>(c, index, checked);
    ++index;
  }
  CHECK(checked == static_cast<int>(data["cases"].items.size()));
}

TEST_CASE("check_from_local: a rank's wrong block or another spec throws on every rank; distribute's misuse") {
  if (test::world_size() != 8) return test::skip("a mesh of 8 ranks");
  auto mesh = dm::init_device_mesh(dm::mpi::world(), mesh24{});
  using rows = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>>;
  using cols = dm::sharding<mesh24, dm::on<"tp", dm::shard<1>>>;
  const dm::extents<8, 8> ext;
  const int r = mesh.position();
  std::vector<float> block(r == 6 ? 31 : 32);
  CHECK_THROWS_WITH_AS(dm::check_from_local(mesh, rows{}, ext, block),
                       doctest::Contains("rank 6: the local block has 31 elements"), dm::mesh_error);
  block.resize(32);
  const auto other = [&] {
    if (r == 2) return dm::check_from_local(mesh, cols{}, ext, std::vector<float>(16));
    dm::check_from_local(mesh, rows{}, ext, block);
  };
  CHECK_THROWS_WITH_AS(other(), doctest::Contains("R,S(1)"), dm::mesh_error);
  dm::check_from_local(mesh, rows{}, ext, block);

  std::vector<float> full(64), local(32);
  CHECK_THROWS_WITH_AS(dm::distribute(mesh, rows{}, ext, full, local, 8), doctest::Contains("root index is not in [0, 8)"),
                       dm::mesh_error);
  std::vector<float> short_full(r == 3 ? 63 : 0);
  CHECK_THROWS_WITH_AS(dm::distribute(mesh, rows{}, ext, short_full, local, 3), doctest::Contains("in has 63 elements"),
                       dm::mesh_error);
}

TEST_CASE("the same pairs again and again, interleaved (what a thread keeps between calls): values right") {
  const meshes_of_this_case meshes;
  std::mt19937 rng(20261128);  // the same pairs on every rank
  int calls = 0;
  for_each_mesh_of(test::world_size(), [&](const auto& m) { calls += pairs_again(m, rng); });
  CHECK(calls > 0);
}

TEST_CASE("random pairs on every mesh of this world (1-, 2- and 3-D, size-1 dims): values equal the reference") {
  const meshes_of_this_case meshes;
  const int n = test::world_size();
  std::mt19937 rng(20261126);  // the same pairs on every rank
  int pairs = 0;
  const auto shapes = [&](const auto& m) {
    pairs += random_pairs<1>(m, {7}, 40, rng);
    pairs += random_pairs<2>(m, {5, 3}, 40, rng);
    pairs += random_pairs<2>(m, {0, 4}, 10, rng);
    pairs += random_pairs<2>(m, {2, 9}, 20, rng);
  };
  for_each_mesh_of(n, shapes);
  if (test::world_rank() == 0) MESSAGE(pairs << " random pairs on " << n << " ranks");
  CHECK(pairs > 0);
}

// ---- issue 41, item 5 ---------------------------------------------------------------------
// bool elements move as bytes: in bool arrays (std::array, unique_ptr<bool[]>) they redistribute
// like any type, Partial(max) (a logical or) included; std::vector<bool> is a compile error
// (compile_fail.redistribute_misuse_4).
TEST_CASE("bool elements redistribute: S(0),R -> R,S(1) -> R,R and P(max) -> R, values right") {
  if (test::world_size() != 8) return test::skip("a mesh of 8 ranks");
  auto mesh = dm::init_device_mesh(dm::mpi::world(), mesh24{});
  using rows = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>>;
  using cols = dm::sharding<mesh24, dm::on<"tp", dm::shard<1>>>;
  using whole = dm::sharding<mesh24>;
  using any = dm::sharding<mesh24, dm::on<"tp", dm::partial<dm::reduction::max>>>;
  const dm::extents<8, 8> ext;
  const int r = mesh.position();
  const auto flag = [](dm::tensor_index x) { return x % 3 == 0 || x % 7 == 1; };
  std::array<bool, 32> in{};
  const auto mine = flat_indices(rows{}, ext, r);
  for (std::size_t i = 0; i < mine.size(); ++i) in[i] = flag(mine[i]);
  std::array<bool, 16> mid{};
  dm::redistribute(mesh, rows{}, cols{}, ext, in, mid);
  const auto held = flat_indices(cols{}, ext, r);
  for (std::size_t i = 0; i < held.size(); ++i) CHECK(mid[i] == flag(held[i]));
  const auto all = std::make_unique<bool[]>(64);
  dm::redistribute(mesh, cols{}, whole{}, ext, std::span<const bool>(mid), std::span<bool>(all.get(), 64));
  for (dm::tensor_index x = 0; x < 64; ++x) CHECK(all[static_cast<std::size_t>(x)] == flag(x));
  // Partial(max) over tp: element x is true on the rank whose tp index is x % 4, so the or is
  // true everywhere but where x % 4 names no rank of the group (never: tp has 4 ranks)
  // except where x % 5 == 0, false on every rank.
  std::array<bool, 64> partial{}, reduced{};
  for (dm::tensor_index x = 0; x < 64; ++x)
    partial[static_cast<std::size_t>(x)] = x % 5 != 0 && x % 4 == mesh.local_rank<"tp">();
  dm::redistribute(mesh, any{}, whole{}, ext, partial, reduced);
  for (dm::tensor_index x = 0; x < 64; ++x) CHECK(reduced[static_cast<std::size_t>(x)] == (x % 5 != 0));
}

// A NaN that one rank holds in a Partial(max) or Partial(min) tensor is in the result on every
// rank, as torch.maximum and torch.minimum give (MPI_MAX lost it unless rank 0 held it).
TEST_CASE("Partial(max) and Partial(min): a NaN on any rank of the group is in every rank's result") {
  if (test::world_size() != 8) return test::skip("a mesh of 8 ranks");
  auto mesh = dm::init_device_mesh(dm::mpi::world(), mesh24{});
  using high = dm::sharding<mesh24, dm::on<"tp", dm::partial<dm::reduction::max>>>;
  using low = dm::sharding<mesh24, dm::on<"dp", dm::partial<dm::reduction::min>>>;
  using whole = dm::sharding<mesh24>;
  using halves = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>>;
  const dm::extents<8, 8> ext;
  const int r = mesh.position(), tp = mesh.local_rank<"tp">(), dp = mesh.local_rank<"dp">();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int holder = 0; holder < 4; ++holder) {
    CAPTURE(holder);
    // element 9: NaN on the tp rank `holder`; element 10: NaN nowhere (the max of the ranks)
    std::vector<double> p(64), out(64);
    for (dm::tensor_index x = 0; x < 64; ++x) p[static_cast<std::size_t>(x)] = static_cast<double>(x + tp);
    if (tp == holder) p[9] = nan;
    dm::redistribute(mesh, high{}, whole{}, ext, p, out);  // an all_reduce over tp
    CHECK(std::isnan(out[9]));
    CHECK(out[10] == 13.0);
    // Partial(min) over dp -> S(0) over dp: a reduce_scatter; the NaN in both halves on one dp rank.
    std::vector<double> q(64), half(32);
    for (dm::tensor_index x = 0; x < 64; ++x) q[static_cast<std::size_t>(x)] = static_cast<double>(x - dp);
    if (dp == holder % 2) q[3] = q[35] = nan;
    dm::redistribute(mesh, low{}, halves{}, ext, q, half);
    CHECK(std::isnan(half[3]));
    CHECK(half[4] == static_cast<double>(32 * dp + 4 - 1));
  }
  (void)r;
}

// No message is prefixed twice ("devmesh: devmesh:"): the paths that describe a call
// ("devmesh: redistribute ...") and then name a step after it.
TEST_CASE("no message says devmesh: devmesh:") {
  if (test::world_size() != 8) return test::skip("a mesh of 8 ranks");
  dm::device_mesh_options<dm::mpi::communicator> o;
  o.check_collectives = true;
  auto mesh = dm::init_device_mesh(dm::mpi::world(), mesh24{}, o);
  using rows = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>>;
  using cols = dm::sharding<mesh24, dm::on<"tp", dm::shard<1>>>;
  using both = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<1>>>;
  const dm::extents<8, 8> ext;
  const int r = mesh.position();
  std::vector<std::string> messages;
  const auto keep = [&](auto&& f) {
    try {
      f();
      messages.push_back("(no exception)");
    } catch (const std::exception& e) {
      messages.push_back(e.what());
    }
  };
  std::vector<double> in(32), out(r == 5 ? 15 : 16), quarter(8);
  keep([&] { dm::redistribute(mesh, rows{}, cols{}, ext, in, out); });  // a rank's wrong size
  out.resize(16);
  keep([&] {  // a rank's other spec
    if (r == 3) return dm::redistribute(mesh, rows{}, both{}, ext, in, quarter);
    dm::redistribute(mesh, rows{}, cols{}, ext, in, out);
  });
  std::vector<float> block(r == 6 ? 31 : 32);
  keep([&] { dm::check_from_local(mesh, rows{}, ext, block); });
  std::vector<float> full(64), local(32);
  keep([&] { dm::distribute(mesh, rows{}, ext, full, local, 8); });
  keep([&] { (void)dm::dextents<2>(std::int64_t{1} << 62, 4); });
  for (const auto& m : messages) {
    CAPTURE(m);
    CHECK(m.rfind("devmesh: ", 0) == 0);
    CHECK(m.find("devmesh: devmesh:") == std::string::npos);
  }
}
