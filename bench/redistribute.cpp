// bench/redistribute.cpp: dm::redistribute against the raw MPI collectives its plan issues, on
// a (2,4) mesh of 8 ranks (issue 20's goal: within 1.02x of those collectives from 64 KiB per
// rank), and against a hand-written MPI program that makes the same block. For each pair and
// size, four sides alternate (ABBA over --reps repetitions; each repetition times `iters`
// back-to-back calls after a barrier and keeps the slowest rank's mean):
//   devmesh       dm::redistribute (plan, checks, the collectives; packing and unpacking
//                 where it packs, the rank's own part copied where the call does not);
//   raw           the MPI calls it issues, with the same counts and displacements (its own
//                 part in the call where devmesh puts it there) on buffers prepared once:
//                 what the goal compares with;
//   packed        the contiguous calls of the same plan on buffers prepared once: what a
//                 program issues that already holds its data packed as the collective wants
//                 it (no packing, no copy of its own part): a lower bound, not a program;
//   hand-written  what an MPI programmer writes for the pair, from the same `in` to the same
//                 `out` (one collective on the mesh's communicators, the pack or unpack loops
//                 the layout needs; checked equal to devmesh's `out` before timing);
//   unchecked     dm::redistribute with dm::no_call_check: without the agreement on the call
//                 that options.check_sharding_calls makes by default (devmesh/unchecked: its cost).
// Reported: medians and the ratios, as a table and, with --json FILE, one JSON row per line.
// Sizes from --min-kib (64) to --max-kib (1024) per rank, by 4x.
// usage: mpirun -np 8 redistribute [--min-kib K] [--max-kib K] [--reps R] [--json FILE]
#include <devmesh/devmesh.hpp>
#include <devmesh/redistribute.hpp>
#include <devmesh/redistribute/impl/survey.hpp>  // the survey of an exchange: to issue the same call

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace dm = devmesh;
using mesh24 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
using device_mesh = dm::device_mesh<mesh24, dm::mpi::communicator>;
using spec = dm::dynamic_sharding<mesh24>;

namespace {

/// One raw collective of a plan step, its counts computed once.
struct raw_step {
  dm::step_kind kind = dm::step_kind::local;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Op op = MPI_SUM;
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
  std::vector<double> send, recv;
};

/// Displacements that pack blocks of `counts` in rank order.
std::vector<int> displs_of(const std::vector<int>& counts) {
  std::vector<int> d(counts.size());
  for (std::size_t i = 1; i < counts.size(); ++i) d[i] = d[i - 1] + counts[i - 1];
  return d;
}

/// An exchange step's MPI_Alltoallv as redistribute issues it on this rank (redistribute/
/// impl/steps.hpp: run_exchange, on its survey), its counts and displacements in r: in place on
/// a side whose parts are one range each, packed in rank order on the other; its own part in
/// the call where both sides are in place.
void exchange_as_issued(const mesh24& m, const dm::plan_step<2>& s, const dm::dextents<2>& ext, int pos, raw_step& r) {
  const dm::detail::mesh_data_of<mesh24> values(m);
  const dm::detail::mesh_data data = values.data();
  const auto shape = ext.shape();
  dm::detail::group_counts c;
  c.me = dm::detail::group_positions(data, s.group, pos, c.group);
  dm::detail::step_blocks blocks(data, shape, s.before, s.after, 2 * static_cast<int>(c.group.size()));
  const dm::detail::exchange_sides x = dm::detail::survey_exchange(blocks, pos, c);
  dm::detail::own_part_in_call(x, c);
  for (std::size_t i = 0; i < c.group.size(); ++i) {
    r.send_counts.push_back(static_cast<int>(c.sent[i])), r.recv_counts.push_back(static_cast<int>(c.received[i]));
    r.send_displs.push_back(static_cast<int>(c.send_at[i])), r.recv_displs.push_back(static_cast<int>(c.recv_at[i]));
  }
  if (!x.send_in_place) r.send_displs = displs_of(r.send_counts);
  if (!x.recv_in_place) r.recv_displs = displs_of(r.recv_counts);
}

/// The collectives the plan issues on this rank, with their counts (the plan's own): as
/// redistribute issues them, or (as_issued false) contiguous, the data packed beforehand.
std::vector<raw_step> raw_steps(const device_mesh& mesh, const dm::redistribute_plan<2>& plan,
                                const dm::dextents<2>& ext, bool as_issued) {
  const mesh24& m = mesh.layout();
  const int pos = mesh.position();
  std::vector<raw_step> out;
  for (const auto& s : plan) {
    if (!s.communicates()) continue;
    raw_step r;
    r.kind = s.kind;
    r.comm = mesh.flattened_comm(s.group).native();
    const auto a = dm::detail::spec_of_table(m, s.before), b = dm::detail::spec_of_table(m, s.after);
    std::vector<int> group;
    dm::detail::for_each_in_group(m, s.group, pos, [&](int, int q) { group.push_back(q); });
    const bool exchange = s.kind == dm::step_kind::all_gather || s.kind == dm::step_kind::all_to_all;
    if (as_issued && exchange) exchange_as_issued(m, s, ext, pos, r);
    for (int q : as_issued && exchange ? std::vector<int>() : group) {
      const bool me = q == pos;
      switch (s.kind) {
        case dm::step_kind::reduce_scatter:
          r.recv_counts.push_back(static_cast<int>(b.local_size(ext, q)));
          break;
        case dm::step_kind::all_gather:
        case dm::step_kind::all_to_all:
          r.send_counts.push_back(me ? 0 : static_cast<int>(dm::detail::common_elements(a, pos, b, q, ext)));
          r.recv_counts.push_back(me ? 0 : static_cast<int>(dm::detail::common_elements(a, q, b, pos, ext)));
          break;
        default: break;
      }
    }
    if (!(as_issued && exchange)) r.send_displs = displs_of(r.send_counts), r.recv_displs = displs_of(r.recv_counts);
    const auto n = static_cast<std::size_t>(a.local_size(ext, pos));
    r.send.assign(std::max<std::size_t>(n, 1), 1.0);
    r.recv.assign(std::max<std::size_t>(static_cast<std::size_t>(b.local_size(ext, pos)), 1), 1.0);
    out.push_back(std::move(r));
  }
  return out;
}

void run_raw(std::vector<raw_step>& steps) {
  for (auto& r : steps) {
    switch (r.kind) {
      case dm::step_kind::all_reduce:  // out of place, as redistribute's in and out are
        MPI_Allreduce(r.send.data(), r.recv.data(), static_cast<int>(r.send.size()), MPI_DOUBLE, r.op, r.comm);
        break;
      case dm::step_kind::reduce_scatter:
        MPI_Reduce_scatter(r.send.data(), r.recv.data(), r.recv_counts.data(), MPI_DOUBLE, r.op, r.comm);
        break;
      case dm::step_kind::all_gather:
      case dm::step_kind::all_to_all:
        MPI_Alltoallv(r.send.data(), r.send_counts.data(), r.send_displs.data(), MPI_DOUBLE, r.recv.data(),
                      r.recv_counts.data(), r.recv_displs.data(), MPI_DOUBLE, r.comm);
        break;
      case dm::step_kind::local: break;
    }
  }
}

/// The hand-written program for pair `from -> to` on the (dp=2, tp=4) mesh, an n x n tensor
/// (n a multiple of 8; rank (d, t) at position 4d + t): `in` to `out`, as an MPI programmer
/// writes it. Empty for a pair it does not know.
std::function<void()> hand_written(const device_mesh& mesh, const std::string& from, const std::string& to, long n,
                                   const std::vector<double>& in, std::vector<double>& out,
                                   std::vector<double>& stage) {
  const int pos = mesh.position(), d = pos / 4, t = pos % 4;
  const MPI_Comm all = mesh.flattened_comm(3u).native(), dp = mesh.comm<"dp">().native();
  const long r8 = n / 8, r4 = n / 4, r2 = n / 2, c4 = n / 4;
  const auto i = [](long v) { return static_cast<int>(v); };
  if (from == "S(0),S(0)" && to == "R,S(0)")  // row block 4d+t to the two ranks whose row block of 4 holds it
    return [=, &in, &out] {
      int sc[8]{}, sd[8]{}, rc[8]{}, rd[8]{};
      for (int q = 0; q < 8; ++q) {
        if (q % 4 == pos / 2) sc[q] = i(r8 * n);
        if (q / 2 == t) rc[q] = i(r8 * n), rd[q] = i((q - 2 * t) * r8 * n);
      }
      MPI_Alltoallv(in.data(), sc, sd, MPI_DOUBLE, out.data(), rc, rd, MPI_DOUBLE, all);
    };
  if (from == "S(0),R" && to == "R,S(1)")  // pack this rank's columns of its rows; all-gather over dp
    return [=, &in, &out, &stage] {
      for (long r = 0; r < r2; ++r) std::copy_n(in.data() + r * n + t * c4, c4, stage.data() + r * c4);
      MPI_Allgather(stage.data(), i(r2 * c4), MPI_DOUBLE, out.data(), i(r2 * c4), MPI_DOUBLE, dp);
    };
  if (from == "P(sum),R" && to == "R,S(0)")  // sum this rank's rows over dp
    return [=, &in, &out] { MPI_Allreduce(in.data() + t * r4 * n, out.data(), i(r4 * n), MPI_DOUBLE, MPI_SUM, dp); };
  if (from == "S(0),S(1)" && to == "R,R")  // all-gather the tiles; unpack them into rows
    return [=, &in, &out, &stage] {
      MPI_Allgather(in.data(), i(r2 * c4), MPI_DOUBLE, stage.data(), i(r2 * c4), MPI_DOUBLE, all);
      for (int q = 0; q < 8; ++q)
        for (long r = 0; r < r2; ++r)
          std::copy_n(stage.data() + q * r2 * c4 + r * c4, c4, out.data() + ((q / 4) * r2 + r) * n + (q % 4) * c4);
    };
  if (from == "P(sum),P(sum)" && to == "R,R")
    return [=, &in, &out] { MPI_Allreduce(in.data(), out.data(), i(n * n), MPI_DOUBLE, MPI_SUM, all); };
  (void)d;
  return {};
}

template <class F>
double time_calls(F&& f, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) f();
  const double local = (MPI_Wtime() - t0) / iters;
  double slowest = 0;
  MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

/// The plan's steps, "local + all_reduce(dp)".
std::string steps_of(const dm::redistribute_plan<2>& plan) {
  std::string s;
  for (const auto& step : plan) {
    s += (s.empty() ? "" : " + ") + std::string(dm::step_name(step.kind));
    if (step.communicates()) s += step.group == 3u ? "(dp,tp)" : step.group == 1u ? "(dp)" : "(tp)";
  }
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  dm::mpi::environment env(argc, argv);
  int min_kib = 64, max_kib = 1024, reps = 7;
  const char* json = nullptr;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--min-kib")) min_kib = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--max-kib")) max_kib = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--json")) json = argv[i + 1];
  }
  std::FILE* out_json = json && dm::mpi::world().rank() == 0 ? std::fopen(json, "w") : nullptr;
  auto mesh = dm::init_device_mesh(dm::mpi::world(), mesh24{});
  const mesh24 m = mesh.layout();
  const int pos = mesh.position();
  const char* pairs[][2] = {{"S(0),S(0)", "R,S(0)"}, {"S(0),R", "R,S(1)"}, {"P(sum),R", "R,S(0)"},
                            {"S(0),S(1)", "R,R"},     {"P(sum),P(sum)", "R,R"}};
  if (pos == 0)
    std::printf("| pair | KiB per rank (source block) | devmesh us | raw collectives us | packed us | "
                "hand-written us | devmesh/raw | devmesh/hand-written | devmesh/unchecked |\n"
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (int kib = min_kib; kib <= max_kib; kib *= 4) {
    // a square tensor whose S(0),S(0) block is `kib` KiB of doubles on each of the 8 ranks
    const auto side = static_cast<dm::tensor_index>(std::sqrt(kib * 1024.0 / 8 * 8));
    const dm::dextents<2> ext(side, side);
    for (const auto& p : pairs) {
      const spec from = dm::parse_sharding(p[0], m), to = dm::parse_sharding(p[1], m);
      const auto plan = dm::plan_redistribute(from, to, dm::plan_model_of(mesh, ext, 8));  // what redistribute runs
      std::vector<double> in(static_cast<std::size_t>(from.local_size(ext, pos)));
      for (std::size_t k = 0; k < in.size(); ++k) in[k] = static_cast<double>((pos * 7919 + k) % 1000);  // exact sums
      std::vector<double> out(static_cast<std::size_t>(to.local_size(ext, pos))), out_hand(out.size()),
          stage(static_cast<std::size_t>(side * side));
      auto raw = raw_steps(mesh, plan, ext, true), packed = raw_steps(mesh, plan, ext, false);
      const auto ours = [&] { dm::redistribute(mesh, from, to, ext, in, out); };
      const auto unchecked = [&] { dm::redistribute(mesh, from, to, ext, in, out, dm::no_call_check); };
      const auto theirs = [&] { run_raw(raw); };
      const auto prepacked = [&] { run_raw(packed); };
      const auto hand = hand_written(mesh, p[0], p[1], static_cast<long>(side), in, out_hand, stage);
      ours(), unchecked(), theirs(), prepacked(), hand();  // warm up (the flattened groups' communicators made here)
      if (out != out_hand) {
        std::fprintf(stderr, "bench/redistribute: %s -> %s: the hand-written program's block differs from devmesh's\n",
                     p[0], p[1]);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      const int iters = std::max(2, 4096 / kib);
      std::vector<double> a, b, k, h, u;
      for (int r = 0; r < reps; ++r) {
        const bool first = r % 4 == 0 || r % 4 == 3;  // ABBA (the hand-written side last, then first)
        const auto time = [&](auto& f, std::vector<double>& into) { into.push_back(time_calls(f, iters)); };
        if (first) time(ours, a), time(unchecked, u), time(theirs, b), time(prepacked, k), time(hand, h);
        else time(hand, h), time(prepacked, k), time(theirs, b), time(unchecked, u), time(ours, a);
      }
      if (pos == 0)
        std::printf("| %s -> %s | %.0f | %.1f | %.1f | %.1f | %.1f | %.3f | %.3f | %.3f |\n", p[0], p[1],
                    in.size() * 8.0 / 1024, median(a) * 1e6, median(b) * 1e6, median(k) * 1e6, median(h) * 1e6,
                    median(a) / median(b), median(a) / median(h), median(a) / median(u));
      if (out_json)
        std::fprintf(out_json,
                     "{\"from\": \"%s\", \"to\": \"%s\", \"tensor\": %lld, \"kib_per_rank\": %.0f, \"steps\": \"%s\", "
                     "\"devmesh_us\": %.2f, \"raw_us\": %.2f, \"packed_us\": %.2f, \"hand_us\": %.2f, "
                     "\"unchecked_us\": %.2f}\n",
                     p[0], p[1], static_cast<long long>(side), in.size() * 8.0 / 1024, steps_of(plan).c_str(),
                     median(a) * 1e6, median(b) * 1e6, median(k) * 1e6, median(h) * 1e6, median(u) * 1e6);
    }
  }
  if (out_json) std::fclose(out_json);
}
