// bench/plan_ranking.cpp: does the cost model rank plans as this machine runs them? (issue 42,
// item 3.) On 8 MPI ranks, each mesh of the recorded pairs ((8), (2,4), (2,2,2)) is made and
// calibrated (dm::calibrate); then for every pair of tests/sharding/data/pytorch_2.15_
// redistribute.json that PyTorch runs, at several sizes (its extents times each --scales
// factor), every distinct candidate plan the planner considered (plan_redistribute with the
// calibrated links, for float64) is run by the executor dm::redistribute calls (redistribute_runtime<Comm>), the candidates
// alternating (forward, then backward, --reps rounds; each sample --iters back-to-back runs
// after a barrier, the slowest rank's mean). Each candidate's blocks are checked equal to the
// chosen plan's first. Reported per case: every candidate's modelled time (exact counts) and
// measured median, whether the chosen plan is the fastest measured or within 10% of it, the
// share of candidate pairs the model orders as measured; over all: those counts and Spearman's
// rank correlation of modelled and measured time over every (case, candidate).
// usage: mpirun -np 8 plan_ranking --data JSON [--scales 1,8,32] [--reps 5] [--iters 3]
//                                  [--only SUBSTRING] [--json FILE]
#define DOCTEST_CONFIG_DISABLE  // pytorch_data.hpp's REQUIREs: the JSON is the committed one
#include "../tests/sharding/pytorch_data.hpp"

#include <devmesh/devmesh.hpp>
#include <devmesh/redistribute.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace dm = devmesh;
using namespace devmesh_test;

namespace {

struct args_t {
  std::string data, json, only;
  std::vector<int> scales{1, 8, 32};
  int reps = 5, iters = 3;
};

args_t parse(int argc, char** argv) {
  args_t a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--data") a.data = v;
    else if (k == "--json") a.json = v;
    else if (k == "--only") a.only = v;
    else if (k == "--reps") a.reps = std::max(1, std::atoi(v.c_str()));
    else if (k == "--iters") a.iters = std::max(1, std::atoi(v.c_str()));
    else if (k == "--scales") {
      a.scales.clear();
      for (std::size_t at = 0; at <= v.size();) {
        const auto comma = std::min(v.find(',', at), v.size());
        a.scales.push_back(std::atoi(v.substr(at, comma - at).c_str()));
        at = comma + 1;
      }
    } else {
      std::fprintf(stderr, "plan_ranking: unknown argument %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

/// One candidate of a case: its steps, modelled and measured time, chosen or not (with the
/// calibrated links), whether it is the plan devmesh chose before issue 42 (issue 20's rule:
/// among its recipes, within 1.25x of the fewest bytes by the even-block estimate, the fewest
/// collectives), and whether it is the plan chosen with the default links (uniform here).
struct candidate {
  std::string steps;
  double model_us = 0, mean_model_us = 0;
  std::vector<double> samples;
  double measured_us = 0;
  bool chosen = false, before = false;
  bool uniform = false;  // the plan chosen with every dim at the default link (what redistribute runs uncalibrated)
};

/// Spearman's rank correlation of x and y (average ranks for ties).
double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  const auto ranks = [](const std::vector<double>& v) {
    std::vector<std::size_t> idx(v.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
    std::vector<double> r(v.size());
    for (std::size_t i = 0; i < idx.size();) {
      std::size_t j = i;
      while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
      for (std::size_t k = i; k <= j; ++k) r[idx[k]] = (static_cast<double>(i + j)) / 2.0;
      i = j + 1;
    }
    return r;
  };
  const auto rx = ranks(x), ry = ranks(y);
  const double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / rx.size(), my = std::accumulate(ry.begin(), ry.end(), 0.0) / ry.size();
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < rx.size(); ++i)
    sxy += (rx[i] - mx) * (ry[i] - my), sxx += (rx[i] - mx) * (rx[i] - mx), syy += (ry[i] - my) * (ry[i] - my);
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 1.0;
}

struct totals {
  int cases = 0, several = 0, fastest = 0, within_10 = 0;
  int changed = 0, slower_than_before = 0;  // cases whose plan differs from issue 20's; >10% slower than it
  double log_ratio_before = 0;              // their log(chosen / issue 20's), summed
  long pairs_ordered = 0, pairs_agreeing = 0;
  std::vector<double> model, measured;  // every (case, candidate), each divided by its case's fastest
};

/// Plan p from spec src to spec dst run as dm::redistribute runs its own plan: one call of the
/// executor compiled once per backend (redistribute_runtime<Comm>: its checks, then the steps).
template <class DeviceMesh, class Spec, class Plan, class E>
void run_plan(const DeviceMesh& mesh, const Spec& src, const Spec& dst, const Plan& p, const E& ext,
              const std::vector<double>& in, std::vector<double>& out) {
  using Comm = typename DeviceMesh::communicator_type;
  const dm::detail::mesh_data_of<typename DeviceMesh::layout_type> values(mesh.layout());
  const auto shape = ext.shape();
  dm::detail::redistribute_runtime<Comm>::redistribute(
      dm::detail::group_site_of(mesh),
      {values.data(), src.table(), dst.table(), dm::detail::plan_data(p), shape, dm::element_type_of<double>, in.data(),
       in.size(), out.data(), out.size(), true},
      {});
}

/// One sample: `iters` runs of plan p after a barrier, the slowest rank's mean in microseconds.
template <class DeviceMesh, class Spec, class Plan, class E>
double sample(const DeviceMesh& mesh, const Spec& src, const Spec& dst, const Plan& p, const E& ext,
              const std::vector<double>& in, std::vector<double>& out, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < iters; ++i) run_plan(mesh, src, dst, p, ext, in, out);
  double t = (MPI_Wtime() - start) / iters * 1e6, slowest = 0;
  MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

/// True if two plans make the same steps (their reasons aside).
template <class Plan>
bool same_steps(const Plan& a, const Plan& b) {
  if (a.count != b.count) return false;
  for (int i = 0; i < a.count; ++i)
    if (a[i].kind != b[i].kind || a[i].group != b[i].group || a[i].op != b[i].op || !(a[i].before == b[i].before) ||
        !(a[i].after == b[i].after))
      return false;
  return true;
}

/// Every distinct candidate of src -> dst under `model`, with the chosen one and the one issue
/// 20's rule chose (before issue 42, by bytes) marked.
template <class Mesh, class Spec, int N>
std::vector<std::pair<dm::redistribute_plan<N>, candidate>> candidates_of(const Mesh& m, const Spec& src, const Spec& dst,
                                                                          const dm::plan_model<N>& model) {
  std::vector<std::pair<dm::redistribute_plan<N>, candidate>> out;
  std::vector<std::pair<dm::redistribute_plan<N>, std::string>> issue_20;  // its recipes' plans, in order
  const auto keep = [&](const auto& c, dm::detail::candidate_role role) {
    dm::redistribute_plan<N> p{};
    for (int i = 0; i < c.count; ++i) p.steps[i] = c.steps[i];
    p.count = c.count;
    const std::string text = dm::to_string(p, m);
    if (role == dm::detail::candidate_role::issue_20) issue_20.emplace_back(p, text);
    for (const auto& seen : out)
      if (same_steps(seen.first, p)) return;
    candidate k;
    k.steps = text;
    out.emplace_back(p, k);
  };
  const auto chosen = dm::detail::plan_of(src, dst, &model, keep);
  int sizes[Mesh::ndim]{};
  for (int d = 0; d < Mesh::ndim; ++d) sizes[d] = m.size(d);
  dm::detail::candidate_scores old;  // issue 20's rule, on its recipes
  for (const auto& [p, text] : issue_20)
    old.add({0, dm::detail::rough_cost(p, sizes, Mesh::ndim)}, p.collectives(), dm::detail::candidate_role::issue_20);
  const int before = std::max(0, old.issue_20_choice());
  auto uniform = model;  // the default links: every dim within a node (shared memory on MPI)
  for (int d = 0; d < Mesh::ndim; ++d) uniform.links[d] = dm::link_cost::shared_memory();
  const auto by_default = dm::detail::plan_of(src, dst, &uniform);
  for (auto& [p, c] : out)
    c.chosen = same_steps(p, chosen), c.before = same_steps(p, issue_20[before].first),
    c.uniform = same_steps(p, by_default);
  return out;
}

/// This rank's block under spec (as the tests make it): each element's global row-major index
/// modulo 97, times 1 + the rank's index in the group of the Partial dims (replicas alike, so
/// every plan must give the same tensor).
template <class Mesh, class Spec, class E>
std::vector<double> source_block(const Mesh& m, const Spec& spec, const E& ext, int r) {
  int partial = 0;
  for (int d = 0; d < Mesh::ndim; ++d)
    if (spec.table().at[d].is_partial()) partial = partial * m.size(d) + m.coordinate_unchecked(r, d);
  const auto shape = spec.local_shape(ext, r);
  std::vector<double> out;
  for (dm::tensor_index i = 0; i < spec.local_size(ext, r); ++i) {
    dm::tensor_index rest = i, flat = 0, stride = 1;
    for (int t = E::rank_value - 1; t >= 0; --t) {
      flat += spec.global_index(ext, r, t, rest % shape[t]) * stride;
      rest /= shape[t], stride *= ext.extent(t);
    }
    out.push_back(static_cast<double>(flat % 97) * (1 + partial));
  }
  return out;
}

/// The modelled time with each step's bytes the mean over the ranks instead of the most (what
/// 8 ranks on 2 cores pay: their copies share the cores), for comparison.
template <class Mesh, class Plan, class E, class Model>
double mean_model_us(const Mesh& m, const Plan& p, const E& ext, const Model& model) {
  double total = 0;
  for (const auto& s : p) {
    if (!s.communicates()) continue;
    double bytes = 0;
    for (int r = 0; r < m.size(); ++r) bytes += static_cast<double>(dm::cost_of(m, s, ext, r, 8).bytes_sent);
    total += model.group(s.group).time_us(bytes / m.size());
  }
  return total;
}

/// Runs every candidate once and checks that each gives the tensor the chosen plan gives (its
/// blocks through full_tensor: a Partial target's blocks may differ, its sum may not;
/// MPI_Abort if not); sets each one's modelled time.
template <class DeviceMesh, class Cands, class Spec, class E, class Model>
void check_alike(const DeviceMesh& mesh, Cands& cands, const Spec& src, const Spec& dst, const E& ext,
                 const Model& model, const std::vector<double>& in, std::vector<double>& out, const std::string& id) {
  std::vector<double> want, whole(static_cast<std::size_t>(ext.size()));
  for (int pass = 0; pass < 2; ++pass)
    for (auto& [p, k] : cands) {
      k.model_us = dm::modelled_time_us(mesh.layout(), p, ext, 8, model);
      k.mean_model_us = mean_model_us(mesh.layout(), p, ext, model);
      run_plan(mesh, src, dst, p, ext, in, out);
      dm::full_tensor(mesh, dst, ext, out, whole);
      if (pass == 0) {
        if (k.chosen) want = whole;
        continue;
      }
      int same = 1;
      for (std::size_t i = 0; i < whole.size(); ++i) same = same && std::abs(whole[i] - want[i]) <= 1e-9 * (1 + std::abs(want[i]));
      MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      if (same) continue;
      if (mesh.position() == 0) std::fprintf(stderr, "plan_ranking: %s: a candidate's blocks differ\n%s", id.c_str(), k.steps.c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/// The medians of a case's candidates, counted into sum; the case as a line of JSON.
template <class Cands>
std::string tally(const json& c, int scale, dm::tensor_index bytes, Cands& cands, totals& sum) {
  const std::size_t n = cands.size();
  double fastest = 0, chosen_us = 0, least_model = 0, before_us = 0;
  for (auto& [p, k] : cands) {
    std::sort(k.samples.begin(), k.samples.end());
    k.measured_us = k.samples[k.samples.size() / 2];
    fastest = fastest == 0 || k.measured_us < fastest ? k.measured_us : fastest;
    least_model = least_model == 0 || k.model_us < least_model ? k.model_us : least_model;
    if (k.chosen) chosen_us = k.measured_us;
    if (k.before) before_us = k.measured_us;
  }
  ++sum.cases;
  if (chosen_us != before_us) {
    ++sum.changed, sum.slower_than_before += chosen_us > 1.1 * before_us;
    sum.log_ratio_before += std::log(chosen_us / before_us);
  }
  if (n >= 2) {
    ++sum.several, sum.fastest += chosen_us == fastest, sum.within_10 += chosen_us <= 1.1 * fastest;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) {
        const double by_model = cands[i].second.model_us - cands[j].second.model_us;
        const double by_clock = cands[i].second.measured_us - cands[j].second.measured_us;
        ++sum.pairs_ordered, sum.pairs_agreeing += (by_model < 0) == (by_clock < 0);
      }
  }
  std::string line = "{\"pair\": \"" + c["id"].str + "\", \"scale\": " + std::to_string(scale) +
                     ", \"tensor_bytes\": " + std::to_string(bytes) + ", \"candidates\": [";
  for (std::size_t i = 0; i < n; ++i) {
    const auto& k = cands[i].second;
    if (n >= 2) sum.model.push_back(k.model_us / least_model), sum.measured.push_back(k.measured_us / fastest);
    std::string steps;
    for (char ch : k.steps) steps += ch == '\n' ? std::string("\\n") : ch == '"' ? std::string("\\\"") : std::string(1, ch);
    char nums[256];
    std::snprintf(nums, sizeof nums,
                  "\"model_us\": %.2f, \"mean_model_us\": %.2f, \"measured_us\": %.2f, \"chosen\": %s, "
                  "\"before\": %s, \"uniform\": %s",
                  k.model_us, k.mean_model_us, k.measured_us, k.chosen ? "true" : "false", k.before ? "true" : "false",
                  k.uniform ? "true" : "false");
    std::string samples;
    for (double t : k.samples) {
      char v[32];
      std::snprintf(v, sizeof v, "%s%.1f", samples.empty() ? "" : ", ", t);
      samples += v;
    }
    line += (i ? ", {" : "{") + std::string("\"steps\": \"") + steps + "\", " + nums + ", \"samples_us\": [" +
            samples + "]}";
  }
  return line + "]}";
}

/// One case: the pair at one scale, every candidate timed; its line of JSON.
template <int R, class DeviceMesh>
std::string run_case(const json& c, const DeviceMesh& mesh, int scale, const args_t& a, totals& sum) {
  using Mesh = typename DeviceMesh::layout_type;
  const Mesh m = mesh.layout();
  std::array<dm::tensor_index, R> shape{};
  for (int t = 0; t < R; ++t) shape[t] = static_cast<dm::tensor_index>(c["tensor_shape"].items[t].num) * scale;
  const auto ext = dm::dextents<R>::from_array(shape);
  std::vector<parsed> ps, pd;
  for (const json& p : c["src"].items) ps.push_back(parse_placement(p.str));
  for (const json& p : c["dst"].items) pd.push_back(parse_placement(p.str));
  std::vector<int> sizes;
  for (int d = 0; d < Mesh::ndim; ++d) sizes.push_back(m.size(d));
  const auto src = spec_of(m, ps, sizes), dst = spec_of(m, pd, sizes);
  const auto model = dm::plan_model_of(mesh, ext, 8);
  auto cands = candidates_of(m, src, dst, model);
  const int r = mesh.position();
  std::vector<double> in = source_block(m, src, ext, r), out(static_cast<std::size_t>(dst.local_size(ext, r)));
  check_alike(mesh, cands, src, dst, ext, model, in, out, c["id"].str);
  const std::size_t n = cands.size();
  for (int rep = 0; rep < a.reps; ++rep)  // forward, then backward: each candidate alike in the order
    for (std::size_t j = 0; j < n; ++j) {
      auto& [p, k] = cands[rep % 2 ? n - 1 - j : j];
      k.samples.push_back(sample(mesh, src, dst, p, ext, in, out, a.iters));
    }
  return tally(c, scale, ext.size() * 8, cands, sum);
}

}  // namespace

int main(int argc, char** argv) {
  dm::mpi::environment env(argc, argv);
  const args_t a = parse(argc, argv);
  const json data = load(a.data.c_str());
  auto world = dm::mpi::world();
  const bool root = world.rank() == 0;
  auto m1 = dm::init_device_mesh(world, mesh1(8));
  auto m2 = dm::init_device_mesh(world, mesh2(2, 4));
  auto m3 = dm::init_device_mesh(world, mesh3(2, 2, 2));
  const auto c1 = dm::calibrate(m1), c2 = dm::calibrate(m2), c3 = dm::calibrate(m3);
  if (root)
    std::printf("calibrated (medians of the slowest rank's times):\n%s%s%s\n", dm::to_string(c1).c_str(), dm::to_string(c2).c_str(),
                dm::to_string(c3).c_str());
  std::FILE* out = root && !a.json.empty() ? std::fopen(a.json.c_str(), "w") : nullptr;
  totals sum;
  for (const json& c : data["cases"].items) {
    if (c.has("error") || (!a.only.empty() && c["id"].str.find(a.only) == std::string::npos)) continue;
    const auto ndim = c["mesh"]["shape"].items.size();
    const bool two = c["tensor_shape"].items.size() == 2;
    for (int s : a.scales) {
      std::string line;
      if (ndim == 1) line = two ? run_case<2>(c, m1, s, a, sum) : run_case<1>(c, m1, s, a, sum);
      else if (ndim == 2) line = two ? run_case<2>(c, m2, s, a, sum) : run_case<1>(c, m2, s, a, sum);
      else line = two ? run_case<2>(c, m3, s, a, sum) : run_case<1>(c, m3, s, a, sum);
      if (out) std::fprintf(out, "%s\n", line.c_str());
    }
  }
  if (out) std::fclose(out);
  if (root)
    std::printf("%d cases (pairs x sizes), %d with two or more candidates: the chosen plan the fastest measured on %d "
                "(%.1f%%), within 10%% of it on %d (%.1f%%); candidate pairs ordered alike by the model and the "
                "clock: %ld of %ld (%.1f%%); Spearman's rank correlation of modelled and measured time (each "
                "relative to its case's fastest) over %zu candidates: %.3f\n",
                sum.cases, sum.several, sum.fastest, 100.0 * sum.fastest / std::max(1, sum.several), sum.within_10,
                100.0 * sum.within_10 / std::max(1, sum.several), sum.pairs_agreeing, sum.pairs_ordered,
                100.0 * sum.pairs_agreeing / std::max(1L, sum.pairs_ordered), sum.model.size(),
                spearman(sum.model, sum.measured));
  if (root)
    std::printf("plans that differ from the one chosen before issue 42 (issue 20's rule): %d of %d cases; more "
                "than 10%% slower than it: %d; their geometric mean time against it: %.3fx\n",
                sum.changed, sum.cases, sum.slower_than_before,
                std::exp(sum.log_ratio_before / std::max(1, sum.changed)));
  return 0;
}
