// tests/gpu/bench.cpp: check 5, bus bandwidth through devmesh against raw NCCL calls on the
// same communicator, nccl-tests style (its PERFORMANCE.md):
//   algbw = size / time;  busbw = algbw * 2(n-1)/n (all_reduce), * (n-1)/n (all_gather,
//   reduce_scatter); size = the larger buffer (all_reduce: either; all_gather: recv;
//   reduce_scatter: send), float elements, op sum, out of place.
// Per size: 5 warm-up calls, then 3 rounds that each time 20 calls through devmesh and 20
// raw calls (alternating), time = wall clock of the 20 calls to stream completion / 20,
// averaged over the ranks; the median round is reported. Every round's result is checked.
#include <devmesh/devmesh.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench.hpp"
#include "common.hpp"

namespace gpu_check {

namespace dm = devmesh;

namespace {

enum class coll { all_reduce, all_gather, reduce_scatter };

const char* coll_name(coll c) {
  return c == coll::all_reduce ? "all_reduce" : c == coll::all_gather ? "all_gather" : "reduce_scatter";
}
double bus_factor(coll c, int n) {
  return c == coll::all_reduce ? 2.0 * (n - 1) / n : static_cast<double>(n - 1) / n;
}

/// A raw NCCL call's result on a non-blocking communicator: ncclInProgress is polled until
/// it settles (as NCCL documents), without sleeping.
ncclResult_t settle(ncclComm_t comm, ncclResult_t r, long& in_progress) {
  if (r != ncclInProgress) return r;
  ++in_progress;
  ncclResult_t state = ncclInProgress;
  while (state == ncclInProgress)
    if (ncclResult_t q = ncclCommGetAsyncError(comm, &state); q != ncclSuccess) return q;
  return state;
}

struct row {
  std::size_t bytes = 0, count = 0;
  double dm_us = 0, raw_us = 0;
};

double median3(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string fixed(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

std::string human(std::size_t bytes) {
  if (bytes >= (1u << 20)) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1u << 10)) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

}  // namespace

void bench(report& rep, const dm::nccl::communicator& world, const options& opt) {
  const int n = world.size(), me = world.rank();
  const std::size_t un = static_cast<std::size_t>(n);
  auto mesh = dm::init_device_mesh(world, dm::mesh<dm::dim<"world">>(n));  // its dim reuses `world`
  const ncclComm_t raw = mesh.comm().native();
  stream s;
  const std::size_t max_elems = std::max<std::size_t>(opt.bench_max_bytes / sizeof(float), 2 * un);
  if (opt.bench_iters < 1) throw std::runtime_error("--bench-iters: at least 1, not " + std::to_string(opt.bench_iters));
  const int iters = opt.bench_iters, warmup = std::min(iters, 5);
  constexpr int rounds = 3;

  // Inputs: rank r puts (r + i) % 7 at index i; sums stay exact.
  dbuf<float> send(max_elems), recv(max_elems);
  {
    std::vector<float> h(max_elems);
    for (std::size_t i = 0; i < max_elems; ++i) h[i] = static_cast<float>((static_cast<std::size_t>(me) + i) % 7);
    send.write(h, s);
  }
  double sum_of[7];
  for (std::size_t j = 0; j < 7; ++j) {
    sum_of[j] = 0;
    for (std::size_t r = 0; r < un; ++r) sum_of[j] += static_cast<double>((r + j) % 7);
  }

  std::ostringstream md;
  md << "## busbw: devmesh against raw NCCL\n\n"
     << n << " rank(s), one GPU each; float, op sum, out of place, on a non-blocking stream; the communicator "
     << "is devmesh's default (non-blocking) world, shared by both columns. " << warmup << " warm-up calls, then "
     << rounds << " rounds of " << iters << " devmesh and " << iters << " raw calls (alternating); time per call "
     << "averaged over the ranks, median round. algbw = size / time; busbw = algbw x 2(n-1)/n for all_reduce, "
     << "x (n-1)/n for all_gather and reduce_scatter (nccl-tests, PERFORMANCE.md)"
     << (n == 1 ? "; with one rank busbw is 0 by definition (nothing crosses a link)" : "") << ".\n\n";

  for (coll c : {coll::all_reduce, coll::all_gather, coll::reduce_scatter}) {
    std::vector<row> rows;
    mismatches wrong;
    long in_progress = 0;
    std::string failure;
    for (std::size_t bytes = 8; bytes <= opt.bench_max_bytes && failure.empty(); bytes *= 2) {
      // count: elements per rank's smaller buffer; size: the larger buffer in bytes.
      const std::size_t count = c == coll::all_reduce ? std::max<std::size_t>(bytes / sizeof(float), 1)
                                                      : std::max<std::size_t>(bytes / sizeof(float) / un, 1);
      const std::size_t big = c == coll::all_reduce ? count : count * un;
      if (big > max_elems) break;
      auto via_devmesh = [&] {
        switch (c) {
          case coll::all_reduce:
            mesh.all_reduce(std::span<const float>(send.data(), count), std::span<float>(recv.data(), count), dm::op::sum, s);
            break;
          case coll::all_gather:
            mesh.all_gather(std::span<const float>(send.data(), count), std::span<float>(recv.data(), count * un), s);
            break;
          case coll::reduce_scatter:
            mesh.reduce_scatter(std::span<const float>(send.data(), count * un), std::span<float>(recv.data(), count),
                                dm::op::sum, s);
            break;
        }
      };
      auto via_raw = [&] {
        ncclResult_t r = ncclSuccess;
        switch (c) {
          case coll::all_reduce: r = ncclAllReduce(send.data(), recv.data(), count, ncclFloat32, ncclSum, raw, s); break;
          case coll::all_gather: r = ncclAllGather(send.data(), recv.data(), count, ncclFloat32, raw, s); break;
          case coll::reduce_scatter:
            r = ncclReduceScatter(send.data(), recv.data(), count, ncclFloat32, ncclSum, raw, s);
            break;
        }
        r = settle(raw, r, in_progress);
        if (r != ncclSuccess) throw std::runtime_error(std::string("raw NCCL call: ") + ncclGetErrorString(r));
      };
      auto verify = [&](const char* path) {
        const std::size_t got_n = c == coll::all_gather ? count * un : count;
        const auto got = recv.read(got_n);
        for (std::size_t i = 0; i < got_n; ++i) {
          double want = 0;
          switch (c) {
            case coll::all_reduce: want = sum_of[i % 7]; break;
            case coll::all_gather: want = static_cast<double>((i / count + i % count) % 7); break;
            case coll::reduce_scatter: want = sum_of[(static_cast<std::size_t>(me) * count + i) % 7]; break;
          }
          if (static_cast<double>(got[i]) != want) {
            wrong.add(std::string(path) + " at " + human(bytes) + ": [" + std::to_string(i) + "] = " +
                      std::to_string(got[i]) + ", expected " + std::to_string(want));
            return;
          }
        }
      };
      auto timed = [&](auto&& call, const char* path) {
        recv.fill_bytes(0xff, c == coll::all_gather ? count * un : count, s);  // NaN: a call that writes nothing fails
        if (n > 1) MPI_Barrier(MPI_COMM_WORLD);
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; ++i) call();
        std::string err;
        if (!wait_stream(s, 300, err)) throw std::runtime_error(std::string(path) + ": " + err);
        double us = seconds_since(t0) * 1e6 / iters, sum = us;
        if (n > 1) MPI_Allreduce(&us, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        verify(path);
        return sum / n;
      };
      try {
        for (int i = 0; i < warmup; ++i) via_devmesh(), via_raw();
        std::string err;
        if (!wait_stream(s, 300, err)) throw std::runtime_error("warm-up: " + err);
        std::vector<double> d, r;
        for (int k = 0; k < rounds; ++k) {
          d.push_back(timed(via_devmesh, "devmesh"));
          r.push_back(timed(via_raw, "raw"));
        }
        rows.push_back({big * sizeof(float), count, median3(d), median3(r)});
      } catch (const std::exception& e) {
        failure = std::string("at ") + human(bytes) + ": " + e.what();
      }
    }

    // nccl-tests style table on stdout, Markdown in the report.
    const double f = bus_factor(c, n);
    std::ostringstream out;
    out << "# " << coll_name(c) << " (float, sum), " << n << " rank(s); busbw = algbw x " << fixed(f, 3) << "\n"
        << "#        size      count   devmesh: time(us)  algbw(GB/s)  busbw(GB/s)   raw: time(us)  algbw(GB/s)  busbw(GB/s)  devmesh/raw\n";
    md << "### " << coll_name(c) << "\n\n"
       << "| size (B) | count | devmesh time (us) | devmesh algbw (GB/s) | devmesh busbw (GB/s) | raw time (us) | "
          "raw algbw (GB/s) | raw busbw (GB/s) | devmesh / raw time |\n"
       << "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    std::string slow;
    for (const row& x : rows) {
      const double da = static_cast<double>(x.bytes) / (x.dm_us * 1e3), ra = static_cast<double>(x.bytes) / (x.raw_us * 1e3);
      char line[256];
      std::snprintf(line, sizeof line, "%13zu %10zu   %17.2f %12.2f %12.2f %15.2f %12.2f %12.2f %12.3f\n", x.bytes,
                    x.count, x.dm_us, da, da * f, x.raw_us, ra, ra * f, x.dm_us / x.raw_us);
      out << line;
      md << "| " << x.bytes << " | " << x.count << " | " << fixed(x.dm_us, 2) << " | " << fixed(da, 2) << " | "
         << fixed(da * f, 2) << " | " << fixed(x.raw_us, 2) << " | " << fixed(ra, 2) << " | " << fixed(ra * f, 2) << " | "
         << fixed(x.dm_us / x.raw_us, 3) << " |\n";
      if (x.dm_us > 1.10 * x.raw_us + 10.0 && slow.empty())
        slow = human(x.bytes) + ": devmesh " + fixed(x.dm_us, 1) + " us, raw " + fixed(x.raw_us, 1) + " us";
    }
    long all_in_progress = in_progress;
    if (n > 1) MPI_Allreduce(&in_progress, &all_in_progress, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    md << "\nRaw calls that returned ncclInProgress (all ranks): " << all_in_progress << ".\n\n";
    rep.note(out.str());

    const std::string range = rows.empty() ? std::string("no size") : "8 B .. " + human(rows.back().bytes);
    rep.check(std::string("busbw ") + coll_name(c) + ": devmesh and raw NCCL results correct at every size",
              failure.empty() && wrong.ok() && !rows.empty(),
              !failure.empty() ? failure : !wrong.ok() ? wrong.text() : range + ", " + std::to_string(rows.size()) + " sizes");
    if (on_double)
      rep.skip(std::string("busbw ") + coll_name(c) + ": devmesh within 10% + 10 us of raw NCCL",
               "timings over the test double mean nothing");
    else
      rep.check(std::string("busbw ") + coll_name(c) + ": devmesh within 10% + 10 us of raw NCCL at every size",
                slow.empty() && !rows.empty(), slow.empty() ? range : "slower at " + slow);
  }

  if (me == 0 && !opt.report_path.empty()) {
    const std::filesystem::path p(opt.report_path);
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
    std::ofstream f(p);
    char when[64];
    const std::time_t now = std::time(nullptr);
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S %Z", std::localtime(&now));
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    f << "# gpu-check report\n\nWritten by `gpu_check` (tests/gpu; `scripts/gpu-check` runs it) on " << host << ", "
      << when << ".\n\n"
      << (on_double ? "**Over the NCCL test double: no GPU; the timings mean nothing.**\n\n" : "")
      << opt.device_facts_markdown << "\n"
      << md.str();
    rep.check("busbw report written", static_cast<bool>(f), opt.report_path);
  } else {
    rep.check("busbw report written", true, opt.report_path.empty() ? "no --report given" : "by rank 0");
  }
}

}  // namespace gpu_check
