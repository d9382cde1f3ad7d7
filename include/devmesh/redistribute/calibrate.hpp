// devmesh/redistribute/calibrate.hpp: dm::calibrate(mesh), each dim's links measured for
// redistribute's planner (sharding/plan_model.hpp), collectively over the mesh: a ping (the
// latency: an all_reduce of one element over the dim's groups) and a bandwidth probe (an
// all_to_allv of probe_bytes per rank, as redistribute's exchanges send), each a fixed number
// of times (short and bounded: no loop waits for a time to pass, so every rank makes the same
// calls). A sample is the slowest rank's time (a collective ends when its slowest rank does:
// one all_reduce over the mesh after each, outside the timing), so every rank holds the same
// samples and takes the same medians: the same answer everywhere. The mesh keeps it
// (device_mesh::keep_measured_links): later redistributes price plans with it, options.links
// still first.
//
//   const auto c = dm::calibrate(mesh);       // collective over every rank of the mesh
//   if (mesh.rank() == 0) std::cout << dm::to_string(c);
//
// Host-memory backends (MPI): timing a device backend needs its streams synchronized, which
// this does not do (set options.links on NCCL).
#pragma once
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "../core/link_cost.hpp"
#include "../runtime/device_mesh.hpp"
#include "../runtime/element_type.hpp"
#include "../runtime/mesh_runtime.hpp"
#include "memory.hpp"

namespace devmesh {

/// How much calibrate measures.
struct calibrate_options {
  int latency_reps = 31;                  ///< timed one-element all_reduces per dim (after 2 untimed)
  int bandwidth_reps = 7;                 ///< timed all_to_allv probes per dim (after 1 untimed)
  std::size_t probe_bytes = std::size_t{1} << 20;  ///< bytes one rank sends in a probe, split among its group
};

/// One dim as calibrate measured it: the medians of its samples (each the slowest rank's), and
/// the cost made of them.
struct dim_calibration {
  std::string name;
  int size = 0;                  ///< ranks in each of its groups
  double latency_us = 0;         ///< a one-element all_reduce
  double probe_us = 0;           ///< an all_to_allv of probe_bytes per rank
  std::size_t probe_bytes = 0;   ///< what one rank sent in a probe
  link_cost cost;                ///< latency_us, and probe_bytes over (probe_us - latency_us)
};

/// What calibrate measured: every dim of the mesh of size 2 or more, in order.
struct calibration {
  std::vector<dim_calibration> dims;
};

/// The calibration as a table, one row per dim.
inline std::string to_string(const calibration& c) {
  std::string out = "dim      size  ping (us)  probe (us)  probe (KiB)  latency (us)  bandwidth (GB/s)\n";
  char row[200];
  for (const auto& d : c.dims) {
    std::snprintf(row, sizeof row, "%-8s %4d  %9.2f  %10.2f  %11zu  %12.2f  %16.2f\n", d.name.c_str(), d.size,
                  d.latency_us, d.probe_us, d.probe_bytes / 1024, d.cost.latency_us, d.cost.gbytes_per_s);
    out += row;
  }
  return out;
}

namespace detail {

/// The median of v (v reordered).
inline double median_of(std::vector<double>& v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

/// Times f() reps times after `warm` untimed calls, each sample the slowest rank's (slowest(t):
/// the maximum over the mesh); the median in microseconds, the same on every rank.
template <class F, class Slowest>
double median_us(int warm, int reps, F&& f, const Slowest& slowest) {
  for (int i = 0; i < warm; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(slowest(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count()));
  }
  return median_of(t);
}

/// A collective of doubles on the communicator of the dims `dims` of mesh (made on first use, as
/// flattened_comm), made as the typed collectives and redistribute's steps are: recorded in the
/// flight record and bounded under the watchdog. `issue(c, watch...)` makes the call on c.
template <class Layout, class Comm, class Issue>
void collective_on_dims(const device_mesh<Layout, Comm>& mesh, unsigned dims, std::string_view what,
                        std::size_t count, const Issue& issue) {
  const group_site<Comm> on = group_site_of(mesh);
  const auto& e = on.entry(dims);
  mesh_runtime<Comm>::collective(
      on.state, on.watch, e, what, element_type_of<double>.name, count,
      [&] { return "dims '" + e.name + "' of " + to_string(mesh.layout()); },
      [&](const Comm& c, watch_ptr<Comm> w) {
        if constexpr (std::is_same_v<watch_ptr<Comm>, std::nullptr_t>) issue(c);
        else if (w) issue(c, w);
        else issue(c);
      });
}

/// This rank's medians on dim d of mesh: the ping, then the probe (bytes sent into *sent).
template <class Layout, class Comm>
std::pair<double, double> measure_dim(const device_mesh<Layout, Comm>& mesh, int d, const calibrate_options& o,
                                      std::size_t* sent) {
  const unsigned bits = 1u << d;
  const auto n = static_cast<std::size_t>(mesh.layout().size(d));
  const typename Comm::stream_type stream{};
  const auto slowest = [&](double mine) {  // over every rank of the mesh
    double most = 0;
    collective_on_dims(mesh, all_dims_of<Layout>(), "all_reduce", 1, [&](const auto& c, auto... watch) {
      c.all_reduce(&mine, &most, 1, op::max, stream, watch...);
    });
    return most;
  };
  double one[1] = {1.0}, sum[1] = {0.0};
  const double ping = median_us(2, o.latency_reps, [&] {
    collective_on_dims(mesh, bits, "all_reduce", 1, [&](const auto& c, auto... watch) {
      c.all_reduce(one, sum, 1, op::sum, stream, watch...);
    });
  }, slowest);
  const std::size_t each = std::max<std::size_t>(1, o.probe_bytes / sizeof(double) / (n - 1));
  std::vector<double> out(each * n, 1.0), in(each * n);
  std::vector<std::size_t> counts(n, each), displs(n);
  for (std::size_t i = 0; i < n; ++i) displs[i] = i * each;
  *sent = each * (n - 1) * sizeof(double);
  const double probe = median_us(1, o.bandwidth_reps, [&] {
    collective_on_dims(mesh, bits, "all_to_allv", each * n, [&](const auto& c, auto... watch) {
      c.all_to_allv(out.data(), std::span<const std::size_t>(counts), std::span<const std::size_t>(displs),
                    in.data(), std::span<const std::size_t>(counts), std::span<const std::size_t>(displs),
                    element_type_of<double>, stream, watch...);
    });
  }, slowest);
  return {ping, probe};
}

}  // namespace detail

/// Measures every dim of mesh (size 2 or more), each sample the slowest rank's, keeps the
/// medians on the mesh (options.links still come first) and returns them: the same on every
/// rank. Collective over every rank of the mesh; a creation step, as flatten is (not while
/// another thread uses the mesh).
template <class Layout, class Comm>
calibration calibrate(const device_mesh<Layout, Comm>& mesh, const calibrate_options& o = {}) {
  static_assert(std::is_same_v<detail::memory_space_t<Comm>, detail::host_memory>,
                "devmesh: calibrate times collectives on the host (MPI); on a device backend set options.links");
  if (o.latency_reps < 1 || o.bandwidth_reps < 1 || o.probe_bytes < sizeof(double))
    throw mesh_error("devmesh: calibrate: latency_reps and bandwidth_reps must be at least 1, probe_bytes at least 8");
  std::vector<double> times;  // per dim: ping, probe (the same on every rank)
  std::vector<std::size_t> sent;
  for (int d = 0; d < Layout::ndim; ++d) {
    if (mesh.layout().size(d) < 2) continue;
    sent.push_back(0);
    const auto [ping, probe] = detail::measure_dim(mesh, d, o, &sent.back());
    times.push_back(ping), times.push_back(probe);
  }
  calibration out;
  options_by_dim<link_cost> kept;
  for (int d = 0, i = 0; d < Layout::ndim; ++d) {
    if (mesh.layout().size(d) < 2) continue;
    const double ping = times[2 * i], probe = times[2 * i + 1];
    const std::size_t bytes = sent[static_cast<std::size_t>(i++)];
    // the bytes over the probe's time beyond a ping (at least a tenth of it: a probe as fast as a ping)
    const double moving = std::max(probe - ping, probe / 10);
    const link_cost cost{ping, static_cast<double>(bytes) / moving / 1e3};
    out.dims.push_back({std::string(mesh.layout().name(d)), mesh.layout().size(d), ping, probe, bytes, cost});
    kept[mesh.layout().name(d)] = cost;
  }
  mesh.keep_measured_links(kept);
  return out;
}

}  // namespace devmesh
