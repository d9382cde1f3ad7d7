// The redistribute planner (sharding/plan.hpp, plan_cost.hpp) against real PyTorch 2.15: every
// pair of tests/sharding/data/pytorch_2.15_redistribute.json (1-, 2- and 3-D meshes of 8
// ranks, even, uneven and empty shards, Partial of each op, _StridedShard), planned by devmesh
// and run on one process by a simulator that holds every rank's block and does what each step
// says, refusing a step its kind cannot do (a local step that needs data it lacks, a gather
// whose result is not the group's blocks, a reduction over ranks that do not hold the same
// elements). Then, per pair: the values after equal PyTorch's (or, for a Partial target, reduce
// to the same tensor); planned by bytes, no rank sends more bytes than under PyTorch's plan;
// planned by modelled time (issue 42: uniform links and a slow dim, small and large tensors),
// no plan is slower than PyTorch's under the same model, nor sends more bytes in all; without
// Partial placements, the bytes are within 1.25x of the lower bound (each rank receives only
// what its new block lacks); no pair moves less than a bound on any plan (any_plan_bound).
// The pairs PyTorch refuses (R -> P) are planned and checked too. Random and exhaustive pairs
// are planned by bytes and by random models, and simulated; static plans are pinned.
#include "pytorch_data.hpp"
#include "random_specs.hpp"

#include <devmesh/sharding/plan.hpp>
#include <devmesh/sharding/plan_cost.hpp>
#include <devmesh/sharding/plan_text.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace dm = devmesh;
using namespace devmesh_test;

namespace {

// ---- every rank's block as values on the global tensor (NaN: not held) -----------------------
using values = std::vector<std::vector<double>>;  // [rank][flat global index]
constexpr double none = std::numeric_limits<double>::quiet_NaN();

template <class Spec, class E, class F>
void for_each_held(const Spec& spec, const E& ext, int rank, F f) {  // f(local row-major index, flat index)
  const auto shape = spec.local_shape(ext, rank);
  dm::tensor_index n = 1;
  for (auto e : shape) n *= e;
  for (dm::tensor_index i = 0; i < n; ++i) {
    dm::tensor_index rest = i, flat = 0, stride = 1;
    for (int t = E::rank_value - 1; t >= 0; --t) {
      flat += spec.global_index(ext, rank, t, rest % shape[t]) * stride;
      rest /= shape[t], stride *= ext.extent(t);
    }
    f(i, flat);
  }
}

double reduce(dm::reduction op, const std::vector<double>& v) {
  double r = v[0];
  for (std::size_t i = 1; i < v.size(); ++i)
    r = op == dm::reduction::min ? std::min(r, v[i]) : op == dm::reduction::max ? std::max(r, v[i]) : r + v[i];
  return op == dm::reduction::avg ? r / static_cast<double>(v.size()) : r;
}

/// Index of `rank` in the group of the dims where `t` is Partial (row-major), or 0.
template <class Mesh, int N>
int partial_index(const Mesh& m, const dm::placement_table<N>& t, int rank) {
  int i = 0;
  for (int d = 0; d < Mesh::ndim; ++d)
    if (t.at[d].is_partial()) i = i * m.size(d) + m.coordinate_unchecked(rank, d);
  return i;
}

/// The source blocks as the recorder made them: the row-major index, times (1 + the rank's
/// index in the group of the Partial dims).
template <class Mesh, class Spec, class E>
values source_values(const Mesh& m, const Spec& src, const E& ext, dm::tensor_index numel) {
  values v(m.size(), std::vector<double>(numel, none));
  for (int r = 0; r < m.size(); ++r) {
    const double scale = 1 + partial_index(m, src.table(), r);
    for_each_held(src, ext, r, [&](dm::tensor_index, dm::tensor_index x) { v[r][x] = static_cast<double>(x) * scale; });
  }
  return v;
}

/// The tensor that blocks v under table t stand for: each element reduced over the Partial
/// dims' group of a rank that holds it.
template <class Mesh, int N>
std::vector<double> reduced(const Mesh& m, const dm::placement_table<N>& t, const values& v) {
  unsigned partial = 0;
  dm::reduction op = dm::reduction::sum;
  for (int d = 0; d < Mesh::ndim; ++d)
    if (t.at[d].is_partial()) partial |= 1u << d, op = t.at[d].op;
  std::vector<double> out(v[0].size(), none);
  for (std::size_t x = 0; x < out.size(); ++x)
    for (int r = 0; r < m.size() && std::isnan(out[x]); ++r) {
      if (std::isnan(v[r][x])) continue;
      std::vector<double> parts;
      dm::detail::for_each_in_group(m, partial, r, [&](int, int q) { parts.push_back(v[q][x]); });
      out[x] = reduce(op, parts);
    }
  return out;
}

/// True if step s leaves every rank with the block it had, nothing reduced or made Partial (a
/// table may differ in how it writes the same cuts): a step a plan should not have.
template <class Mesh, int N, class E>
bool changes_nothing(const Mesh& m, const dm::plan_step<N>& s, const E& ext) {
  for (int d = 0; d < Mesh::ndim; ++d)
    if (s.before.at[d].is_partial() != s.after.at[d].is_partial() || s.before.at[d].op != s.after.at[d].op)
      return false;
  const auto before = dm::detail::spec_of_table(m, s.before), after = dm::detail::spec_of_table(m, s.after);
  for (int r = 0; r < m.size(); ++r) {
    std::vector<dm::tensor_index> a, b;
    for_each_held(before, ext, r, [&](dm::tensor_index, dm::tensor_index x) { a.push_back(x); });
    for_each_held(after, ext, r, [&](dm::tensor_index, dm::tensor_index x) { b.push_back(x); });
    if (a != b) return false;
  }
  return true;
}

/// One step on every rank, refusing what its kind cannot do. Returns false (with a message) if so.
template <class Mesh, int N, class E>
bool simulate(const Mesh& m, const dm::plan_step<N>& s, const E& ext, values& v, std::string& why) {
  const auto before = dm::detail::spec_of_table(m, s.before), after = dm::detail::spec_of_table(m, s.after);
  values out(v.size(), std::vector<double>(v[0].size(), none));
  for (int r = 0; r < m.size(); ++r) {
    std::vector<int> group;
    dm::detail::for_each_in_group(m, s.group, r, [&](int, int q) { group.push_back(q); });
    bool ok = true;
    for_each_held(after, ext, r, [&](dm::tensor_index, dm::tensor_index x) {
      const bool mine = !std::isnan(v[r][x]);
      switch (s.kind) {
        case dm::step_kind::local: {
          bool zero = false;  // a Partial target: zeros outside the block, or off the coordinate 0
          bool may_zero = false;
          for (int d = 0; d < Mesh::ndim; ++d) {
            if (!s.after.at[d].is_partial() || s.before.at[d].is_partial()) continue;
            may_zero = may_zero || s.after.at[d].op == dm::reduction::sum;
            zero = zero || (s.after.at[d].op == dm::reduction::sum && s.before.at[d].is_replicate() &&
                            m.coordinate_unchecked(r, d) != 0);
          }
          if (!mine && !may_zero) ok = false, why = "a local step needs an element the rank does not hold";
          out[r][x] = (!mine || zero) ? 0.0 : v[r][x];
          break;
        }
        case dm::step_kind::all_reduce:
        case dm::step_kind::reduce_scatter: {
          std::vector<double> parts;
          int holders = 0;
          for (int q : group) holders += !std::isnan(v[q][x]), parts.push_back(v[q][x]);
          if (holders == 0 && s.kind == dm::step_kind::reduce_scatter && dm::detail::zero_filled_dims(s) != 0) {
            out[r][x] = 0.0;  // the new block's element that the group's block lacks: a zero
            break;
          }
          if (holders != static_cast<int>(group.size()))
            ok = false, why = "a reduction over a rank that does not hold the element";
          out[r][x] = reduce(s.op, parts);
          break;
        }
        case dm::step_kind::all_gather:
        case dm::step_kind::all_to_all: {
          int holders = 0;
          for (int q : group)
            if (!std::isnan(v[q][x])) out[r][x] = v[q][x], ++holders;
          if (holders == 0 && dm::detail::zero_filled_dims(s) != 0) out[r][x] = 0.0;  // held by none: a zero
          else if (holders != 1)
            ok = false, why = "an exchanged element held by " + std::to_string(holders) + " ranks of the group";
          break;
        }
      }
    });
    if (s.kind == dm::step_kind::local)  // a step that makes a dim Partial(sum) keeps every element it held
      for (int d = 0; d < Mesh::ndim; ++d)  // (redistribute's run_local: it slices nothing then)
        if (s.after.at[d].is_partial() && !s.before.at[d].is_partial() && s.after.at[d].op == dm::reduction::sum)
          for_each_held(before, ext, r, [&](dm::tensor_index, dm::tensor_index x) {
            if (std::isnan(out[r][x])) ok = false, why = "a block made Partial loses an element it held";
          });
    if (s.kind == dm::step_kind::reduce_scatter && dm::detail::zero_filled_dims(s) != 0)  // each held element reduced
    {
      std::vector<char> parts(v[0].size(), 0);
      for (int q : group) for_each_held(after, ext, q, [&](dm::tensor_index, dm::tensor_index x) { parts[x] = 1; });
      for_each_held(before, ext, r, [&](dm::tensor_index, dm::tensor_index x) {
        if (!parts[x]) ok = false, why = "a block made Partial loses an element it held";
      });
    }
    if (s.kind == dm::step_kind::all_reduce && before.local_size(ext, r) != after.local_size(ext, r))
      ok = false, why = "an all_reduce that changes the block";
    if (s.kind == dm::step_kind::all_gather)  // the result is the group's blocks, all of them
      for (int q : group)
        for_each_held(before, ext, q, [&](dm::tensor_index, dm::tensor_index x) {
          if (std::isnan(out[r][x])) ok = false, why = "an all_gather whose result lacks a gathered element";
        });
    if (!ok) return false;
  }
  v = std::move(out);
  return true;
}

// ---- a lower bound for any plan, Partial pairs included ---------------------------------------
/// The fewest elements any sequence of messages sends to move the pair (the cost model counts 8
/// bytes each), a message element carrying one value of one element (a partial sum included).
/// Per element x, with g partial values to combine (g classes of ranks: those at one index in
/// the source's Partial group; 1 without Partial):
///  - a target without Partial, held by the ranks T: with g = 1, each rank of T that does not
///    hold x receives it; else merging the g classes takes g - 1 messages (each joins at most
///    two classes' information) before any rank holds the result, and every other rank of T
///    then receives at least one more: g - 1 + |T| - 1.
///  - a Partial target, whose holders of x fall into reduction groups (the ranks that differ
///    only on its Partial dims): a group whose members lack a class receives at least one
///    message (groups are disjoint: distinct messages), and a class that some group lacks is
///    sent at least once by a rank of it (a rank is in one class: distinct messages); the
///    larger of the two counts.
template <class Mesh, class Spec, class E>
double any_plan_bound(const Mesh& m, const Spec& src, const Spec& dst, const E& ext, dm::tensor_index numel) {
  unsigned from_partial = 0, to_partial = 0;
  int g = 1;
  for (int d = 0; d < Mesh::ndim; ++d) {
    if (src.table().at[d].is_partial()) from_partial |= 1u << d, g *= m.size(d);
    if (dst.table().at[d].is_partial()) to_partial |= 1u << d;
  }
  // classes[x][r]: the class rank r holds of x (-1: none); after[x]: the ranks holding x after
  std::vector<std::vector<int>> classes(numel, std::vector<int>(m.size(), -1)), after(numel);
  for (int r = 0; r < m.size(); ++r) {
    const int cls = partial_index(m, src.table(), r);
    for_each_held(src, ext, r, [&](dm::tensor_index, dm::tensor_index x) { classes[x][r] = cls; });
    for_each_held(dst, ext, r, [&](dm::tensor_index, dm::tensor_index x) { after[x].push_back(r); });
  }
  double elements = 0;
  for (dm::tensor_index x = 0; x < numel; ++x) {
    const auto& c = classes[x];
    if (to_partial == 0) {
      int missing = 0;
      for (int r : after[x]) missing += c[r] < 0;
      elements += g == 1 ? missing : (g - 1) + static_cast<int>(after[x].size()) - 1;
      continue;
    }
    std::vector<std::vector<char>> present(m.size());  // per group (its first rank): classes held
    for (int r : after[x]) {
      int first = m.size();
      dm::detail::for_each_in_group(m, to_partial, r, [&](int, int q) { first = std::min(first, q); });
      present[first].resize(g, 0);
      if (c[r] >= 0) present[first][c[r]] = 1;
    }
    int groups_lacking = 0;
    std::vector<char> lacked(g, 0);
    for (const auto& p : present) {
      if (p.empty()) continue;
      bool lacks = false;
      for (int i = 0; i < g; ++i)
        if (!p[i]) lacks = true, lacked[i] = 1;
      groups_lacking += lacks;
    }
    int classes_lacked = 0;
    for (char l : lacked) classes_lacked += l;
    elements += std::max(groups_lacking, classes_lacked);
  }
  return 8 * elements;
}

// ---- totals over every pair ----------------------------------------------------------------
struct totals {
  int pairs = 0, refused_by_pytorch = 0, cheaper = 0, fewer_collectives = 0, more_collectives = 0;
  int model_checks = 0, model_faster = 0;  // plans chosen by modelled time, and those faster than PyTorch's
  int model_slower_strided = 0;            // and those slower (explicit orders on uneven extents only)
  double ours = 0, theirs = 0;
  double bound_plain = 0, ours_plain = 0, theirs_plain = 0;  // over the pairs without Partial
  double bound_any = 0;  // any_plan_bound, over every pair
  std::string table;  // one line per pair, for docs/sharding.md (DEVMESH_PLAN_TABLE=path)
};

// ---- plans chosen by modelled time, against PyTorch's plan under the same model ------------
/// Link tables the recorded pairs are planned with (per mesh dim; a mesh uses its first dims).
struct link_table {
  const char* name;
  dm::link_cost links[3];
};
constexpr link_table link_tables[] = {
    {"uniform shared memory", {dm::link_cost::shared_memory(), dm::link_cost::shared_memory(), dm::link_cost::shared_memory()}},
    {"uniform NVLink", {dm::link_cost::nvlink(), dm::link_cost::nvlink(), dm::link_cost::nvlink()}},
    {"dp across nodes", {dm::link_cost::network(), dm::link_cost::nvlink(), dm::link_cost::nvlink()}},
    {"the last dim across nodes", {dm::link_cost::nvlink(), dm::link_cost::nvlink(), dm::link_cost::network()}},
};
/// Scales of the recorded tensors: each element stands for this many float64s (1: 512 B for
/// 8x8, latency-bound; 65,536: 32 MiB, bandwidth-bound). The blocks' proportions stay.
constexpr double tensor_scales[] = {1, 1024, 65536};

/// The model of table t for mesh Mesh (its first ndim links), a tensor of extents ext whose
/// elements are element_bytes each.
template <class Mesh, class E>
dm::plan_model<Mesh::ndim_with_aliases> model_of(const link_table& t, const E& ext, dm::tensor_index element_bytes) {
  dm::plan_model<Mesh::ndim_with_aliases> model{};
  for (int d = 0; d < Mesh::ndim; ++d) model.links[d] = t.links[Mesh::ndim == 1 ? 0 : d];
  return model.tensor(ext, element_bytes);
}

/// PyTorch's recorded plan priced by `model`: each collective (one mesh dim each) its dim's
/// latency plus the most bytes a rank sent in it, times `scale`, over the dim's bandwidth.
template <int N>
double pytorch_time_us(const json& c, const dm::plan_model<N>& model, double scale) {
  double t = 0;
  for (const json& s : c["steps"].items) {
    if (!s.has("collective")) continue;  // a local step
    double most = 0;
    for (const json& b : s["bytes_sent_per_rank"].items) most = std::max(most, b.num);
    t += model.links[static_cast<int>(s["mesh_dim"].num)].time_us(most * scale);
  }
  return t;
}

/// True if spec s has an explicit shard order on a tensor dim whose extent its shards do not
/// divide (uneven _StridedShard blocks).
template <class Spec, class E>
bool strided_uneven(const Spec& s, const E& ext) {
  for (int t = 0; t < E::rank_value; ++t) {
    bool strided = s.table().ordered(t);
    dm::tensor_index shards = 1;
    for (int d = 0; d < s.mesh().ndim; ++d)
      if (s.table().at[d].is_shard() && s.table().at[d].tensor_dim == t)
        shards *= s.mesh().size(d), strided = strided || s.table().at[d].split_factor > 1;
    if (strided && ext.extent(t) % shards != 0) return true;
  }
  return false;
}

/// The recorded pair planned by modelled time under every link table and tensor scale: never
/// slower than PyTorch's plan under the same model, never more bytes in all, and run right
/// by the simulator (values as the source stands for).
template <int R, class Mesh, class Spec, class E>
void check_models(const json& c, const Mesh& m, const Spec& src, const Spec& dst, const E& ext, totals& sum) {
  const dm::tensor_index numel = ext.size();
  double their_bytes = 0;
  for (const json& b : c["bytes_sent_per_rank"].items) their_bytes += b.num;
  for (const auto& table : link_tables)
    for (double scale : tensor_scales) {
      const auto model = model_of<Mesh>(table, ext, static_cast<dm::tensor_index>(8 * scale));
      const auto plan = dm::plan_redistribute(src, dst, model);
      CAPTURE(std::string(table.name));
      CAPTURE(scale);
      CAPTURE(dm::to_string(plan, m));
      values v = source_values(m, src, ext, numel);  // the plan runs, and gives the source's tensor
      const std::vector<double> full = reduced(m, src.table(), v);
      for (int k = 0; k < plan.count; ++k) {
        std::string why;
        REQUIRE_MESSAGE(simulate(m, plan[k], ext, v, why), why);
      }
      const std::vector<double> after = reduced(m, dst.table(), v);
      for (dm::tensor_index x = 0; x < numel; ++x) REQUIRE(after[x] == doctest::Approx(full[x]));
      const double ours = dm::modelled_time_us(m, plan, ext, static_cast<dm::tensor_index>(8 * scale), model);
      const double theirs = pytorch_time_us(c, model, scale);
      // PyTorch plans explicit shard orders (_StridedShard) by a graph search whose per-dim
      // gathers of uneven strided cuts devmesh's table-only steps do not make: there, under a
      // slow dim, devmesh may be slower (counted, and pinned below)
      if (strided_uneven(src, ext) && ours > theirs * (1 + 1e-12)) {
        ++sum.model_slower_strided;
        MESSAGE(c["id"].str << " under '" << std::string(table.name) << "' x" << scale << ": modelled " << ours << " us, PyTorch's "
                            << theirs << " us");
      } else {
        CHECK_MESSAGE(ours <= theirs * (1 + 1e-12), "modelled " << ours << " us against PyTorch's " << theirs << " us");
      }
      double bytes = 0;
      for (int r = 0; r < m.size(); ++r) bytes += static_cast<double>(dm::bytes_sent(m, plan, ext, r, 8));
      CHECK_MESSAGE(bytes <= their_bytes, "bytes " << bytes << " against PyTorch's " << their_bytes);
      ++sum.model_checks;
      sum.model_faster += ours < theirs * (1 - 1e-12);
    }
}

template <int R, class Mesh>
void check_pair(const json& c, totals& sum) {
  std::vector<int> sizes;
  const Mesh m = mesh_of<Mesh>(c, sizes);
  std::array<dm::tensor_index, R> shape{};
  dm::tensor_index numel = 1;
  for (int t = 0; t < R; ++t) shape[t] = static_cast<dm::tensor_index>(c["tensor_shape"].items[t].num), numel *= shape[t];
  const auto ext = dm::dextents<R>::from_array(shape);
  std::vector<parsed> ps, pd;
  for (const json& p : c["src"].items) ps.push_back(parse_placement(p.str));
  for (const json& p : c["dst"].items) pd.push_back(parse_placement(p.str));
  const auto src = spec_of(m, ps, sizes), dst = spec_of(m, pd, sizes);
  dm::plan_model<Mesh::ndim_with_aliases> by_bytes{};  // no links: chosen by bytes, the tensor known
  by_bytes.tensor(ext, 8);
  const auto plan = dm::plan_redistribute(src, dst, by_bytes);
  if (!c.has("error")) check_models<R>(c, m, src, dst, ext, sum);
  REQUIRE(plan.count <= plan.capacity);
  CAPTURE(dm::to_string(plan, m));

  // the plan, run
  values v = source_values(m, src, ext, numel);
  if (c.has("ranks"))  // the recorder's source blocks are ours
    for (const json& r : c["ranks"].items) {
      const int rank = static_cast<int>(r["rank"].num);
      for_each_held(src, ext, rank, [&](dm::tensor_index i, dm::tensor_index x) {
        CHECK(r["src_local_values"].items[i].num == v[rank][x]);
      });
    }
  const std::vector<double> full = reduced(m, src.table(), v);  // the tensor the source stands for
  for (int i = 0; i < plan.count; ++i) {
    std::string why;
    CAPTURE(i);
    CHECK_MESSAGE(!changes_nothing(m, plan[i], ext), "a step that changes nothing");
    REQUIRE_MESSAGE(simulate(m, plan[i], ext, v, why), why);
  }

  // the values after
  bool dst_partial = false;
  for (const auto& p : pd) dst_partial = dst_partial || p.kind == 'P';
  for (int r = 0; r < m.size(); ++r)
    for_each_held(dst, ext, r, [&](dm::tensor_index, dm::tensor_index x) { REQUIRE(!std::isnan(v[r][x])); });
  if (dst_partial) {  // PyTorch's blocks are its own choice there: the reduction must be the tensor
    const values after_reduced(1, reduced(m, dst.table(), v));
    for (dm::tensor_index x = 0; x < numel; ++x) CHECK(after_reduced[0][x] == doctest::Approx(full[x]));
  }
  if (c.has("ranks") && !dst_partial) {
    for (const json& r : c["ranks"].items) {
      const int rank = static_cast<int>(r["rank"].num);
      for_each_held(dst, ext, rank, [&](dm::tensor_index i, dm::tensor_index x) {
        CHECK(r["local_values"].items[i].num == doctest::Approx(v[rank][x]));
      });
    }
  }

  // the costs
  std::vector<dm::tensor_index> ours(m.size());
  double our_total = 0, bound = 0;
  for (int r = 0; r < m.size(); ++r) {
    ours[r] = dm::bytes_sent(m, plan, ext, r, 8);
    our_total += static_cast<double>(ours[r]);
    bound += 8.0 * static_cast<double>(dst.local_size(ext, r) - dm::detail::common_elements(src, r, dst, r, ext));
  }
  bool partial = dst_partial;
  for (const auto& p : ps) partial = partial || p.kind == 'P';
  if (!partial) CHECK_MESSAGE(our_total <= 1.25 * bound, "bytes " << our_total << " against a lower bound of " << bound);
  if (c.has("error")) {
    ++sum.refused_by_pytorch;
    return;
  }
  double their_total = 0;
  for (int r = 0; r < m.size(); ++r) {
    const auto theirs = static_cast<dm::tensor_index>(c["bytes_sent_per_rank"].items[r].num);
    CHECK_MESSAGE(ours[r] <= theirs, "rank " << r << ": " << ours[r] << " B against PyTorch's " << theirs);
    their_total += static_cast<double>(theirs);
  }
  int their_collectives = 0;
  for (const json& n : c["collectives"].items) their_collectives += static_cast<int>(n.num);
  ++sum.pairs;
  sum.ours += our_total, sum.theirs += their_total;
  // a plan the simulator ran cannot beat a bound on every plan: else the bound or the cost model is wrong
  const double least = any_plan_bound(m, src, dst, ext, numel);
  CHECK_MESSAGE(our_total >= least, "bytes " << our_total << " under the bound on any plan, " << least);
  sum.bound_any += least;
  if (!partial) sum.bound_plain += bound, sum.ours_plain += our_total, sum.theirs_plain += their_total;
  sum.cheaper += our_total < their_total;
  sum.fewer_collectives += plan.collectives() < their_collectives;
  sum.more_collectives += plan.collectives() > their_collectives;
  if (std::getenv("DEVMESH_PLAN_TABLE")) sum.table += dm::to_string(plan, m);
  sum.table += c["id"].str + " " + std::to_string(static_cast<long long>(their_total)) + " " +
               std::to_string(static_cast<long long>(our_total)) + " " + std::to_string(their_collectives) + " " +
               std::to_string(plan.collectives()) + " " + std::to_string(static_cast<long long>(least)) + "\n";
}

template <class Mesh>
void check_pair(const json& c, totals& sum) {
  switch (c["tensor_shape"].items.size()) {
    case 1: return check_pair<1, Mesh>(c, sum);
    default: return check_pair<2, Mesh>(c, sum);
  }
}

// ---- random and exhaustive pairs, run on the simulator -------------------------------------
/// Plans and simulates src -> dst on m (by bytes, or by `model`): every step feasible and
/// changing a block, the values after stand for the source's tensor; without Partial, within
/// 1.25x of the lower bound (each rank receives only what it lacks) where `bounded`.
template <class Mesh, class Spec, class E>
void simulate_pair(const Mesh& m, const Spec& src, const Spec& dst, const E& ext, bool bounded,
                   const dm::plan_model<Mesh::ndim_with_aliases>* model = nullptr) {
  dm::tensor_index numel = 1;
  for (auto e : ext.shape()) numel *= e;
  const auto plan = model ? dm::plan_redistribute(src, dst, *model) : dm::plan_redistribute(src, dst);
  CAPTURE(dm::to_string(src));
  CAPTURE(dm::to_string(dst));
  CAPTURE(dm::to_string(plan, m));
  values v = source_values(m, src, ext, numel);
  const std::vector<double> full = reduced(m, src.table(), v);
  for (int k = 0; k < plan.count; ++k) {
    std::string why;
    if (numel > 0) REQUIRE_MESSAGE(!changes_nothing(m, plan[k], ext), "a step that changes nothing");
    REQUIRE_MESSAGE(simulate(m, plan[k], ext, v, why), why);
  }
  const std::vector<double> after = reduced(m, dst.table(), v);
  for (dm::tensor_index x = 0; x < numel; ++x) REQUIRE(after[x] == doctest::Approx(full[x]));
  if (!bounded) return;
  double ours = 0, bound = 0;
  for (int r = 0; r < m.size(); ++r) {
    ours += static_cast<double>(dm::bytes_sent(m, plan, ext, r, 8));
    bound += 8.0 * static_cast<double>(dst.local_size(ext, r) - dm::detail::common_elements(src, r, dst, r, ext));
  }
  CHECK_MESSAGE(ours <= 1.25 * bound, "bytes " << ours << " against a lower bound of " << bound);
}

/// Plans and simulates `pairs` random pairs on m (simulate_pair), by bytes and by a random
/// model. Returns the number of plans.
template <int R, class Mesh>
int simulate_random(const Mesh& m, const std::array<dm::tensor_index, R>& shape, int pairs, std::mt19937& rng) {
  const auto ext = dm::dextents<R>::from_array(shape);
  const dm::link_cost links[] = {dm::link_cost::shared_memory(), dm::link_cost::nvlink(), dm::link_cost::network()};
  for (int i = 0; i < pairs; ++i) {
    const auto src = random_spec<R>(m, rng), dst = random_spec<R>(m, rng);
    simulate_pair(m, src, dst, ext, false);
    // and by a random model: each dim's links one of the three defaults, a tensor of 64 B to 1 GB
    dm::plan_model<Mesh::ndim_with_aliases> model{};
    for (int d = 0; d < Mesh::ndim; ++d) model.links[d] = links[rng() % 3];
    model.tensor_bytes = std::pow(10.0, 2 + static_cast<double>(rng() % 8));
    model.tensor_rank = R;
    simulate_pair(m, src, dst, ext, false, &model);
  }
  return 2 * pairs;
}

/// Every pair of specs on m whose dims are each R, S(0), S(1) or P(sum), for a 2-D tensor of
/// `shape`, simulated (simulate_pair; bounded where neither has a Partial), planned by bytes and
/// by a model whose first dim is slow. Returns the number of pairs.
template <class Mesh>
int simulate_every_pair(const Mesh& m, const std::array<dm::tensor_index, 2>& shape) {
  const auto ext = dm::dextents<2>::from_array(shape);
  const auto spec = [&](int code, bool& partial) {  // base-4 digits: R, P(sum), S(0), S(1)
    dm::dynamic_sharding<Mesh> s(m);
    for (int d = 0; d < Mesh::ndim; ++d, code /= 4) {
      if (code % 4 == 1) s.place(d, dm::placement::partial_of(dm::reduction::sum)), partial = true;
      if (code % 4 >= 2) s.place(d, dm::placement::sharded(code % 4 - 2));
    }
    return s;
  };
  int specs = 1, pairs = 0;
  for (int d = 0; d < Mesh::ndim; ++d) specs *= 4;
  dm::plan_model<Mesh::ndim_with_aliases> slow_first{};  // dim 0 across nodes, a large tensor
  for (int d = 0; d < Mesh::ndim; ++d) slow_first.links[d] = d == 0 ? dm::link_cost::network() : dm::link_cost::nvlink();
  slow_first.tensor_bytes = 1e8;
  slow_first.tensor_rank = 2;
  for (int a = 0; a < specs; ++a)
    for (int b = 0; b < specs; ++b, ++pairs) {
      bool partial = false;
      const auto src = spec(a, partial), dst = spec(b, partial);
      simulate_pair(m, src, dst, ext, !partial);
      simulate_pair(m, src, dst, ext, false, &slow_first);
    }
  return pairs;
}

// ---- static specs: the plan and its cost are constants -------------------------------------
using mesh24 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
using rows_twice = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>, dm::on<"tp", dm::shard<0>>>;  // [S(0), S(0)]
using rows_on_tp = dm::sharding<mesh24, dm::on<"tp", dm::shard<0>>>;                            // [R, S(0)]
using grads = dm::sharding<mesh24, dm::on<"dp", dm::partial<dm::reduction::sum>>>;              // [P(sum), R]
/// The bytes plan p sends for an 8x8 float64 tensor on mesh24, summed over the 8 ranks.
constexpr dm::tensor_index bytes_8x8(const dm::redistribute_plan<2>& p) {
  dm::tensor_index total = 0;
  for (int r = 0; r < 8; ++r) total += dm::bytes_sent(mesh24{}, p, dm::extents<8, 8>{}, r, 8);
  return total;
}
constexpr auto regroup = dm::plan_redistribute(rows_twice{}, rows_on_tp{});
static_assert(regroup.count == 1 && regroup[0].kind == dm::step_kind::all_to_all && regroup[0].group == 0b11u);
// issue 20's first example: 896 B over the 8 ranks where PyTorch moves 3,584 B. From the blocks:
// rank (d, t) holds row 4d + t (8 elements) and needs rows 2t, 2t + 1 (16); it holds one of
// them only at (0, 0) (row 0) and (1, 3) (row 7): 2 x 8 + 6 x 16 = 112 elements, 896 B, the
// bound (the test "the static plans said to reach the bound" below checks each count said to be
// it against any_plan_bound, a brute force over the elements that does not use the planner)
static_assert(bytes_8x8(regroup) == 896);
// [P(sum), R] -> [R, S(0)]: slice on tp first, then all_reduce a quarter of the tensor over dp
constexpr auto reduce_less = dm::plan_redistribute(grads{}, rows_on_tp{});
static_assert(reduce_less.count == 2 && reduce_less[0].kind == dm::step_kind::local &&
              reduce_less[1].kind == dm::step_kind::all_reduce && reduce_less[1].group == 0b01u);
// From the blocks: after the slice rank 0 holds rows 0-1 of its partial values, N = 16 elements;
// an all_reduce over dp (n = 2) sends 2 (n - 1) / n N = 16 elements, 128 B (PyTorch all-reduces
// all 64: 64 elements, 512 B)
static_assert(dm::bytes_sent(mesh24{}, reduce_less, dm::extents<8, 8>{}, 0, 8) == 128);
// [P(sum), R] -> [S(0), S(0)]: tp cuts each future dp block first (_StridedShard(0, 2)), so the
// reduce_scatter over dp reduces a quarter of the tensor: 512 B over the 8 ranks, PyTorch 2,048 B
constexpr auto reduce_strided = dm::plan_redistribute(grads{}, rows_twice{});
static_assert(reduce_strided.count == 2 && reduce_strided[0].kind == dm::step_kind::local &&
              reduce_strided[0].after.at[1] == dm::placement::strided(0, 2) &&
              reduce_strided[1].kind == dm::step_kind::reduce_scatter && reduce_strided[1].group == 0b01u &&
              reduce_strided[1].after == rows_twice{}.table());
// From the blocks: after the slice rank (d, t) holds rows t and 4 + t (one of each future dp
// block), N = 16 elements; the reduce_scatter over dp sends N minus the row it keeps, 8
// elements: 8 ranks x 8 = 64 elements, 512 B, the bound (PyTorch: 8 ranks x (64 - 32) elements,
// 2,048 B)
static_assert(bytes_8x8(reduce_strided) == 512);

// [S(0), S(0)] -> [R, P(sum)]: tp keeps its cut, and one all_gather over dp brings the rows each
// rank's dp group holds, zeros around them: 512 B over the 8 ranks, the bound; PyTorch gathers
// dp's whole blocks after making tp Partial, zeros included, 2,048 B
using summed_on_tp = dm::sharding<mesh24, dm::on<"tp", dm::partial<dm::reduction::sum>>>;  // [R, P(sum)]
constexpr auto gather_filled = dm::plan_redistribute(rows_twice{}, summed_on_tp{});
static_assert(gather_filled.count == 1 && gather_filled[0].kind == dm::step_kind::all_gather &&
              gather_filled[0].group == 0b01u && dm::detail::zero_filled_dims(gather_filled[0]) == 0b10u);
// From the blocks: rank (d, t) holds row 4d + t; its dp group, {(0, t), (1, t)}, rows t and
// 4 + t; the all_gather over dp (n = 2) sends its one row to the other rank: 8 ranks x 8
// elements, 512 B
static_assert(bytes_8x8(gather_filled) == 512);

// [S(0), P(sum)] -> [P(sum), S(0)]: one reduce_scatter over tp, each rank reducing only the
// rows of its new block that its dp half holds, zeros elsewhere: 1,536 B over the 8 ranks, the
// bound; PyTorch all-reduces the dp halves, 3,072 B
using summed = dm::partial<dm::reduction::sum>;
using rows_summed_on_tp = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>, dm::on<"tp", summed>>;  // [S(0), P(sum)]
using summed_rows_on_tp = dm::sharding<mesh24, dm::on<"dp", summed>, dm::on<"tp", dm::shard<0>>>;  // [P(sum), S(0)]
constexpr auto scatter_filled = dm::plan_redistribute(rows_summed_on_tp{}, summed_rows_on_tp{});
static_assert(scatter_filled.count == 1 && scatter_filled[0].kind == dm::step_kind::reduce_scatter &&
              scatter_filled[0].group == 0b10u && dm::detail::zero_filled_dims(scatter_filled[0]) == 0b01u);
// From the blocks: rank (d, t) holds rows 4d..4d+3 (N = 32 elements) and its new block is rows
// 2t, 2t + 1, of which it holds 16 elements when 2t is in its half ((0, 0), (0, 1), (1, 2),
// (1, 3)), none otherwise; a reduce_scatter sends N minus what it keeps: 4 x 16 + 4 x 32 = 192
// elements, 1,536 B
static_assert(bytes_8x8(scatter_filled) == 1536);

// [S(1), S(0)] -> [S(0), P(sum)]: one all_to_all over dp, each rank receiving only the part of
// its new rows that its tp block holds, zeros elsewhere: 256 B over the 8 ranks, the bound;
// PyTorch makes tp Partial first and gathers the zeros too, 2,048 B
using cols_rows = dm::sharding<mesh24, dm::on<"dp", dm::shard<1>>, dm::on<"tp", dm::shard<0>>>;  // [S(1), S(0)]
constexpr auto exchange_filled = dm::plan_redistribute(cols_rows{}, rows_summed_on_tp{});
static_assert(exchange_filled.count == 1 && exchange_filled[0].kind == dm::step_kind::all_to_all &&
              exchange_filled[0].group == 0b01u && dm::detail::zero_filled_dims(exchange_filled[0]) == 0b10u);
// From the blocks: rank (d, t) holds columns 4d..4d+3 of rows 2t, 2t + 1 (8 elements); its new
// rows 4d..4d+3 meet its tp rows only at (0, 0), (0, 1), (1, 2), (1, 3): 2 rows x 8 columns, of
// which it holds 8 and lacks 8: 4 x 8 = 32 elements, 256 B
static_assert(bytes_8x8(exchange_filled) == 256);

// [S(0), S(0)] -> [P(sum), S(0)]: dp keeps its cut (the first of the chain) and the all_to_all
// runs over tp alone, each rank receiving the part of its new rows that its dp half holds:
// 384 B over the 8 ranks, the bound; PyTorch 1,536 B
constexpr auto exchange_kept = dm::plan_redistribute(rows_twice{}, summed_rows_on_tp{});
static_assert(exchange_kept.count == 1 && exchange_kept[0].kind == dm::step_kind::all_to_all &&
              exchange_kept[0].group == 0b10u && dm::detail::zero_filled_dims(exchange_kept[0]) == 0b01u);
// From the blocks: rank (d, t) holds row 4d + t; its new rows 2t, 2t + 1 meet its dp half only at
// (0, 0), (0, 1), (1, 2), (1, 3) (16 elements each), of which (0, 0) (row 0) and (1, 3) (row 7)
// hold 8: 8 + 16 + 16 + 8 = 48 elements, 384 B
static_assert(bytes_8x8(exchange_kept) == 384);

// [S(1), P(sum)] -> [S(0), R]: tp reduce-scatters its partial sums (each element reduced once,
// on one rank of tp), then one all_to_all over (dp, tp) brings each rank its rows: 3,328 B over
// the 8 ranks; all-reducing over tp instead (PyTorch's step, after its all_gather) 4,096 B, and
// PyTorch 5,120 B
using cols_summed_on_tp = dm::sharding<mesh24, dm::on<"dp", dm::shard<1>>, dm::on<"tp", summed>>;  // [S(1), P(sum)]
using rows_on_dp = dm::sharding<mesh24, dm::on<"dp", dm::shard<0>>>;                             // [S(0), R]
constexpr auto scatter_then_move = dm::plan_redistribute(cols_summed_on_tp{}, rows_on_dp{});
static_assert(scatter_then_move.count == 2 && scatter_then_move[0].kind == dm::step_kind::reduce_scatter &&
              scatter_then_move[0].group == 0b10u && scatter_then_move[1].kind == dm::step_kind::all_to_all &&
              scatter_then_move[1].group == 0b11u);
// From the blocks: step 1 leaves [S(1), S(0)]; each rank holds columns 4d..4d+3 of every row
// (N = 32) and keeps rows 2t, 2t + 1 of them (8): 8 ranks x 24 elements = 192. Step 2: rank
// (d, t) needs rows 4d..4d+3 (32 elements) and holds 8 of them at (0, 0), (0, 1), (1, 2), (1, 3),
// none elsewhere: 4 x 24 + 4 x 32 = 224. 192 + 224 = 416 elements, 3,328 B (the bound: 3,072 B)
static_assert(scatter_then_move[0].after == cols_rows{}.table());
static_assert(bytes_8x8(scatter_then_move) == 3328);

// [R, P(sum)] -> [R, S(1)] (issue 42): the replicas of tp's reduction (dp) split it. dp cuts
// the rows first, tp reduce-scatters its columns within each dp half, and dp gathers the rows
// back: 2,048 B over the 8 ranks, the bound; one reduce_scatter over tp, as PyTorch and devmesh
// before issue 42 planned it, sends 3,072 B.
using summed_on_tp_cols = dm::sharding<mesh24, dm::on<"tp", dm::shard<1>>>;  // [R, S(1)]
constexpr auto split_replicas = dm::plan_redistribute(summed_on_tp{}, summed_on_tp_cols{});
static_assert(split_replicas.count == 3 && split_replicas[0].kind == dm::step_kind::local &&
              split_replicas[1].kind == dm::step_kind::reduce_scatter && split_replicas[1].group == 0b10u &&
              split_replicas[2].kind == dm::step_kind::all_gather && split_replicas[2].group == 0b01u);
// From the blocks: after the slice rank (d, t) holds rows 4d..4d+3 (N = 32 elements) and keeps
// columns 2t, 2t + 1 of them (8): 24 elements sent; the all_gather over dp sends those 8 to the
// other dp rank: 8 ranks x 32 elements = 256, 2,048 B
static_assert(bytes_8x8(split_replicas) == 2048);

// A gradient that tensor parallelism replicates (issue 42): P(sum) over dp = 8, tp = 8 replicas,
// to [S(0), R]. tp cuts each future dp block first (_StridedShard(0, 8)), dp reduce-scatters an
// eighth of the tensor, tp gathers its rows back: 14/64 of the tensor per rank (64x64 float64:
// 7,168 B), where one reduce_scatter over dp sends 7/8 of it (28,672 B)
using mesh88 = dm::mesh<dm::dim<"dp", 8>, dm::dim<"tp", 8>>;
constexpr auto replicated_gradient = dm::plan_redistribute(
    dm::sharding<mesh88, dm::on<"dp", dm::partial<dm::reduction::sum>>>{}, dm::sharding<mesh88, dm::on<"dp", dm::shard<0>>>{});
static_assert(replicated_gradient.count == 3 && replicated_gradient[1].kind == dm::step_kind::reduce_scatter &&
              replicated_gradient[2].kind == dm::step_kind::all_gather && replicated_gradient[2].group == 0b10u);
static_assert(dm::bytes_sent(mesh88{}, replicated_gradient, dm::extents<64, 64>{}, 0, 8) == 7168);

// A dim of size 1 holds the whole tensor whatever it says: no collective over one rank.
using mesh14 = dm::mesh<dm::dim<"dp", 1>, dm::dim<"tp", 4>>;
static_assert(dm::plan_redistribute(dm::sharding<mesh14, dm::on<"dp", dm::partial<dm::reduction::sum>>>{},
                                    dm::sharding<mesh14>{})
                  .count == 0);  // P(sum) over one rank: the value
static_assert([] {
  constexpr auto p = dm::plan_redistribute(dm::sharding<mesh14, dm::on<"dp", dm::shard<0>>>{},
                                           dm::sharding<mesh14, dm::on<"tp", dm::shard<0>>>{});
  return p.count == 1 && p[0].kind == dm::step_kind::local;  // S(0) over one rank: the whole; then a slice
}());

}  // namespace

TEST_SUITE("sharding_redistribute_plan") {
  TEST_CASE("every recorded pair: planned, run on one process, no costlier than PyTorch 2.15") {
    const json data = load(DEVMESH_PYTORCH_REDISTRIBUTE_JSON);
    totals sum;
    for (const json& c : data["cases"].items) {
      CAPTURE(c["id"].str);
      const std::size_t ndim = c["mesh"]["shape"].items.size();
      ndim == 1 ? check_pair<mesh1>(c, sum) : ndim == 2 ? check_pair<mesh2>(c, sum) : check_pair<mesh3>(c, sum);
    }
    MESSAGE(sum.pairs << " pairs against PyTorch: " << sum.ours << " B against " << sum.theirs << " B ("
                      << sum.ours / sum.theirs << "x), cheaper on " << sum.cheaper << ", fewer collectives on "
                      << sum.fewer_collectives << ", more on " << sum.more_collectives << "; "
                      << sum.refused_by_pytorch << " pairs PyTorch refuses, planned; "
                      << "without Partial: " << sum.ours_plain << " B against " << sum.theirs_plain
                      << " B, the lower bound " << sum.bound_plain << " B; any plan: at least " << sum.bound_any
                      << " B (" << sum.bound_any / sum.theirs << "x PyTorch's; devmesh " << sum.ours / sum.bound_any
                      << "x it); by modelled time, " << sum.model_checks << " plans, " << sum.model_faster
                      << " faster than PyTorch's under the same model, " << sum.model_slower_strided
                      << " slower (uneven _StridedShard sources)");
    CHECK(sum.pairs >= 500);
    // Without Partial placements every plan moves exactly the lower bound (0.40x PyTorch's
    // bytes). Over every pair, 0.518x PyTorch's bytes and 1.034x the bound on any plan
    // (any_plan_bound, which sums to 0.5007x PyTorch's): issue 42's goal of 1.02x is missed.
    // What is left above the bound is docs/sharding.md's: pairs whose bound no plan reaches
    // (S(0),P(sum) -> P(sum),R: every tp group must learn all four partial sums, six messages
    // per element where the bound counts four) and cuts only an explicit order could make.
    CHECK(sum.ours_plain == sum.bound_plain);
    CHECK(sum.ours <= 0.518 * sum.theirs);
    CHECK(sum.ours <= 1.035 * sum.bound_any);
    CHECK(sum.bound_any > 0.5 * sum.theirs);
    // By modelled time, never slower than PyTorch's plan under the same model but for 3 of the
    // 6,108: uneven _StridedShard sources (5x3 and 13x6) with dp across nodes
    CHECK(sum.model_checks == 509 * 4 * 3);
    CHECK(sum.model_slower_strided == 3);
    if (const char* path = std::getenv("DEVMESH_PLAN_TABLE")) std::ofstream(path) << sum.table;
  }
}

// ---- a slow dim, simulated: the plans the model changes --------------------------------------
/// One recorded pair planned under two link tables for a 32 MiB tensor (the 8x8 pairs, each
/// element standing for 65,536 float64s): the plans, and both plans' modelled time under the
/// second table.
struct changed_plan {
  std::string id, uniform, slow;
  double uniform_us = 0, slow_us = 0;
};

template <int R, class Mesh>
void plan_both(const json& c, std::vector<changed_plan>& changed, int& hierarchical_on_uniform) {
  std::vector<int> sizes;
  const Mesh m = mesh_of<Mesh>(c, sizes);
  std::array<dm::tensor_index, R> shape{};
  for (int t = 0; t < R; ++t) shape[t] = static_cast<dm::tensor_index>(c["tensor_shape"].items[t].num);
  const auto ext = dm::dextents<R>::from_array(shape);
  std::vector<parsed> ps, pd;
  for (const json& p : c["src"].items) ps.push_back(parse_placement(p.str));
  for (const json& p : c["dst"].items) pd.push_back(parse_placement(p.str));
  const auto src = spec_of(m, ps, sizes), dst = spec_of(m, pd, sizes);
  constexpr dm::tensor_index element = 8 * 65536;
  const auto uniform = model_of<Mesh>(link_tables[1], ext, element), slow = model_of<Mesh>(link_tables[2], ext, element);
  const auto a = dm::plan_redistribute(src, dst, uniform), b = dm::plan_redistribute(src, dst, slow);
  for (const auto& step : a) hierarchical_on_uniform += std::string(step.why).rfind("hierarchical", 0) == 0;
  const std::string sa = dm::to_string(a, m), sb = dm::to_string(b, m);
  if (sa == sb) return;
  changed.push_back({c["id"].str, sa, sb, dm::modelled_time_us(m, a, ext, element, slow),
                     dm::modelled_time_us(m, b, ext, element, slow)});
}

TEST_SUITE("sharding_redistribute_plan") {
  TEST_CASE("a slow dim (dp across nodes, simulated): the plans that change, pinned; none on uniform links") {
    const json data = load(DEVMESH_PYTORCH_REDISTRIBUTE_JSON);
    std::vector<changed_plan> changed;
    int pairs = 0, hierarchical_on_uniform = 0;
    for (const json& c : data["cases"].items) {
      const auto& shape = c["tensor_shape"].items;
      if (c["mesh"]["shape"].items.size() < 2 || shape.size() != 2 || shape[0].num != 8 || shape[1].num != 8) continue;
      ++pairs;
      c["mesh"]["shape"].items.size() == 2 ? plan_both<2, mesh2>(c, changed, hierarchical_on_uniform)
                                           : plan_both<2, mesh3>(c, changed, hierarchical_on_uniform);
    }
    std::string table = "| pair | uniform NVLink | dp across nodes | time under the slow dp: uniform's plan | its own |\n";
    const auto cell = [](const std::string& plan) {  // the steps without their reasons, one per line
      std::string out;
      for (std::size_t at = 0; at < plan.size();) {
        const std::size_t end = plan.find('\n', at), why = plan.find("  (", at);
        out += (out.empty() ? "" : "<br>") + plan.substr(at, std::min(end, why) - at);
        at = end == std::string::npos ? plan.size() : end + 1;
      }
      return out;
    };
    for (const auto& x : changed)
      table += "| `" + x.id + "` | " + cell(x.uniform) + " | " + cell(x.slow) + " | " +
               std::to_string(static_cast<int>(x.uniform_us)) + " us | " + std::to_string(static_cast<int>(x.slow_us)) +
               " us |\n";
    if (const char* path = std::getenv("DEVMESH_SLOW_DIM_TABLE")) std::ofstream(path) << table;
    MESSAGE(pairs << " pairs of 8x8 on 2-D and 3-D meshes; " << changed.size() << " plans change with dp across nodes:\n"
                  << table);
    // Never a hierarchical plan on uniform links (issue 42: only where the model says so).
    CHECK(hierarchical_on_uniform == 0);
    // Each changed plan is faster under the slow dp than the uniform links' plan (the model's
    // own choice), and the changes pinned: the count, and the hierarchical reductions.
    for (const auto& x : changed) CHECK_MESSAGE(x.slow_us < x.uniform_us, x.id);
    CHECK(changed.size() == 35);
    const auto find = [&](const char* id) -> const changed_plan* {
      for (const auto& x : changed)
        if (x.id == id) return &x;
      return nullptr;
    };
    const auto* all_reduced = find("2x4:8x8:P(sum),P(sum)->R,R");
    REQUIRE(all_reduced != nullptr);
    CHECK(all_reduced->uniform == "1. all_reduce over (dp, tp) sum: P(sum),P(sum) -> R,R  (Partial to Replicate: one "
                                  "all_reduce over the dims' group)\n");
    CHECK(all_reduced->slow.find("1. reduce_scatter over (tp) sum: P(sum),P(sum) -> P(sum),S(0)") == 0);
    CHECK(all_reduced->slow.find("2. all_reduce over (dp) sum: P(sum),S(0) -> R,S(0)") != std::string::npos);
    CHECK(all_reduced->slow.find("3. all_gather over (tp): R,S(0) -> R,R") != std::string::npos);
    CHECK(all_reduced->slow_us < 0.3 * all_reduced->uniform_us);
    const auto* scattered = find("2x4:8x8:P(sum),P(sum)->S(0),S(0)");
    REQUIRE(scattered != nullptr);
    CHECK(scattered->slow.find("1. reduce_scatter over (tp) sum: P(sum),P(sum) -> P(sum),_S(0,2)") == 0);
    CHECK(scattered->slow.find("2. reduce_scatter over (dp) sum: P(sum),_S(0,2) -> S(0),S(0)") != std::string::npos);
  }

  TEST_CASE("random pairs on every mesh of 1 to 8 ranks (size-1 dims, explicit orders): feasible and right") {
    std::mt19937 rng(20261126);
    int pairs = 0;
    for (int n = 1; n <= 8; ++n) {
      const auto shapes = [&](const auto& m) {
        pairs += simulate_random<1>(m, {7}, 100, rng);
        pairs += simulate_random<2>(m, {5, 3}, 100, rng);
        pairs += simulate_random<2>(m, {0, 4}, 20, rng);
        pairs += simulate_random<2>(m, {2, 9}, 100, rng);
      };
      for_each_mesh_of(n, shapes);
    }
    MESSAGE(pairs << " random pairs planned and simulated");
    CHECK(pairs > 10000);
  }

  TEST_CASE("the static plans said to reach the bound send the bytes any plan must (brute force)") {
    // any_plan_bound counts, element by element, the messages any plan needs: independent of
    // the planner, and equal to the bytes pinned above where their comments say "the bound".
    using spec = dm::dynamic_sharding<mesh24>;
    const auto bound = [](const spec& src, const spec& dst) {
      return static_cast<dm::tensor_index>(any_plan_bound(mesh24{}, src, dst, dm::extents<8, 8>{}, 64));
    };
    CHECK(bytes_8x8(regroup) == bound(rows_twice{}, rows_on_tp{}));
    CHECK(bytes_8x8(gather_filled) == bound(rows_twice{}, summed_on_tp{}));
    CHECK(bytes_8x8(scatter_filled) == bound(rows_summed_on_tp{}, summed_rows_on_tp{}));
    CHECK(bytes_8x8(exchange_filled) == bound(cols_rows{}, rows_summed_on_tp{}));
    CHECK(bytes_8x8(exchange_kept) == bound(rows_twice{}, summed_rows_on_tp{}));
    CHECK(bytes_8x8(reduce_strided) == bound(grads{}, rows_twice{}));
    CHECK(bytes_8x8(split_replicas) == bound(summed_on_tp{}, summed_on_tp_cols{}));
    // The reduce_scatter before the exchange costs more than the bound (3,072 B): a bound.
    CHECK(bytes_8x8(scatter_then_move) > bound(cols_summed_on_tp{}, rows_on_dp{}));
  }

  TEST_CASE("every pair of R, S(0), S(1) and P(sum) on 2-D and 3-D meshes, uneven and empty blocks") {
    int pairs = 0;
    for (const auto& shape : {std::array<dm::tensor_index, 2>{7, 5}, {2, 9}, {0, 4}}) {
      pairs += simulate_every_pair(mesh2(2, 3), shape) + simulate_every_pair(mesh2(3, 2), shape);
      pairs += simulate_every_pair(mesh3(2, 2, 3), shape);
    }
    MESSAGE(pairs << " pairs planned and simulated");
    CHECK(pairs == 3 * (2 * 256 + 4096));
  }
}
