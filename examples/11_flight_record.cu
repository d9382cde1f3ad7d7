// Example 11: the flight record, and reading the ranks' records after a hang.
//
// Every root mesh keeps its last calls (typed collectives and devmesh's own steps such as
// flatten): the dim, the call, element type and count, the call's number on that dim, start
// and end times and how it ended. PyTorch's ProcessGroupNCCL keeps the same (its flight
// recorder) so that a hang can be diagnosed after the fact. Here a (dp=2, tp=4) mesh makes a
// few calls and rank 0 prints its record (times left out: they change from run to run).
//
// After a hang: run the job with DEVMESH_WATCHDOG=<seconds> (the collectives end with a
// comm_error instead of waiting forever) and DEVMESH_FLIGHT_RECORD=<dir> (each rank writes its
// record there when a watchdog or a deadline fires), then
//
//   ./11_flight_record --analyze <dir>
//
// prints, per dim and group, the first call that some ranks made and others never did (what
// PyTorch's fr_trace does). No MPI is needed for that.
// Run: mpirun -np 8 ./11_flight_record    or    ./11_flight_record --analyze <dir>
#include "common.hpp"

#include <devmesh/runtime/flight_trace.hpp>

#include <cstring>
#include <filesystem>
#include <vector>

namespace dm = devmesh;

using mesh_2d_t = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

int run(dm::mpi::communicator& world) {
  const auto mesh = dm::init_device_mesh<mesh_2d_t>(world);
  std::vector<float> grad(6, 1.0f);
  mesh.all_reduce<"tp">(grad, dm::op::sum);
  mesh.broadcast<"dp">(grad, 0);
  const auto flat = mesh.flatten<"dp_tp">();
  std::vector<double> loss(1, 0.5);
  flat.all_reduce<"dp_tp">(loss, dm::op::avg);
  dm::barrier<"tp">(mesh);

  const dm::flight_record r = mesh.flight_record();
  std::string text = "rank " + std::to_string(r.rank) + "'s flight record of mesh" + r.mesh + ", " +
                     std::to_string(r.recorded) + " calls:\n";
  for (const auto& e : r.entries)
    text += "  #" + std::to_string(e.id) + "  " + e.on->name + " call " + std::to_string(e.seq) + ": " +
            std::string(e.what) + (e.type.empty() ? std::string() : " " + std::string(e.type) + " x " + std::to_string(e.count)) +
            ", " + dm::state_name(e.state) + "\n";
  if (examples::world_rank() == 0) std::printf("%s", text.c_str());
  examples::check(r.entries.size() == 5 && r.entries[3].what == "all_reduce" && r.entries[4].seq == 2,
                  "the record holds the five calls, numbered per dim");
  return 0;
}

/// --analyze <dir>: every rank's dump in dir, read back and compared.
int analyze(const char* dir) {
  const std::vector<dm::flight_dump> dumps = dm::read_flight_dumps(dir);
  std::printf("%zu flight records in %s\n", dumps.size(), std::filesystem::path(dir).filename().c_str());
  for (const auto& d : dumps)
    std::printf("  rank %d: %zu entries, last: %s\n", d.rank, d.entries.size(),
                d.entries.empty() ? "-"
                                  : (d.entries.back().what + " on " + d.entries.back().channel + " #" +
                                     std::to_string(d.entries.back().seq) + " (" + d.entries.back().state + ")")
                                        .c_str());
  const auto found = dm::analyze(dumps);
  std::printf("%s\n", found.empty() ? "the ranks agree: no group diverges" : "where the ranks diverge:");
  for (const auto& v : found) std::printf("  %s\n", to_string(v).c_str());
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--analyze") == 0) return analyze(argv[2]);
  return examples::main(argc, argv, run);
}
