// devmesh against real PyTorch 2.15 DTensor: every case of tests/sharding/data/
// pytorch_2.15_sharding.json (recorded by scripts/pytorch-reference: 1-, 2- and 3-D meshes of
// 8 ranks, tensor ranks 0-3, uneven and empty shards, nested sharding, _StridedShard, Partial)
// built as a dynamic spec from PyTorch's placements, as a parser would, and compared rank by
// rank: coordinate, local_shape and global_offset (compute_local_shape_and_global_offset), and
// the local values distribute_tensor put there (the exact index map, global_index: the global
// tensor is arange(numel), a Partial(sum) holds it divided by its group's size).
// _StridedShard placements become a shard order by PyTorch's own inverse
// (DTensorSpec._maybe_convert_StridedShard_to_shard_order); PyTorch's IndexError for a
// tensor dim out of range is devmesh's mesh_error.
#include "pytorch_data.hpp"

#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace dm = devmesh;
using namespace devmesh_test;

namespace {

decoding_counts decoding;  // over every case

// ---- one case ------------------------------------------------------------------------------
int compared_ranks = 0;

template <int R, class Mesh>
void compare_ranks(const Mesh& mesh, const json& c, const std::vector<parsed>& ps, const std::vector<int>& sizes) {
  std::array<dm::tensor_index, R> shape{};
  for (int t = 0; t < R; ++t) shape[t] = static_cast<dm::tensor_index>(c["tensor_shape"].items[t].num);
  const auto ext = dm::dextents<R>::from_array(shape);
  const auto spec = spec_of(mesh, ps, sizes, &decoding);
  spec.check(ext);  // PyTorch's IndexError (a tensor dim out of range) is a mesh_error here
  double scale = 1;  // Partial(sum): distribute_tensor divides by the group's size
  for (int d = 0; d < static_cast<int>(ps.size()); ++d)
    if (ps[d].kind == 'P' && ps[d].op == dm::reduction::sum) scale /= sizes[d];
  for (const json& r : c["ranks"].items) {
    const int rank = static_cast<int>(r["rank"].num);
    const auto coord = mesh.coordinate(rank);
    const auto local = spec.local_shape(ext, rank);
    const auto offset = spec.global_offset(ext, rank);
    for (int d = 0; d < Mesh::ndim; ++d) CHECK(coord[d] == static_cast<int>(r["coordinate"].items[d].num));
    for (int t = 0; t < R; ++t) {
      CHECK(local[t] == static_cast<dm::tensor_index>(r["local_shape"].items[t].num));
      CHECK(offset[t] == static_cast<dm::tensor_index>(r["global_offset"].items[t].num));
    }
    const auto& values = r["local_values"].items;
    REQUIRE(static_cast<dm::tensor_index>(values.size()) == spec.local_size(ext, rank));
    for (std::size_t i = 0; i < values.size(); ++i) {  // local row-major index -> global flat index
      dm::tensor_index rest = static_cast<dm::tensor_index>(i), flat = 0, stride = 1;
      for (int t = R - 1; t >= 0; --t) {
        flat += spec.global_index(ext, rank, t, rest % local[t]) * stride;
        rest /= local[t], stride *= shape[t];
      }
      CHECK(std::abs(values[i].num - static_cast<double>(flat) * scale) < 1e-9);
    }
    ++compared_ranks;
  }
}

template <class Mesh>
void compare_case(const json& c) {
  std::vector<int> sizes;
  const Mesh mesh = mesh_of<Mesh>(c, sizes);
  std::vector<parsed> ps;
  for (const json& p : c["placements"].items) ps.push_back(parse_placement(p.str));
  switch (c["tensor_shape"].items.size()) {
    case 0: return compare_ranks<0>(mesh, c, ps, sizes);
    case 1: return compare_ranks<1>(mesh, c, ps, sizes);
    case 2: return compare_ranks<2>(mesh, c, ps, sizes);
    default: return compare_ranks<3>(mesh, c, ps, sizes);
  }
}

}  // namespace

TEST_SUITE("sharding_pytorch") {
  TEST_CASE("every recorded case: shapes, offsets and values as PyTorch 2.15 has them") {
    const json data = load(DEVMESH_PYTORCH_SHARDING_JSON);
    int compared = 0, errors_matched = 0, not_expressible = 0;
    for (const json& c : data["cases"].items) {
      CAPTURE(c["id"].str);
      const std::size_t ndim = c["mesh"]["shape"].items.size();
      if (c.has("error")) {
        const std::string& what = c["error"].str;
        const bool length_mismatch = what.find("must have the same length") != std::string::npos;
        const bool mixed_partial = what.find("Mixed Partial") != std::string::npos;
        if (length_mismatch || mixed_partial) {  // named placements cannot say the first; the spec layer allows the second
          ++not_expressible;
          continue;
        }
        REQUIRE(what.rfind("IndexError", 0) == 0);  // a tensor dim out of range
        const auto run = [&] { ndim == 1 ? compare_case<mesh1>(c) : ndim == 2 ? compare_case<mesh2>(c) : compare_case<mesh3>(c); };
        CHECK_THROWS_AS(run(), dm::mesh_error);
        ++errors_matched;
        continue;
      }
      ndim == 1 ? compare_case<mesh1>(c) : ndim == 2 ? compare_case<mesh2>(c) : compare_case<mesh3>(c);
      ++compared;
    }
    MESSAGE(compared << " cases (" << compared_ranks << " ranks) compared, " << errors_matched
                     << " PyTorch errors matched, " << not_expressible << " not expressible by name; "
                     << decoding.decoded_orders << " tensor dims as shard orders, " << decoding.kept_split_factors
                     << " with PyTorch's split factors");
    CHECK(decoding.decoded_orders > 0);
    CHECK(decoding.kept_split_factors > 0);
    CHECK(compared >= 780);
    CHECK(errors_matched == 4);
  }
}
