// examples/10_sharding.cu: what each rank holds of a tensor sharded over a mesh, as DTensor's
// compute_local_shape_and_global_offset answers it, from a spec in PyTorch's spelling.
//
//   mpirun -np 8 10_sharding --mesh dp=2,tp=4 --shape 13,6 --placements "S(0),R"
//   10_sharding --world 8 --mesh dp=2,tp=4 --shape 13,6 --placements "S(0),R"   (no MPI ranks)
//   ... --json   one line per rank: {"rank": r, "coordinate": [...], "local_shape": [...],
//                "global_offset": [...]} (each rank prints its own; --world: all of them)
//   ... --to "R,S(1)"         the redistribute plan to another spec: steps, groups, bytes
//   mpirun -np 8 10_sharding ... --to "R,S(1)" --run   and runs it (tensors of 1 to 4 dims)
//   mpirun -np 8 10_sharding --mesh dp=2,tp=4 --calibrate   each dim's links measured (a table)
//
// --to alone prints the plan chosen by bytes (no device mesh: plan_redistribute(from, to)).
// --run makes the device mesh and prints and runs the plan it chooses by modelled time, over
// its links (the defaults, or with --calibrate the ones measured first) for this tensor of
// float64. It starts from the tensor 0, 1, 2, ... (row-major); a Partial source holds, on each
// rank, its block multiplied by 1 + the rank's index in the group of the Partial dims, so the
// tensor it stands for is known. Each rank checks its block after (a Partial target: through
// full_tensor); --json adds "plan" and "local" (the values after) to each rank's line.
//
// Without --json, rank 0 prints every rank's coordinate, local shape and global offset, and
// for 1-D and 2-D tensors the tensor's cells labelled by the ranks that hold them. Meshes are
// typed by their names: --mesh takes the dims dp; dp,tp; dp,cp,tp; or replicate,shard, each
// of any size (dm::parse_mesh); tensors of rank 0 to 4.
#include <devmesh/devmesh.hpp>
#include <devmesh/sharding.hpp>
#if defined(DEVMESH_WITH_MPI)
#include <devmesh/redistribute.hpp>
#endif

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace dm = devmesh;

namespace {

struct options {
  std::string mesh = "dp=2,tp=4";
  std::string shape = "13,6";
  std::string placements = "S(0),R";
  bool json = false;
  bool values = false;  // --json: also "local_values", the global linear index of each held element
  int world = 0;  // > 0: a simulated world of that many ranks, no MPI
  std::string to;    // --to: the spec to plan a redistribute to
  bool run = false;  // --run: and run it (MPI)
  bool calibrate = false;  // --calibrate: measure the mesh's links first (MPI)
};

options parse_args(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(std::string(a) + " needs a value");
      return argv[++i];
    };
    if (a == "--mesh") o.mesh = value();
    else if (a == "--shape") o.shape = value();
    else if (a == "--placements") o.placements = value();
    else if (a == "--json") o.json = true;
    else if (a == "--values") o.values = true;
    else if (a == "--world") o.world = std::atoi(value().c_str());
    else if (a == "--to") o.to = value();
    else if (a == "--run") o.run = true;
    else if (a == "--calibrate") o.calibrate = true;
    else
      throw std::runtime_error("unknown argument '" + std::string(a) +
                               "' (--mesh, --shape, --placements, --json, --values, --world, --to, --run, --calibrate)");
  }
  if (o.run && o.to.empty()) throw std::runtime_error("--run needs --to (the spec to redistribute to)");
  if ((o.run || o.calibrate) && o.world > 0)
    throw std::runtime_error(std::string(o.run ? "--run" : "--calibrate") + " runs on MPI ranks: drop --world");
  if (o.calibrate && !o.to.empty() && !o.run) throw std::runtime_error("--calibrate with --to needs --run");
  return o;
}

/// "13,6" -> {13, 6}; "" -> {} (a scalar).
std::vector<dm::tensor_index> parse_shape(const std::string& s) {
  std::vector<dm::tensor_index> out;
  std::size_t start = 0;
  while (start < s.size()) {
    const std::size_t end = s.find(',', start) == std::string::npos ? s.size() : s.find(',', start);
    const std::string item = s.substr(start, end - start);
    char* stop = nullptr;
    const long long v = std::strtoll(item.c_str(), &stop, 10);
    if (item.empty() || *stop != '\0' || v < 0) throw std::runtime_error("--shape: '" + item + "' is not an extent >= 0");
    out.push_back(v);
    start = end + 1;
  }
  if (out.size() > 4) throw std::runtime_error("--shape: at most 4 tensor dims here");
  return out;
}

template <class A>
std::string json_list(const A& a) {
  std::string s = "[";
  for (std::size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + std::to_string(a[i]);
  return s + "]";
}
template <class A>
std::string shape_text(const A& a) {
  std::string s;
  for (std::size_t i = 0; i < a.size(); ++i) s += (i ? "x" : "") + std::to_string(a[i]);
  return a.size() ? s : "scalar";
}
std::string padded(const std::string& s, std::size_t w) { return std::string(w > s.size() ? w - s.size() : 0, ' ') + s; }

/// The global linear (row-major) index of every element `position` holds, in its local
/// row-major order: the exact index map (spec.global_index), which an explicit shard order
/// makes non-contiguous.
template <class Spec, class E>
std::vector<dm::tensor_index> held_indices(const Spec& spec, const E& ext, int position) {
  constexpr int R = E::rank_value;
  const auto shape = spec.local_shape(ext, position);
  std::vector<dm::tensor_index> out;
  const dm::tensor_index n = spec.local_size(ext, position);
  for (dm::tensor_index k = 0; k < n; ++k) {
    dm::tensor_index rest = k, linear = 0, stride = 1;
    for (int t = R - 1; t >= 0; --t) {
      const dm::tensor_index i = rest % shape[static_cast<std::size_t>(t)];
      rest /= shape[static_cast<std::size_t>(t)];
      linear += spec.global_index(ext, position, t, i) * stride;
      stride *= ext.extent(t);
    }
    out.push_back(linear);
  }
  return out;
}

/// The tensor's cells labelled by the ranks holding them ("0-3"), one row per index of dim 0.
template <class Spec, class E>
std::string picture(const Spec& spec, const E& ext) {
  constexpr int R = E::rank_value;
  const dm::tensor_index rows = ext.extent(0), cols = R == 2 ? ext.extent(R - 1) : 1;
  std::vector<std::string> cells;
  std::size_t w = 1;
  for (dm::tensor_index i = 0; i < rows; ++i)
    for (dm::tensor_index j = 0; j < cols; ++j) {
      std::array<dm::tensor_index, R> g{};
      g[0] = i;
      if constexpr (R == 2) g[1] = j;
      std::vector<int> who;
      for (int p : spec.owners(ext, g)) who.push_back(p);
      std::sort(who.begin(), who.end());
      cells.push_back(dm::detail::rank_ranges(who));
      w = std::max(w, cells.back().size());
    }
  std::string s;
  for (dm::tensor_index i = 0; i < rows; ++i) {
    s += padded(std::to_string(i), 4) + " |";
    for (dm::tensor_index j = 0; j < cols; ++j) {  // appended, not " " + ...: g++ 12's -Wrestrict misfires at -O3
      s += ' ';
      s += padded(cells[static_cast<std::size_t>(i * cols + j)], w);
    }
    s += "\n";
  }
  return s;
}

int world_size(int simulated) { return simulated; }
#if defined(DEVMESH_WITH_MPI)
int world_size(const dm::mpi::communicator& world) { return world.size(); }
#endif

/// A plan from spec to `to`, and what it sends per rank (float64), as text.
template <class Mesh, class Spec, class E, class Plan>
std::string plan_text(const Mesh& mesh, const Spec& spec, const Spec& to, const E& ext, const Plan& plan) {
  std::string s = "redistribute " + dm::to_string(spec) + " -> " + dm::to_string(to) + ": " +
                  std::to_string(plan.collectives()) + " collective(s)\n" + dm::to_string(plan, mesh);
  std::vector<dm::tensor_index> bytes;
  dm::tensor_index total = 0;
  for (int r = 0; r < mesh.size(); ++r) total += bytes.emplace_back(dm::bytes_sent(mesh, plan, ext, r, 8));
  return s + "bytes sent per rank (float64): " + json_list(bytes) + ", " + std::to_string(total) + " in all\n";
}

/// The source values --run starts from: held_indices, times 1 + the rank's index in the group
/// of the Partial dims; and the tensor they stand for at linear index x.
template <class Mesh, class Spec>
struct run_values {
  int partial_ranks = 1, index = 0;
  dm::reduction op = dm::reduction::sum;
  run_values(const Mesh& m, const Spec& spec, int r) {
    for (int d = 0; d < Mesh::ndim; ++d)
      if (spec.table().at[d].is_partial())
        index = index * m.size(d) + m.coordinate(r)[static_cast<std::size_t>(d)], partial_ranks *= m.size(d),
        op = spec.table().at[d].op;
  }
  double tensor(dm::tensor_index x) const {
    double v = static_cast<double>(x), r = v;
    for (int i = 1; i < partial_ranks; ++i) {
      const double w = v * (1 + i);
      r = op == dm::reduction::min ? std::min(r, w) : op == dm::reduction::max ? std::max(r, w) : r + w;
    }
    return op == dm::reduction::avg ? r / partial_ranks : r;
  }
};

#if defined(DEVMESH_WITH_MPI)
/// --calibrate: the mesh's links measured; rank 0 prints the table, and every rank checks
/// that all got the same numbers.
template <class DeviceMesh>
void calibrate_links(const DeviceMesh& dmesh, const dm::mpi::communicator& world) {
  const auto c = dm::calibrate(dmesh);
  std::vector<double> mine, least, most;
  for (const auto& d : c.dims) mine.push_back(d.cost.latency_us), mine.push_back(d.cost.gbytes_per_s);
  least = most = mine;
  world.all_reduce(mine.data(), least.data(), mine.size(), dm::op::min);
  world.all_reduce(mine.data(), most.data(), mine.size(), dm::op::max);
  if (dmesh.position() == 0)
    std::printf("calibrated %s (medians of the slowest rank's times):\n%sthe same on every rank: %s\n\n",
                dm::to_string(dmesh.layout()).c_str(), dm::to_string(c).c_str(), least == most ? "yes" : "NO");
  if (least != most) throw std::runtime_error("--calibrate: the ranks measured different links");
}

/// --run: the plan the device mesh chooses, run on the world's ranks; each rank checks the
/// tensor its block stands for.
template <class Mesh, class Spec, class E>
void run_plan(const options& o, const dm::mpi::communicator& world, const Mesh& mesh, const Spec& spec,
              const Spec& to, const E& ext) {
  auto dmesh = dm::init_device_mesh(world, mesh);
  if (o.calibrate) calibrate_links(dmesh, world);
  const int r = dmesh.position();
  const auto plan = dm::plan_redistribute(spec, to, dm::plan_model_of(dmesh, ext, 8));
  if (r == 0 && !o.json)
    std::printf("%s links:\n%s%s", dm::to_string(mesh).c_str(), dm::links_table(dmesh).c_str(),
                plan_text(mesh, spec, to, ext, plan).c_str());
  const run_values<Mesh, Spec> source(mesh, spec, r);
  std::vector<double> in, out(static_cast<std::size_t>(to.local_size(ext, r)));
  for (dm::tensor_index x : held_indices(spec, ext, r)) in.push_back(static_cast<double>(x) * (1 + source.index));
  dm::redistribute(dmesh, spec, to, ext, in, out);
  std::vector<double> whole(static_cast<std::size_t>(ext.size()));
  dm::full_tensor(dmesh, to, ext, out, whole);  // what the blocks after stand for
  int right = 1;
  for (std::size_t x = 0; x < whole.size(); ++x) right = right && whole[x] == source.tensor(static_cast<dm::tensor_index>(x));
  world.all_reduce(&right, &right, 1, dm::op::min);
  if (o.json) {
    std::string text = plan_text(mesh, spec, to, ext, plan), escaped;
    for (char c : text) escaped += c == '\n' ? std::string("\\n") : c == '"' ? std::string("\\\"") : std::string(1, c);
    std::printf("{\"rank\": %d, \"plan\": \"%s\", \"local\": [", r, escaped.c_str());
    for (std::size_t i = 0; i < out.size(); ++i) std::printf("%s%g", i ? ", " : "", out[i]);
    std::printf("], \"right\": %s}\n", right ? "true" : "false");
  } else if (r == 0) {
    std::printf("\nran on %d ranks: the blocks after stand for the source's tensor: %s\n", dmesh.size(),
                right ? "yes, on every rank" : "NO");
  }
  if (!right) throw std::runtime_error("--run: the blocks after redistribute are wrong");
}
#endif

/// Every rank's block (or, me >= 0, this rank's), printed as the options ask.
template <class Mesh, int R, class World>
void answer(const options& o, const std::vector<dm::tensor_index>& shape, const World& world, int me) {
  const Mesh mesh = dm::parse_mesh<Mesh>(o.mesh, world_size(world));
  const auto spec = dm::parse_sharding(o.placements, mesh);
  std::array<dm::tensor_index, R> all{};
  for (int d = 0; d < R; ++d) all[static_cast<std::size_t>(d)] = shape[static_cast<std::size_t>(d)];
  const auto ext = dm::dextents<R>::from_array(all);
  spec.check(ext);
  if (o.calibrate && !o.run) {
#if defined(DEVMESH_WITH_MPI)
    if constexpr (!std::is_same_v<World, int>) calibrate_links(dm::init_device_mesh(world, mesh), world);
#endif
    return;
  }
  if (!o.to.empty()) {
    const auto to = dm::parse_sharding(o.to, mesh);
    to.check(ext);
    if (o.run && R == 0) throw std::runtime_error("--run: tensors of 1 to 4 dims here");
    if (me <= 0 && !o.run)
      std::printf("%s", plan_text(mesh, spec, to, ext, dm::plan_redistribute(spec, to)).c_str());
#if defined(DEVMESH_WITH_MPI)
    if constexpr (R >= 1 && !std::is_same_v<World, int>)
      if (o.run) run_plan(o, world, mesh, spec, to, ext);
#endif
    return;
  }
  if (o.json) {
    for (int r = me < 0 ? 0 : me; r < (me < 0 ? mesh.size() : me + 1); ++r)
      std::printf("{\"rank\": %d, \"coordinate\": %s, \"local_shape\": %s, \"global_offset\": %s%s}\n", r,
                  json_list(mesh.coordinate(r)).c_str(), json_list(spec.local_shape(ext, r)).c_str(),
                  json_list(spec.global_offset(ext, r)).c_str(),
                  o.values ? (", \"local_values\": " + json_list(held_indices(spec, ext, r))).c_str() : "");
    return;
  }
  if (me > 0) return;
  std::printf("%s, tensor %s, placements %s\n\n", dm::to_string(mesh).c_str(), shape_text(shape).c_str(),
              dm::to_string(spec).c_str());
  std::printf("| rank | coordinate | local shape | global offset |\n| --- | --- | --- | --- |\n");
  for (int r = 0; r < mesh.size(); ++r)
    std::printf("| %d | %s | %s | %s |\n", r, json_list(mesh.coordinate(r)).c_str(),
                json_list(spec.local_shape(ext, r)).c_str(), json_list(spec.global_offset(ext, r)).c_str());
  if constexpr (R == 1 || R == 2) std::printf("\nwho holds each element (rows: tensor dim 0)\n%s", picture(spec, ext).c_str());
}

template <class Mesh, class World>
void answer_any_rank(const options& o, const World& world, int me) {
  const auto shape = parse_shape(o.shape);
  switch (shape.size()) {
    case 0: return answer<Mesh, 0>(o, shape, world, me);
    case 1: return answer<Mesh, 1>(o, shape, world, me);
    case 2: return answer<Mesh, 2>(o, shape, world, me);
    case 3: return answer<Mesh, 3>(o, shape, world, me);
    default: return answer<Mesh, 4>(o, shape, world, me);
  }
}

/// The mesh type named by --mesh's dims; World: the simulated world's size, or MPI's world.
template <class World>
void answer_any_mesh(const options& o, const World& world, int me) {
  std::string names;
  for (std::size_t i = 0, start = 0; i <= o.mesh.size(); ++i)
    if (i == o.mesh.size() || o.mesh[i] == ',') {
      const std::string item = o.mesh.substr(start, i - start);
      names += (names.empty() ? "" : ",") + item.substr(0, item.find('='));
      start = i + 1;
    }
  if (names == "dp") return answer_any_rank<dm::mesh<dm::dim<"dp">>>(o, world, me);
  if (names == "dp,tp") return answer_any_rank<dm::mesh<dm::dim<"dp">, dm::dim<"tp">>>(o, world, me);
  if (names == "dp,cp,tp") return answer_any_rank<dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>>(o, world, me);
  if (names == "replicate,shard") return answer_any_rank<dm::mesh<dm::dim<"replicate">, dm::dim<"shard">>>(o, world, me);
  throw std::runtime_error("--mesh " + o.mesh + ": this example knows the dims dp; dp,tp; dp,cp,tp; replicate,shard");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const options o = parse_args(argc, argv);
    if (o.world > 0) {  // a simulated world: the layout alone answers for every rank
      answer_any_mesh(o, o.world, -1);
      return 0;
    }
#if defined(DEVMESH_WITH_MPI)
    dm::mpi::environment env(argc, argv);
    auto world = dm::mpi::world();
    return dm::report_once(world, [&] { answer_any_mesh(o, world, world.rank()); });
#else
    throw std::runtime_error("built without MPI: give --world N");
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
