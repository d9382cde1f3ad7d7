// tests/gpu/nccl_checks.cpp: checks 3 and 4, devmesh's NCCL backend on this job's GPUs (one
// rank per GPU: a world of 1, or min(N, 8) ranks under mpirun).
//
// Every collective runs on device buffers, on a non-default (non-blocking) stream, with its
// inputs copied in on that stream behind a 20 ms delay kernel (so a call enqueued on another
// stream would read stale data), and is checked element by element after a bounded wait
// against values computed on the host from the layout's groups.
#include <devmesh/devmesh.hpp>
#include <devmesh/redistribute.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench.hpp"
#include "common.hpp"
#include "values.hpp"

namespace gpu_check {

namespace dm = devmesh;
using nccl_comm = dm::nccl::communicator;

namespace {

constexpr double stream_bound_s = 120;  // a collective that takes longer is a hung one

dm::nccl::options nccl_options(int timeout_s, bool blocking = false) {
  dm::nccl::options o;
  o.blocking = blocking;
  o.timeout = std::chrono::seconds(timeout_s);
  return o;
}

std::string fmt_seconds(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f s", s);
  return b;
}

template <class T>
std::string show(T v) {
  std::ostringstream os;
  os << to_double(v);
  return os.str();
}

result combine(std::initializer_list<result> parts) {
  result r;
  for (const auto& p : parts) {
    if (!p.ok) r.ok = false;
    if (!p.detail.empty() && (!p.ok || r.ok)) r.detail += (r.detail.empty() ? "" : "; ") + p.detail;
  }
  return r;
}

// ---- one dim of a device mesh, one element type: every collective -------------------------
template <class T>
struct expectation {
  std::string what;
  dbuf<T>* buf;
  std::vector<double> want;
  bool approximate = false;
};

/// One dim of one mesh, for element type T: this rank's place in the dim's group and the
/// dim's collectives (devmesh's free forms, `dm::all_reduce<N>(mesh, ...)`) as plain function
/// pointers. The check below is then compiled once per type, not once per dim, type and mesh:
/// its 69 copies were 40% of this file's object code, and build time of the test command.
template <class T>
struct dim_calls {
  using in = std::span<const T>;
  using out = std::span<T>;
  const void* mesh;
  int rank, size, local_rank;
  std::vector<int> group;  // world ranks, in local-rank order
  const nccl_comm* comm;
  void (*all_reduce)(const void*, out, dm::op, cudaStream_t);
  void (*all_reduce_to)(const void*, in, out, dm::op, cudaStream_t);
  void (*reduce)(const void*, out, dm::op, int, cudaStream_t);
  void (*reduce_to)(const void*, in, out, dm::op, int, cudaStream_t);
  void (*broadcast)(const void*, out, int, cudaStream_t);
  void (*all_gather)(const void*, in, out, cudaStream_t);
  void (*reduce_scatter)(const void*, in, out, dm::op, cudaStream_t);
  void (*all_to_all)(const void*, in, out, cudaStream_t);
  void (*barrier)(const void*, cudaStream_t);
  void (*shift)(const void*, in, out, int, bool, cudaStream_t);
  void (*recv_prev)(const void*, out, bool, cudaStream_t);
  void (*send_next)(const void*, out, bool, cudaStream_t);
};

template <dm::fixed_string N, class T, class Mesh>
dim_calls<T> calls_on(const Mesh& mesh) {
  using in = std::span<const T>;
  using out = std::span<T>;
  using s_t = cudaStream_t;
  const auto grp = dm::group<N>(mesh.layout(), mesh.rank());
  return {&mesh,
          mesh.rank(),
          dm::size<N>(mesh),
          dm::local_rank<N>(mesh),
          std::vector<int>(grp.begin(), grp.end()),
          &dm::comm<N>(mesh),
          [](const void* m, out b, dm::op o, s_t s) { dm::all_reduce<N>(*static_cast<const Mesh*>(m), b, o, s); },
          [](const void* m, in a, out b, dm::op o, s_t s) { dm::all_reduce<N>(*static_cast<const Mesh*>(m), a, b, o, s); },
          [](const void* m, out b, dm::op o, int r, s_t s) { dm::reduce<N>(*static_cast<const Mesh*>(m), b, o, r, s); },
          [](const void* m, in a, out b, dm::op o, int r, s_t s) { dm::reduce<N>(*static_cast<const Mesh*>(m), a, b, o, r, s); },
          [](const void* m, out b, int r, s_t s) { dm::broadcast<N>(*static_cast<const Mesh*>(m), b, r, s); },
          [](const void* m, in a, out b, s_t s) { dm::all_gather<N>(*static_cast<const Mesh*>(m), a, b, s); },
          [](const void* m, in a, out b, dm::op o, s_t s) { dm::reduce_scatter<N>(*static_cast<const Mesh*>(m), a, b, o, s); },
          [](const void* m, in a, out b, s_t s) { dm::all_to_all<N>(*static_cast<const Mesh*>(m), a, b, s); },
          [](const void* m, s_t s) { dm::barrier<N>(*static_cast<const Mesh*>(m), s); },
          [](const void* m, in a, out b, int d, bool p, s_t s) { dm::shift<N>(*static_cast<const Mesh*>(m), a, b, d, p, s); },
          [](const void* m, out b, bool p, s_t s) { dm::recv_prev<N>(*static_cast<const Mesh*>(m), b, p, s); },
          [](const void* m, out b, bool p, s_t s) { dm::send_next<N>(*static_cast<const Mesh*>(m), b, p, s); }};
}

template <class T>
result check_dim_calls(const dim_calls<T>& d, cudaStream_t s) {
  const int me = d.rank;
  const int n = d.size;
  const int k = d.local_rank;
  const std::vector<int>& g = d.group;
  const std::size_t un = static_cast<std::size_t>(n), uk = static_cast<std::size_t>(k);
  mismatches bad;
  const nccl_comm& c = *d.comm;
  if (c.size() != n || c.rank() != k)
    bad.add("communicator rank " + std::to_string(c.rank()) + " of " + std::to_string(c.size()) + ", layout: " +
            std::to_string(k) + " of " + std::to_string(n));

  const std::size_t blk = 5, cnt = blk * un + 3;
  // Every buffer is carved from one allocation made before anything is enqueued.
  dbuf<T> arena(40 * cnt);
  std::size_t used = 0;
  std::vector<std::unique_ptr<dbuf<T>>> owned;
  std::vector<expectation<T>> expect;
  bool first = true;
  // A device buffer of `size` elements holding f(i), written on s (the first one late).
  auto make = [&](std::size_t size, auto f) -> dbuf<T>& {
    if (used + size > arena.size()) throw std::logic_error("check_dim_calls: arena too small");
    owned.push_back(std::make_unique<dbuf<T>>(arena.data() + used, size));
    used += size;
    std::vector<T> h(size);
    for (std::size_t i = 0; i < size; ++i) h[i] = from_double<T>(f(i));
    owned.back()->write(h, s, first ? 20000 : 0);
    first = false;
    return *owned.back();
  };
  auto mine = [&](int salt) { return [me, salt](std::size_t i) { return double(value_of(me, i, salt)); }; };
  auto untouched = [](std::size_t) { return double(sentinel); };
  auto over_group = [&](auto f) {
    std::vector<double> v;
    for (int m : g) v.push_back(f(m));
    return v;
  };
  auto expect_reduce = [&](std::string what, dbuf<T>& b, std::size_t size, dm::op o, auto f) {
    std::vector<double> want(size);
    for (std::size_t i = 0; i < size; ++i) want[i] = reduce_expected<T>(over_group([&](int m) { return f(m, i); }), o);
    expect.push_back({std::move(what), &b, std::move(want), o == dm::op::avg});
  };
  auto value_at = [](int salt) { return [salt](int m, std::size_t i) { return double(value_of(m, i, salt)); }; };

  // all_reduce: in place (sum), out of place (min, max, avg on floating types), prod (not on
  // 8-bit types).
  {
    auto& b = make(cnt, mine(1));
    d.all_reduce(d.mesh, b.span(), dm::op::sum, s);
    expect_reduce("all_reduce(sum, in place)", b, cnt, dm::op::sum, value_at(1));
  }
  const std::pair<dm::op, int> oop[] = {{dm::op::min, 2}, {dm::op::max, 3}, {dm::op::avg, 4}};
  for (auto [o, salt] : oop) {
    if (o == dm::op::avg && std::is_integral_v<T>) continue;  // devmesh rejects integer averages
    auto& send = make(cnt, mine(salt));
    auto& recv = make(cnt, untouched);
    d.all_reduce_to(d.mesh, send.cspan(), recv.span(), o, s);
    expect_reduce(std::string("all_reduce(") + dm::op_name(o) + ")", recv, cnt, o, value_at(salt));
  }
  if constexpr (sizeof(T) > 1) {
    auto& b = make(cnt, [me](std::size_t i) { return double(factor_of(me, i)); });
    d.all_reduce(d.mesh, b.span(), dm::op::prod, s);
    expect_reduce("all_reduce(prod, in place)", b, cnt, dm::op::prod, [](int m, std::size_t i) { return double(factor_of(m, i)); });
  }
  // reduce: in place onto the last local rank, out of place onto the first.
  {
    const int root = n - 1;
    auto& b = make(cnt, mine(5));
    d.reduce(d.mesh, b.span(), dm::op::sum, root, s);
    if (k == root)
      expect_reduce("reduce(sum, in place, root " + std::to_string(root) + ")", b, cnt, dm::op::sum, value_at(5));
    else
      expect.push_back({"reduce(in place, non-root buffer unchanged)", &b, [&] {
                          std::vector<double> w(cnt);
                          for (std::size_t i = 0; i < cnt; ++i) w[i] = value_of(me, i, 5);
                          return w;
                        }()});
  }
  {
    auto& send = make(cnt, mine(6));
    auto& recv = make(cnt, untouched);
    d.reduce_to(d.mesh, send.cspan(), recv.span(), dm::op::max, 0, s);
    if (k == 0)
      expect_reduce("reduce(max, root 0)", recv, cnt, dm::op::max, value_at(6));
    else
      expect.push_back({"reduce(non-root recv untouched)", &recv, std::vector<double>(cnt, sentinel)});
  }
  // broadcast from the middle local rank.
  {
    const int root = n / 2;
    auto& b = make(cnt, mine(7));
    d.broadcast(d.mesh, b.span(), root, s);
    std::vector<double> want(cnt);
    for (std::size_t i = 0; i < cnt; ++i) want[i] = value_of(g[static_cast<std::size_t>(root)], i, 7);
    expect.push_back({"broadcast(root " + std::to_string(root) + ")", &b, std::move(want)});
  }
  // all_gather: block j of recv is local rank j's send.
  {
    auto& send = make(blk, mine(8));
    auto& recv = make(blk * un, untouched);
    d.all_gather(d.mesh, send.cspan(), recv.span(), s);
    std::vector<double> want(blk * un);
    for (std::size_t j = 0; j < un; ++j)
      for (std::size_t e = 0; e < blk; ++e) want[j * blk + e] = value_of(g[j], e, 8);
    expect.push_back({"all_gather", &recv, std::move(want)});
  }
  // reduce_scatter: this rank gets block k of the sum.
  {
    auto& send = make(blk * un, mine(9));
    auto& recv = make(blk, untouched);
    d.reduce_scatter(d.mesh, send.cspan(), recv.span(), dm::op::sum, s);
    std::vector<double> want(blk);
    for (std::size_t e = 0; e < blk; ++e)
      want[e] = reduce_expected<T>(over_group([&](int m) { return double(value_of(m, uk * blk + e, 9)); }), dm::op::sum);
    expect.push_back({"reduce_scatter(sum)", &recv, std::move(want)});
  }
  // all_to_all: block j of recv is block k of local rank j's send.
  {
    auto& send = make(blk * un, mine(10));
    auto& recv = make(blk * un, untouched);
    d.all_to_all(d.mesh, send.cspan(), recv.span(), s);
    std::vector<double> want(blk * un);
    for (std::size_t j = 0; j < un; ++j)
      for (std::size_t e = 0; e < blk; ++e) want[j * blk + e] = value_of(g[j], uk * blk + e, 10);
    expect.push_back({"all_to_all", &recv, std::move(want)});
  }
  d.barrier(d.mesh, s);
  // shift by +1 (not periodic): from local rank k - 1; the first rank receives nothing.
  {
    auto& send = make(blk, mine(11));
    auto& recv = make(blk, untouched);
    d.shift(d.mesh, send.cspan(), recv.span(), 1, false, s);
    std::vector<double> want(blk, sentinel);
    if (k >= 1)
      for (std::size_t e = 0; e < blk; ++e) want[e] = value_of(g[uk - 1], e, 11);
    expect.push_back({"shift(+1)", &recv, std::move(want)});
  }
  // shift by -1, periodic: from local rank (k + 1) mod n.
  {
    auto& send = make(blk, mine(12));
    auto& recv = make(blk, untouched);
    d.shift(d.mesh, send.cspan(), recv.span(), -1, true, s);
    std::vector<double> want(blk);
    for (std::size_t e = 0; e < blk; ++e) want[e] = value_of(g[(uk + 1) % un], e, 12);
    expect.push_back({"shift(-1, periodic)", &recv, std::move(want)});
  }
  // A pipeline step: recv_prev, then send_next.
  {
    auto& send = make(blk, mine(13));
    auto& recv = make(blk, untouched);
    d.recv_prev(d.mesh, recv.span(), false, s);
    d.send_next(d.mesh, send.span(), false, s);
    std::vector<double> want(blk, sentinel);
    if (k >= 1)
      for (std::size_t e = 0; e < blk; ++e) want[e] = value_of(g[uk - 1], e, 13);
    expect.push_back({"recv_prev/send_next", &recv, std::move(want)});
  }

  std::string err;
  if (!wait_stream(s, stream_bound_s, err)) return {false, std::string(type_name<T>()) + ": " + err};
  for (const auto& x : expect) {
    const std::vector<T> got = x.buf->read();
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!matches(got[i], x.want[i], x.approximate)) {
        bad.add(x.what + "[" + std::to_string(i) + "] = " + show(got[i]) + ", expected " + std::to_string(x.want[i]));
        break;  // one line per collective
      }
  }
  if (!bad.ok()) return {false, std::string(type_name<T>()) + ": " + bad.text()};
  return {true, std::to_string(expect.size() + 1) + " collectives (" + type_name<T>() + ")"};
}

template <dm::fixed_string N, class T, class Mesh>
result check_dim_type(const Mesh& mesh, cudaStream_t s) {
  return check_dim_calls(calls_on<N, T>(mesh), s);
}

template <dm::fixed_string N, class Mesh>
result check_dim(const Mesh& mesh, cudaStream_t s) {
  const result f = check_dim_type<N, float>(mesh, s);
  const result i = check_dim_type<N, std::int32_t>(mesh, s);
  result r = combine({f, i});
  if (r.ok)
    r.detail = std::to_string(dm::size<N>(mesh)) + " ranks per group; all_reduce (sum, min, max, prod; avg on float), "
               "reduce, broadcast, all_gather, reduce_scatter, all_to_all, barrier, shift (+1, -1 periodic), "
               "recv_prev/send_next on float and int32 match the layout's groups";
  return r;
}

template <dm::fixed_string... Ns, class Mesh>
void check_mesh(report& rep, const Mesh& mesh, cudaStream_t s) {
  const std::string label = "nccl " + dm::to_string(mesh.layout());
  (rep.run(label + " dim '" + std::string(Ns.view()) + "'", [&] { return check_dim<Ns>(mesh, s); }), ...);
}

/// Every NCCL element type through every collective on dim N.
template <dm::fixed_string N, class Mesh>
void type_matrix(report& rep, const Mesh& mesh, cudaStream_t s) {
  const std::string label = "nccl " + dm::to_string(mesh.layout()) + " dim '" + std::string(N.view()) + "' type ";
  auto one = [&](auto tag) {
    using T = decltype(tag);
    rep.run(label + type_name<T>(), [&] { return check_dim_type<N, T>(mesh, s); });
  };
  one(std::int8_t{});
  one(std::uint8_t{});
  one(std::int32_t{});
  one(std::uint32_t{});
  one(std::int64_t{});
  one(std::uint64_t{});
  one(float{});
  one(double{});
#if !defined(GPU_CHECK_DOUBLE)
  one(__half{});
  one(__nv_bfloat16{});
#else
  rep.skip(label + "half, bfloat16", "the NCCL test double cannot reduce 16-bit floats");
#endif
}

// ---- the meshes ---------------------------------------------------------------------------
using world_mesh = dm::mesh<dm::dim<"world">>;
using hsdp_dyn = dm::mesh<dm::dim<"replicate">, dm::dim<"shard">>;  // examples 02, 03
using mp_dyn = dm::mesh<dm::dim<"dp">, dm::dim<"pp">>;              // example 06
using three_dyn = dm::mesh<dm::dim<"replicate">, dm::dim<"shard">, dm::dim<"tp">>;  // examples 01, 04

hsdp_dyn hsdp_for(int n) { return n % 2 == 0 ? hsdp_dyn(2, n / 2) : hsdp_dyn(1, n); }

void mesh_checks(report& rep, const nccl_comm& world, cudaStream_t s) {
  const int n = world.size();
  {
    auto mesh = dm::init_device_mesh(world, world_mesh(n));
    type_matrix<"world">(rep, mesh, s);
    if (n % 2 == 0) {
      auto u = mesh.unflatten<"world", dm::dim<"x">, dm::dim<"y", 2>>();
      check_mesh<"x", "y">(rep, u, s);
    } else {
      auto u = mesh.unflatten<"world", dm::dim<"x">, dm::dim<"y", 1>>();
      check_mesh<"x", "y">(rep, u, s);
    }
  }
  if (n == 1) {
    // PyTorch's smallest mesh: every dim (and alias) of size 1.
    using m111 = dm::mesh<dm::dim<"dp", 1>, dm::dim<"cp", 1>, dm::dim<"tp", 1>>;
    auto mesh = dm::init_device_mesh<m111>(world);
    auto flat = mesh.flatten<"dp_cp", "dp", "cp">();
    auto unflat = mesh.unflatten<"tp", dm::dim<"t1", 1>, dm::dim<"t2", 1>>();
    check_mesh<"dp", "cp", "tp">(rep, mesh, s);
    check_mesh<"dp_cp">(rep, flat, s);
    check_mesh<"t1", "t2">(rep, unflat, s);
    rep.note("  (communicators created by the (1,1,1) mesh, its flatten and unflatten: " +
             std::to_string(mesh.communicator_count()) + ")");
    return;
  }
  // The examples' mesh shapes, sized for n ranks (exactly theirs when n == 8).
  {
    auto mesh = dm::init_device_mesh(world, hsdp_for(n));
    check_mesh<"replicate", "shard">(rep, mesh, s);
  }
  {
    auto mesh = dm::init_device_mesh(world, n % 2 == 0 ? mp_dyn(n / 2, 2) : mp_dyn(n, 1));
    check_mesh<"dp", "pp">(rep, mesh, s);
  }
  {
    const int c = n % 2 == 0 ? 2 : 1, rest = n / c, b = rest % 2 == 0 ? 2 : 1, a = rest / b;
    auto mesh = dm::init_device_mesh(world, three_dyn(a, b, c));
    check_mesh<"replicate", "shard", "tp">(rep, mesh, s);
    auto flat = mesh.flatten<"shard_tp", "shard", "tp">();                 // example 04
    check_mesh<"shard_tp">(rep, flat, s);
    auto transposed = mesh.flatten<"tp_replicate", "tp", "replicate">();  // non-adjacent, transposed
    check_mesh<"tp_replicate">(rep, transposed, s);
    auto tslice = mesh.slice<"tp", "shard">().flatten<"tp_shard">();       // a transposed slice, flattened
    check_mesh<"tp_shard">(rep, tslice, s);
    rep.note("  (communicators created by this 3-D mesh and its derivatives: " +
             std::to_string(mesh.communicator_count()) + ")");
  }
  if (n % 2 == 0) {  // example 07: dp inferred from the world size
    using m07 = dm::mesh<dm::dim<"dp">, dm::dim<"tp", 2>>;
    auto mesh = dm::init_device_mesh<m07>(world);
    check_mesh<"dp", "tp">(rep, mesh, s);
  }
  if (n == 8) {  // the examples' static types
    using hsdp = dm::mesh<dm::dim<"replicate", 2>, dm::dim<"shard", 4>>;
    using mp = dm::mesh<dm::dim<"dp", 4>, dm::dim<"pp", 2>>;
    using m3 = dm::mesh<dm::dim<"replicate", 2>, dm::dim<"shard", 2>, dm::dim<"tp", 2>>;
    auto a = dm::init_device_mesh<hsdp>(world);
    check_mesh<"replicate", "shard">(rep, a, s);
    auto b = dm::init_device_mesh<mp>(world);
    check_mesh<"dp", "pp">(rep, b, s);
    auto c = dm::init_device_mesh<m3>(world);
    auto f = c.flatten<"shard_tp", "shard", "tp">();
    check_mesh<"replicate", "shard", "tp", "shard_tp">(rep, f, s);
  }
}

// ---- redistribute on device blocks (issue 20): the steps' copies, scratch and v-collectives --------
/// The values of pos's block under spec of the 2-D tensor whose elements are their flat
/// row-major indices.
template <class Spec, class E>
std::vector<double> block_values(const Spec& spec, const E& ext, int pos) {
  const auto shape = spec.local_shape(ext, pos);
  std::vector<double> v;
  for (dm::tensor_index i = 0; i < shape[0]; ++i)
    for (dm::tensor_index j = 0; j < shape[1]; ++j)
      v.push_back(static_cast<double>(spec.global_index(ext, pos, 0, i) * ext.extent(1) + spec.global_index(ext, pos, 1, j)));
  return v;
}

/// distribute (from the whole tensor on every rank), redistribute, both distribute forms and
/// full_tensor on the hsdp mesh of this world, a 13 x 6 float64 tensor (uneven blocks), device
/// blocks and one stream: every block after equals the tensor's.
void redistribute_checks(report& rep, const nccl_comm& world, cudaStream_t s) {
  auto mesh = dm::init_device_mesh(world, hsdp_for(world.size()));
  const dm::dextents<2> ext(13, 6);
  const int pos = mesh.position();
  std::vector<double> full(13 * 6);
  for (std::size_t x = 0; x < full.size(); ++x) full[x] = static_cast<double>(x);
  dbuf<double> d_full(full.size());
  d_full.write(full, s);
  const char* pairs[][2] = {{"S(0),S(1)", "R,R"}, {"R,R", "S(1),S(0)"}, {"S(1),S(0)", "S(0),S(1)"},
                            {"P(sum),R", "R,S(0)"}, {"R,P(sum)", "S(1),R"}, {"P(sum),P(sum)", "S(0),R"}};
  for (const auto& p : pairs)
    rep.run(std::string("redistribute, device blocks, 13x6 float64 on ") + dm::to_string(mesh.layout()) + ": " + p[0] +
                " -> " + p[1],
            [&]() -> result {
              const auto from = dm::parse_sharding(p[0], mesh.layout()), to = dm::parse_sharding(p[1], mesh.layout());
              dbuf<double> in(static_cast<std::size_t>(from.local_size(ext, pos)));
              dbuf<double> out(static_cast<std::size_t>(to.local_size(ext, pos))), rooted(out.size()), back(full.size());
              dm::distribute(mesh, from, ext, d_full.cspan(), in.span(), s);  // a Partial(sum): the values on one rank
              dm::redistribute(mesh, from, to, ext, in.cspan(), out.span(), s);
              dm::distribute(mesh, to, ext, d_full.cspan(), rooted.span(), world.size() - 1, s);
              dm::full_tensor(mesh, to, ext, out.cspan(), back.span(), s);
              cuda_ok(cudaStreamSynchronize(s), "cudaStreamSynchronize");
              const std::vector<double> want = block_values(to, ext, pos);
              if (out.read() != want) return {false, "redistribute's block differs from the tensor's"};
              if (rooted.read() != want) return {false, "distribute from the last rank gives another block"};
              if (back.read() != full) return {false, "full_tensor does not give the tensor back"};
              return {};
            });
}

// ---- the watchdog (options.watchdog: an event after each call, polled by the root's thread) ------
using watched_options = dm::device_mesh_options<nccl_comm>;

/// The entries of mesh's flight record once none is `enqueued` (the watchdog's thread saw
/// every event), at most `bound_s`; "" or what is wrong.
template <class Mesh>
std::string record_settles(const Mesh& mesh, double bound_s) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    int open = 0, bad = 0, done = 0;
    for (const auto& e : mesh.flight_record().entries) {
      if (e.on->name == "mesh") continue;
      if (e.state == dm::call_state::enqueued) ++open;
      else if (e.state == dm::call_state::completed && e.end_ns >= e.start_ns) ++done;
      else ++bad;
    }
    if (bad) return std::to_string(bad) + " entries neither enqueued nor completed (with an end time)";
    if (!open) return done ? std::string() : std::string("no entries recorded");
    if (seconds_since(t0) > bound_s) return std::to_string(open) + " entries still enqueued after " + fmt_seconds(bound_s);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

/// Seconds per all_reduce (float x 1) on mesh, enqueued `k` times then waited for; the median
/// of `rounds`.
template <class Mesh>
double per_call(const Mesh& mesh, dbuf<float>& b, cudaStream_t s, int k, int rounds) {
  std::vector<double> t;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < k; ++i) mesh.template all_reduce<"world">(std::span<float>(b.data(), 1), dm::op::sum, s);
    std::string err;
    if (!wait_stream(s, stream_bound_s, err)) throw std::runtime_error(err);
    t.push_back(seconds_since(t0) / k);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void watchdog_checks(report& rep, const nccl_comm& world, cudaStream_t s) {
  const int n = world.size();
  watched_options o;
  o.watchdog = std::chrono::seconds(60);
  rep.run("watchdog (options.watchdog = 60 s): every collective's values right, every flight record entry reaches "
          "completed",
          [&]() -> result {
            auto mesh = dm::init_device_mesh(world, world_mesh(n), o);
            result r = combine({check_dim_type<"world", float>(mesh, s), check_dim_type<"world", std::int32_t>(mesh, s)});
            if (!r.ok) return r;
            if (const std::string why = record_settles(mesh, 60); !why.empty()) return {false, why};
            return {true, r.detail + "; " + std::to_string(mesh.flight_record().entries.size()) + " entries completed"};
          });
  rep.run("watchdog cost: all_reduce (float x 1) per call, watchdog on vs off (PASS: on <= 1.5 x off + 20 us)",
          [&]() -> result {
            auto off = dm::init_device_mesh(world, world_mesh(n));
            auto on = dm::init_device_mesh(world, world_mesh(n), o);
            dbuf<float> b(1);
            b.write({1.f}, s);
            (void)per_call(off, b, s, 50, 1);  // warm-up (and the watchdog's thread starts)
            (void)per_call(on, b, s, 50, 1);
            double t_off = 1e9, t_on = 1e9;
            for (int i = 0; i < 3; ++i) {  // alternating
              t_off = std::min(t_off, per_call(off, b, s, 200, 3));
              t_on = std::min(t_on, per_call(on, b, s, 200, 3));
            }
            char text[160];
            std::snprintf(text, sizeof text, "off %.2f us, on %.2f us per call (%.2fx)", t_off * 1e6, t_on * 1e6,
                          t_on / t_off);
#if defined(GPU_CHECK_DOUBLE)
            return {true, std::string(text) + " (over the double: not judged)"};
#else
            return {t_on <= 1.5 * t_off + 20e-6, text};
#endif
          });
}

// ---- the world and its variants -------------------------------------------------------------
result check_world_basics(const nccl_comm& w, bool expect_channel) {
  mismatches bad;
  if (!w.valid()) bad.add("not valid");
  if (w.rank() != world_rank() || w.size() != world_size())
    bad.add("rank " + std::to_string(w.rank()) + " of " + std::to_string(w.size()) + ", MPI: " +
            std::to_string(world_rank()) + " of " + std::to_string(world_size()));
  if (w.has_host_channel() != expect_channel) bad.add(expect_channel ? "no host channel" : "a host channel");
  return {bad.ok(), bad.text()};
}

/// all_reduce(sum) of (world rank + 1) over a communicator whose world ranks are `members`.
result sum_of_ranks(const nccl_comm& c, const std::vector<int>& members, cudaStream_t s) {
  dbuf<std::int64_t> b(3);
  const std::int64_t mine = world_rank() + 1;
  b.write({mine, 2 * mine, 3 * mine}, s, 20000);
  c.all_reduce(b.data(), b.data(), 3, dm::op::sum, s);
  std::string err;
  if (!wait_stream(s, stream_bound_s, err)) return {false, err};
  std::int64_t want = 0;
  for (int m : members) want += m + 1;
  const auto got = b.read();
  if (got[0] != want || got[1] != 2 * want || got[2] != 3 * want)
    return {false, "all_reduce(sum) gave " + std::to_string(got[0]) + ", expected " + std::to_string(want)};
  return {true, ""};
}

std::vector<int> all_world_ranks() {
  std::vector<int> v(static_cast<std::size_t>(world_size()));
  for (int i = 0; i < world_size(); ++i) v[static_cast<std::size_t>(i)] = i;
  return v;
}

/// MASTER_ADDR for world_from_env: loopback on one host, else rank 0's host name.
std::string master_addr() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const auto hosts = gather_strings(host);
  int same = 1;
  if (world_rank() == 0)
    for (const auto& h : hosts) same = same && h == hosts[0];
  if (world_size() > 1) MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (same) return "127.0.0.1";
  std::string h0 = host;
  int len = static_cast<int>(h0.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
  h0.resize(static_cast<std::size_t>(len));
  MPI_Bcast(h0.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
  return h0;
}

bool local_rank_variable_set() {
  for (const char* v : dm::nccl::local_rank_variables)
    if (std::getenv(v)) return true;
  return false;
}

#if !defined(GPU_CHECK_DOUBLE)
/// Aborting a communicator whose collective is stuck in a kernel (the peer never joins)
/// ends the kernel; the device and the world stay usable. Pairs of ranks (2i, 2i + 1).
result abort_hung(const nccl_comm& world, cudaStream_t s) {
  const int me = world.rank();
  auto pair = world.split(me / 2, me % 2, nccl_options(20));
  const bool paired = pair.size() == 2;
  dbuf<float> b(1 << 10);
  b.write(std::vector<float>(1 << 10, 1.f), s);
  std::string err;
  if (paired) {  // connect the pair first: the stuck call must be in the kernel, not in setup
    pair.all_reduce(b.data(), b.data(), b.size(), dm::op::sum, s);
    if (!wait_stream(s, stream_bound_s, err)) return {false, "first all_reduce: " + err};
  }
  const bool enqueuer = paired && pair.rank() == 0;
  std::string enqueue_error;
  if (enqueuer) {
    try {
      pair.all_reduce(b.data(), b.data(), b.size(), dm::op::sum, s);  // the partner never calls it
    } catch (const dm::comm_error& e) {
      enqueue_error = e.what();
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  result r{true, ""};
  if (enqueuer) {
    if (!enqueue_error.empty()) {
      // Not what this check is about: no kernel got stuck. Reported, not passed.
      r = {false, "could not get a collective stuck in a kernel: the lone all_reduce did not enqueue (devmesh " +
                      std::string(pair.aborted() ? "aborted" : "did not abort") + " it): " + enqueue_error};
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      const cudaError_t q = cudaStreamQuery(s);
      const auto t0 = std::chrono::steady_clock::now();
      pair.abort();
      const bool ended = wait_stream(s, 30, err);
      const double dt = seconds_since(t0);
      if (q != cudaErrorNotReady)
        r = {false, "the lone all_reduce was not pending before abort(): cudaStreamQuery = " + cuda_text(q)};
      else if (!ended)
        r = {false, "the stuck kernel did not end after abort(): " + err};
      else if (pair.valid() || !pair.aborted())
        r = {false, "valid() / aborted() wrong after abort()"};
      else
        r = {true, "the stuck all_reduce ended " + fmt_seconds(dt) + " after abort()"};
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (!enqueuer) pair.abort();  // the partner's end (nothing pending there)
  if (!r.ok) return r;
  // The device and the world still work.
  const result after = sum_of_ranks(world, all_world_ranks(), s);
  if (!after.ok) return {false, "the world after abort(): " + after.detail};
  return {true, r.detail.empty() ? "partner / unpaired rank" : r.detail};
}

#endif

}  // namespace

void nccl_checks(report& rep, const options& opt) {
  const int n = world_size();
  stream s;
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<nccl_comm> world_opt;
  rep.run("nccl world = dm::nccl::world(dm::mpi::world()), non-blocking init bounded by 60 s", [&]() -> result {
    world_opt.emplace(dm::nccl::world(dm::mpi::world(), nccl_options(60)));
    result r = check_world_basics(*world_opt, true);
    if (!r.ok) return r;
    int dev = -1;
    cudaGetDevice(&dev);
    return {true, std::to_string(n) + " rank(s), init " + fmt_seconds(seconds_since(t0)) + ", device " + std::to_string(dev) +
                      ", blocking = " + std::to_string(world_opt->opts().blocking)};
  });
  if (!world_opt || !world_opt->valid()) {
    rep.skip("the other NCCL checks", "no NCCL world");
    return;
  }
  const nccl_comm& world = *world_opt;
  rep.run("nccl world: all_reduce over every rank", [&] { return sum_of_ranks(world, all_world_ranks(), s); });

  rep.run("nccl world with blocking init (options.blocking = true)", [&]() -> result {
    auto w = dm::nccl::world(dm::mpi::world(), nccl_options(60, true));
    result r = check_world_basics(w, true);
    if (!r.ok) return r;
    return sum_of_ranks(w, all_world_ranks(), s);
  });

  rep.run("ncclCommSplit (non-blocking, bounded by 60 s): members and order", [&]() -> result {
    const int me = world.rank();
    const int color = n > 1 ? me % 2 : 0;
    auto c = world.split(color, me, nccl_options(60));
    std::vector<int> members;
    for (int r = 0; r < n; ++r)
      if ((n > 1 ? r % 2 : 0) == color) members.push_back(r);
    if (c.size() != static_cast<int>(members.size())) return {false, "size " + std::to_string(c.size())};
    dbuf<std::int32_t> in(1), out(members.size());
    in.write({me}, s, 20000);
    c.all_gather(in.data(), out.data(), 1, s);
    std::string err;
    if (!wait_stream(s, stream_bound_s, err)) return {false, err};
    const auto got = out.read();
    if (got != std::vector<std::int32_t>(members.begin(), members.end()))
      return {false, "the split's all_gather of world ranks differs from the color's members"};
    return sum_of_ranks(c, members, s);
  });

  mesh_checks(rep, world, s);
  redistribute_checks(rep, world, s);
  watchdog_checks(rep, world, s);

  {
    // Check mode and deadline, switched on only through the environment, before the mesh.
    scoped_env check("DEVMESH_CHECK_COLLECTIVES", "1"), deadline("DEVMESH_TIMEOUT", "60");
    rep.run("check mode and deadline (DEVMESH_CHECK_COLLECTIVES=1, DEVMESH_TIMEOUT=60): equal collectives succeed",
            [&]() -> result {
              auto mesh = dm::init_device_mesh(world, hsdp_for(n));
              return combine({check_dim_type<"replicate", float>(mesh, s), check_dim_type<"shard", float>(mesh, s),
                              check_dim_type<"shard", std::int64_t>(mesh, s)});
            });
    if (n >= 2)
      rep.run("check mode (DEVMESH_CHECK_COLLECTIVES=1): a count that differs on one rank makes every rank of the group "
              "throw mesh_error, and the mesh stays usable",
              [&]() -> result {
                // A stream of its own: if the check mode let the mismatch through, what it enqueued
                // may never complete, and the other checks must not wait behind it.
                stream own;
                auto mesh = dm::init_device_mesh(world, world_mesh(n));  // one group of every rank
                const int k = mesh.local_rank<"world">();
                dbuf<float> b(8);
                b.write(std::vector<float>(8, 1.f), own);
                std::string what;
                try {
                  mesh.all_reduce<"world">(std::span<float>(b.data(), k == 0 ? 4 : 8), dm::op::sum, own);
                  what = "no exception";
                } catch (const dm::mesh_error& e) {
                  if (std::string(e.what()).find("DEVMESH_CHECK_COLLECTIVES") == std::string::npos)
                    what = std::string("unexpected message: ") + e.what();
                } catch (const std::exception& e) {
                  what = std::string("not a mesh_error: ") + e.what();
                }
                if (!what.empty()) return {false, what};
                result after = check_dim_type<"world", float>(mesh, own);
                if (after.ok) after.detail = "thrown on every rank; then " + after.detail;
                return after;
              });
  }

  rep.run("nccl world = dm::nccl::world_from_env() (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and a mesh over it",
          [&]() -> result {
            int port = world_rank() == 0 ? free_port() : 0;
            if (n > 1) MPI_Bcast(&port, 1, MPI_INT, 0, MPI_COMM_WORLD);
            const std::string addr = master_addr();
            scoped_env id("NCCL_COMM_ID", nullptr);  // world_from_env sets it; unset again afterwards
            scoped_env rank("RANK", std::to_string(world_rank())), size("WORLD_SIZE", std::to_string(n));
            scoped_env maddr("MASTER_ADDR", addr), mport("MASTER_PORT", std::to_string(port - 1));
            scoped_env local("LOCAL_RANK", local_rank_variable_set() ? std::getenv("LOCAL_RANK") : "0");
            auto w = dm::nccl::world_from_env(nccl_options(60));
            result r = check_world_basics(w, false);
            if (!r.ok) return r;
            auto mesh = dm::init_device_mesh(w, hsdp_for(n));  // consistency check over NCCL itself
            r = combine({sum_of_ranks(w, all_world_ranks(), s), check_dim_type<"replicate", float>(mesh, s),
                         check_dim_type<"shard", float>(mesh, s)});
            if (r.ok) r.detail = "MASTER_ADDR=" + addr + " MASTER_PORT=" + std::to_string(port - 1) + "; " + r.detail;
            return r;
          });

  if (opt.bench) bench(rep, world, opt);

  rep.run("abort(): an aborted communicator is invalid, throws on use, and the world still works", [&]() -> result {
    auto c = world.split(0, world.rank(), nccl_options(60));
    result r = sum_of_ranks(c, all_world_ranks(), s);
    if (!r.ok) return r;
    c.abort();
    if (c.valid() || !c.aborted()) return {false, "valid() / aborted() wrong after abort()"};
    try {
      dbuf<float> b(1);
      c.all_reduce(b.data(), b.data(), 1, dm::op::sum, s);
      return {false, "all_reduce on an aborted communicator did not throw"};
    } catch (const dm::comm_error& e) {
      if (std::string(e.what()).find("aborted") == std::string::npos) return {false, "unexpected message: " + std::string(e.what())};
    }
    return sum_of_ranks(world, all_world_ranks(), s);
  });
}

void probe_abort_hung(report& rep) {
#if defined(GPU_CHECK_DOUBLE)
  rep.check("abort() ends a collective stuck in a kernel", false, "needs real GPUs (the test double blocks in MPI instead)");
#else
  if (world_size() < 2) {
    rep.check("abort() ends a collective stuck in a kernel", false, "needs 2 ranks or more");
    return;
  }
  rep.run("abort() ends a collective stuck in a kernel (its peer never joins), the world works afterwards", [&] {
    auto world = dm::nccl::world(dm::mpi::world(), nccl_options(60));
    stream s;
    return abort_hung(world, s);
  });
#endif
}

void probe_init_timeout(report& rep) {
  rep.run("non-blocking init times out: a world of 2 that only this process joins ends in comm_error within 3 s + 10 s",
          [&]() -> result {
            const std::string id = "127.0.0.1:" + std::to_string(free_port());
            result r;
            {
              scoped_env comm_id("NCCL_COMM_ID", id), rank("RANK", "0"), size("WORLD_SIZE", "2");
              scoped_env local("LOCAL_RANK", local_rank_variable_set() ? std::getenv("LOCAL_RANK") : "0");
              const auto t0 = std::chrono::steady_clock::now();
              try {
                auto w = dm::nccl::world_from_env(nccl_options(3));
                return {false, "init of a world of 2 with one process succeeded"};
              } catch (const dm::comm_error& e) {
                const double dt = seconds_since(t0);
                const std::string what = e.what();
                r.ok = what.find("timed out") != std::string::npos && dt < 13;
                r.detail = "after " + fmt_seconds(dt) + ": " + what;
              }
            }
            if (!r.ok) return r;
            // The process still works: a new world of 1 and an all_reduce.
            auto w = dm::nccl::world(dm::mpi::world(), nccl_options(60));
            stream s;
            const result after = sum_of_ranks(w, all_world_ranks(), s);
            if (!after.ok) return {false, "a new world after the timeout: " + after.detail};
            r.detail += "; afterwards a new world works";
            return r;
          });
}

}  // namespace gpu_check
