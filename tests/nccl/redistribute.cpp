// tests/nccl/redistribute.cpp: dm::redistribute, distribute and full_tensor on the NCCL
// backend over the double: blocks in device memory (cudaMalloc), every step on the test's own
// stream, no CUDA_LAUNCH_BLOCKING, so the double runs each copy, allocation and collective in
// stream order, asynchronously, as a GPU would (a step that read a block before the work
// writing it had run would see stale values). Every recorded PyTorch pair on 8 ranks and
// random pairs on every mesh of 1, 2, 4 and 8 ranks, checked against the single-process
// reference; distribute from every rank and from a root; what must be refused is.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <devmesh/devmesh.hpp>
#include <devmesh/redistribute.hpp>

#include "../mpi/mpi_doctest.hpp"
#include "../sharding/random_specs.hpp"
#include "../sharding/redistribute_values.hpp"
#include "common.hpp"

namespace nccl_redistribute_test {  // one per file: a unity TU holds several files

namespace dm = devmesh;
using devmesh_test::flat_indices;
using devmesh_test::json;
using devmesh_test::mesh1;
using devmesh_test::mesh2;
using devmesh_test::mesh3;
using devmesh_test::source;
using devmesh_test::source_of;

/// A block in device memory.
template <class T>
class device_array {
  T* p_ = nullptr;
  std::size_t n_ = 0;

 public:
  explicit device_array(std::size_t n) : n_(n) {
    void* p = nullptr;
    REQUIRE(cudaMalloc(&p, n * sizeof(T)) == cudaSuccess);
    p_ = static_cast<T*>(p);
  }
  /// n copies of `fill` (NaN: an element redistribute does not write fails the comparison).
  device_array(std::size_t n, T fill) : device_array(std::vector<T>(n, fill)) {}
  explicit device_array(const std::vector<T>& v) : device_array(v.size()) {
    REQUIRE(cudaMemcpy(p_, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  ~device_array() { cudaFree(p_); }
  std::span<T> span() { return {p_, n_}; }
  std::span<const T> cspan() const { return {p_, n_}; }
  /// The values, once the stream got there.
  std::vector<T> to_host(cudaStream_t s) const {
    std::vector<T> v(n_);
    REQUIRE(cudaMemcpyAsync(v.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost, s) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    return v;
  }
};

struct test_stream {
  cudaStream_t s = nullptr;
  test_stream() { REQUIRE(cudaStreamCreate(&s) == cudaSuccess); }
  test_stream(const test_stream&) = delete;
  test_stream& operator=(const test_stream&) = delete;
  ~test_stream() { cudaStreamDestroy(s); }
};

using nccl_comm = dm::nccl::communicator;

/// The world and one device mesh per shape, made on first use by every rank alike, freed at
/// the end of the test case (before MPI_Finalize).
struct meshes {
  nccl_comm world = dm::nccl::world(dm::mpi::world());
  std::map<std::vector<int>, std::shared_ptr<void>> made;
  template <class Mesh>
  const dm::device_mesh<Mesh, nccl_comm>& of(const Mesh& m) {
    std::vector<int> key{Mesh::ndim};
    for (int d = 0; d < Mesh::ndim; ++d) key.push_back(m.size(d));
    auto& slot = made[key];
    if (!slot) slot = std::make_shared<dm::device_mesh<Mesh, nccl_comm>>(dm::init_device_mesh(world, m));
    return *static_cast<const dm::device_mesh<Mesh, nccl_comm>*>(slot.get());
  }
};

template <class Mesh, class Spec>
bool has_partial(const Spec& spec) {
  for (int d = 0; d < Mesh::ndim; ++d)
    if (spec.table().at[d].is_partial()) return true;
  return false;
}

/// src -> dst on device blocks, then full_tensor: the tensor the source stands for, on every
/// rank; a target without Partial also block by block.
template <class Mesh, class DM, class S1, class S2, class E>
void check_pair(const DM& mesh, const Mesh& m, const S1& src, const S2& dst, const E& ext, cudaStream_t s) {
  CAPTURE(dm::to_string(src));
  CAPTURE(dm::to_string(dst));
  const int rank = mesh.position();
  const source in = source_of(m, src, ext, rank);
  const device_array<double> d_in(in.block);
  device_array<double> d_out(static_cast<std::size_t>(dst.local_size(ext, rank)), std::nan(""));
  dm::redistribute(mesh, src, dst, ext, d_in.cspan(), d_out.span(), s);
  device_array<double> d_whole(static_cast<std::size_t>(ext.size()));
  dm::full_tensor(mesh, dst, ext, d_out.cspan(), d_whole.span(), s);
  const std::vector<double> whole = d_whole.to_host(s);
  for (std::size_t x = 0; x < whole.size(); ++x)
    REQUIRE(whole[x] == doctest::Approx(in.full(static_cast<dm::tensor_index>(x))));
  if (has_partial<Mesh>(dst)) return;
  const std::vector<double> out = d_out.to_host(s);
  const auto at = flat_indices(dst, ext, rank);
  for (std::size_t k = 0; k < out.size(); ++k) REQUIRE(out[k] == doctest::Approx(in.full(at[k])));
}

template <int R, class Mesh>
void recorded_pair(meshes& made, const json& c, cudaStream_t s) {
  std::vector<int> sizes;
  const Mesh m = devmesh_test::mesh_of<Mesh>(c, sizes);
  std::array<dm::tensor_index, R> shape{};
  for (int t = 0; t < R; ++t) shape[t] = static_cast<dm::tensor_index>(c["tensor_shape"].items[t].num);
  std::vector<devmesh_test::parsed> ps, pd;
  for (const json& p : c["src"].items) ps.push_back(devmesh_test::parse_placement(p.str));
  for (const json& p : c["dst"].items) pd.push_back(devmesh_test::parse_placement(p.str));
  check_pair(made.of(m), m, devmesh_test::spec_of(m, ps, sizes), devmesh_test::spec_of(m, pd, sizes),
             dm::dextents<R>::from_array(shape), s);
}

/// The recorded target reached by distribute from every rank's copy and from one root, on
/// device blocks: the same blocks, the tensor's values.
template <int R, class Mesh>
void distribute_case(meshes& made, const json& c, int root, cudaStream_t s) {
  std::vector<int> sizes;
  const Mesh m = devmesh_test::mesh_of<Mesh>(c, sizes);
  const auto& mesh = made.of(m);
  std::array<dm::tensor_index, R> shape{};
  for (int t = 0; t < R; ++t) shape[t] = static_cast<dm::tensor_index>(c["tensor_shape"].items[t].num);
  const auto ext = dm::dextents<R>::from_array(shape);
  std::vector<devmesh_test::parsed> pd;
  for (const json& p : c["dst"].items) pd.push_back(devmesh_test::parse_placement(p.str));
  const auto spec = devmesh_test::spec_of(m, pd, sizes);
  const int rank = mesh.position();
  std::vector<double> full(static_cast<std::size_t>(ext.size()));
  for (std::size_t x = 0; x < full.size(); ++x) full[x] = static_cast<double>(x);
  const device_array<double> d_full(full), d_none(0);
  const auto n = static_cast<std::size_t>(spec.local_size(ext, rank));
  device_array<double> every(n), rooted(n);
  dm::distribute(mesh, spec, ext, d_full.cspan(), every.span(), s);
  dm::distribute(mesh, spec, ext, rank == root ? d_full.cspan() : d_none.cspan(), rooted.span(), root, s);
  const std::vector<double> a = every.to_host(s), b = rooted.to_host(s);
  CHECK(a == b);
  if (has_partial<Mesh>(spec)) return;
  const auto at = flat_indices(spec, ext, rank);
  for (std::size_t k = 0; k < a.size(); ++k) REQUIRE(a[k] == static_cast<double>(at[k]));
}

using mesh24 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

TEST_CASE("every recorded pair on 8 ranks, on device blocks and a stream: values equal the reference") {
  if (nccl_test::world_size() != 8) return test::skip("the recorded pairs are on meshes of 8 ranks");
  meshes made;
  const test_stream stream;
  const json data = devmesh_test::load(DEVMESH_PYTORCH_REDISTRIBUTE_JSON);
  int pairs = 0, index = 0;
  for (const json& c : data["cases"].items) {
    CAPTURE(c["id"].str);
    const std::size_t ndim = c["mesh"]["shape"].items.size(), rank = c["tensor_shape"].items.size();
    if (ndim == 1) rank == 1 ? recorded_pair<1, mesh1>(made, c, stream.s) : recorded_pair<2, mesh1>(made, c, stream.s);
    if (ndim == 2) rank == 1 ? recorded_pair<1, mesh2>(made, c, stream.s) : recorded_pair<2, mesh2>(made, c, stream.s);
    if (ndim == 3) rank == 1 ? recorded_pair<1, mesh3>(made, c, stream.s) : recorded_pair<2, mesh3>(made, c, stream.s);
    if (index++ % 4 == 0) {  // distribute on every fourth target
      if (ndim == 1) rank == 1 ? distribute_case<1, mesh1>(made, c, index % 8, stream.s)
                               : distribute_case<2, mesh1>(made, c, index % 8, stream.s);
      if (ndim == 2) rank == 1 ? distribute_case<1, mesh2>(made, c, index % 8, stream.s)
                               : distribute_case<2, mesh2>(made, c, index % 8, stream.s);
      if (ndim == 3) rank == 1 ? distribute_case<1, mesh3>(made, c, index % 8, stream.s)
                               : distribute_case<2, mesh3>(made, c, index % 8, stream.s);
    }
    ++pairs;
  }
  CHECK(pairs == static_cast<int>(data["cases"].items.size()));
}

TEST_CASE("random pairs on every mesh of this world, on device blocks: values equal the reference") {
  meshes made;
  const test_stream stream;
  std::mt19937 rng(20261127);  // the same pairs on every rank
  int pairs = 0;
  const auto on = [&](const auto& m) {
    const auto& mesh = made.of(m);
    const auto run = [&](auto ext, int count) {
      for (int i = 0; i < count; ++i, ++pairs) {
        constexpr int R = decltype(ext)::rank_value;
        const auto src = devmesh_test::random_spec<R>(m, rng);
        const auto dst = devmesh_test::random_spec<R>(m, rng);
        check_pair(mesh, m, src, dst, ext, stream.s);
      }
    };
    run(dm::dextents<1>(7), 8);
    run(dm::dextents<2>(5, 3), 8);
    run(dm::dextents<2>(2, 9), 6);
    run(dm::dextents<2>(0, 4), 2);
  };
  devmesh_test::for_each_mesh_of(nccl_test::world_size(), on);
  CHECK(pairs > 0);
}

TEST_CASE("static specs, float and int64 on device blocks; an integer average and a call in a group refused") {
  if (nccl_test::world_size() != 8) return test::skip("a mesh of 8 ranks");
  auto world = dm::nccl::world(dm::mpi::world());
  auto mesh = dm::init_device_mesh(world, mesh24{});
  const test_stream stream;
  using rows_twice = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<0>>>;
  using rows_on_tp = dm::sharding<mesh24, dm::on<"tp", dm::shard<0>>>;
  using sums = dm::sharding<mesh24, dm::on<"dp", dm::partial<dm::reduction::sum>>>;
  using averages = dm::sharding<mesh24, dm::on<"dp", dm::partial<dm::reduction::avg>>>;
  using cols_on_tp = dm::sharding<mesh24, dm::on<"tp", dm::shard<1>>>;
  const dm::extents<13, 5> ext;  // uneven, an empty block on the last tp rank
  const int r = mesh.position();
  std::vector<float> in;
  for (auto x : flat_indices(rows_twice{}, ext, r)) in.push_back(static_cast<float>(x));
  const device_array<float> d_in(in);
  device_array<float> d_out(static_cast<std::size_t>(rows_on_tp{}.local_size(ext, r)));
  dm::redistribute(mesh, rows_twice{}, rows_on_tp{}, ext, d_in.cspan(), d_out.span(), stream.s);
  const auto want = flat_indices(rows_on_tp{}, ext, r);
  const std::vector<float> out = d_out.to_host(stream.s);
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i] == static_cast<float>(want[i]));

  std::vector<std::int64_t> g(65);
  for (std::int64_t x = 0; x < 65; ++x) g[static_cast<std::size_t>(x)] = x * (1 + mesh.local_rank<"dp">());
  const device_array<std::int64_t> d_g(g);
  device_array<std::int64_t> d_cols(static_cast<std::size_t>(cols_on_tp{}.local_size(ext, r)));
  dm::redistribute(mesh, sums{}, cols_on_tp{}, ext, d_g.cspan(), d_cols.span(), stream.s);
  const auto at = flat_indices(cols_on_tp{}, ext, r);
  const std::vector<std::int64_t> cols = d_cols.to_host(stream.s);
  for (std::size_t i = 0; i < cols.size(); ++i) CHECK(cols[i] == 3 * at[i]);

  CHECK_THROWS_WITH_AS(dm::redistribute(mesh, averages{}, cols_on_tp{}, ext, d_g.cspan(), d_cols.span(), stream.s),
                       doctest::Contains("a Partial(avg) of an integer type on the NCCL backend"), dm::mesh_error);
  {
    dm::nccl::group in_group;
    CHECK_THROWS_WITH_AS(dm::redistribute(mesh, sums{}, cols_on_tp{}, ext, d_g.cspan(), d_cols.span(), stream.s),
                         doctest::Contains("redistribute inside an NCCL group"), dm::comm_error);
  }
  device_array<std::int64_t> short_out(d_cols.cspan().size() + 1);
  CHECK_THROWS_WITH_AS(dm::redistribute(mesh, sums{}, cols_on_tp{}, ext, d_g.cspan(), short_out.span(), stream.s),
                       doctest::Contains("out has"), dm::mesh_error);
  dm::redistribute(mesh, sums{}, cols_on_tp{}, ext, d_g.cspan(), d_cols.span(), stream.s);  // still works
  CHECK(d_cols.to_host(stream.s) == cols);
  REQUIRE(cudaStreamSynchronize(stream.s) == cudaSuccess);
}

}  // namespace nccl_redistribute_test
