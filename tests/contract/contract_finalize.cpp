// tests/contract/contract_finalize.cpp (issue 9: "nothing silently wrong"): devmesh calls
// after MPI_Finalize. A device mesh (and a world communicator handle, and a reference to one
// dim's communicator) outlive a dm::mpi::environment in a nested scope; after it finalized
// MPI, each call below must throw a std::exception subclass (dm::mesh_error or
// dm::comm_error) whose what() contains "finalized", and the process must exit 0: MPI must
// never get to abort the job. One scenario per call (an abort ends the process, so each
// call gets its own verdict: the test case of that name, --test-case=<scenario>); 2 ranks. The
// test cases initialize and finalize MPI themselves (TEST_CASES_OWN_MPI): checks after
// MPI_Finalize are local, each rank's exit status carries them.
//
//   all_reduce, broadcast   typed collectives of the mesh
//   flatten, unflatten      derived meshes (collective in eager mode)
//   comm                    mesh.comm<"dp">()
//   comm_collective         barrier and all_reduce on a dim's communicator taken before
//   init                    init_device_mesh over a world handle taken before
//   split                   dm::mpi::communicator::split on that handle
//   during                  the other side: inside MPI_Finalize, before MPI is finalized, a
//                           user's MPI_COMM_SELF delete callback that runs after devmesh's own
//                           (devmesh marks MPI as finalizing there, so that the collectives'
//                           check is one flag) still gets working collectives: no false
//                           "finalized" while MPI_Finalized says 0
#include <cstdio>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <devmesh/devmesh.hpp>

#include "../mpi/mpi_doctest.hpp"

namespace dm = devmesh;
using C = dm::mpi::communicator;
using m2 = dm::mesh<dm::dim<"dp">, dm::dim<"tp">>;

TEST_CASES_OWN_MPI();

namespace {

int me = -1;

/// Each test case initializes MPI: one per process.
void require_fresh_process() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  REQUIRE_MESSAGE(!initialized, "MPI was initialized already: run one test case per process (--test-case)");
}

/// f must throw mesh_error or comm_error whose what() contains "finalized".
template <class F>
void expect_finalized(const std::string& what, F&& f) {
  std::string type, message;
  try {
    f();
  } catch (const dm::mesh_error& e) {
    type = "mesh_error", message = e.what();
  } catch (const dm::comm_error& e) {
    type = "comm_error", message = e.what();
  } catch (const std::exception& e) {
    type = "std::exception", message = e.what();
  }
  std::string problem;
  if (type.empty())
    problem = " after MPI_Finalize did not throw";
  else if (type == "std::exception")
    problem = " after MPI_Finalize threw neither mesh_error nor comm_error: " + message;
  else if (message.find("finalized") == std::string::npos)
    problem = " after MPI_Finalize threw " + type + " without 'finalized': " + message;
  CHECK_MESSAGE(problem.empty(), (what + problem));
  if (problem.empty() && me == 0)
    std::printf("%s after MPI_Finalize: %s: %s\n", what.c_str(), type.c_str(), message.c_str());
}

/// The mesh the `during` scenario's callback uses, and what the callback saw.
std::optional<dm::device_mesh<m2, C>> during_mesh;
std::string during_result = "the callback did not run";

/// A delete callback on MPI_COMM_SELF: runs inside MPI_Finalize, after devmesh's (set
/// later, so deleted first: MPI deletes MPI_COMM_SELF's attributes in reverse order).
int user_on_finalize(MPI_Comm, int, void*, void*) {
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (finalized) {
    during_result = "MPI_Finalized is already 1 in the callback";
    return MPI_SUCCESS;
  }
  try {
    std::vector<int> v{me + 1};
    during_mesh->all_reduce<"tp">(std::span(v), dm::op::sum);
    const int n = during_mesh->size<"tp">();
    during_result = v[0] == n * (n + 1) / 2 ? "" : "all_reduce inside MPI_Finalize gave " + std::to_string(v[0]);
  } catch (const std::exception& e) {
    during_result = std::string("all_reduce inside MPI_Finalize threw: ") + e.what();
  }
  during_mesh.reset();  // freed while MPI still works
  return MPI_SUCCESS;
}

/// A device mesh (owning its borrowed world handle), a world handle and a reference to one
/// dim's communicator that outlive a dm::mpi::environment in a nested scope: MPI is finalized
/// when the constructor returns. Destroyed after MPI_Finalize: nothing freed, no abort.
struct after_finalize {
  std::optional<C> world;                      // a handle to MPI_COMM_WORLD, outliving MPI
  std::optional<dm::device_mesh<m2, C>> mesh;  // owns its (borrowed) world handle
  const C* dp_comm = nullptr;                  // a dim's communicator, taken before
  int n = 0;
  std::vector<int> v{1, 2};

  after_finalize() {
    require_fresh_process();
    {
      dm::mpi::environment env;
      world.emplace(dm::mpi::world());
      me = world->rank();
      n = world->size();
      mesh.emplace(dm::init_device_mesh(dm::mpi::world(), m2(1, n)));
      dp_comm = &mesh->comm<"dp">();
      // Before MPI_Finalize everything works.
      std::vector<int> w{me + 1};
      mesh->all_reduce<"tp">(std::span(w), dm::op::sum);
      CHECK_MESSAGE(w[0] == n * (n + 1) / 2, "all_reduce before MPI_Finalize is wrong");
    }  // MPI_Finalize
    int finalized = 0;
    MPI_Finalized(&finalized);
    CHECK_MESSAGE(finalized, "MPI is not finalized after the environment's scope");
  }
  after_finalize(const after_finalize&) = delete;
  after_finalize& operator=(const after_finalize&) = delete;
  ~after_finalize() {
    mesh.reset();  // before the world handle, as a user's scope would
    world.reset();
  }
};

}  // namespace

TEST_CASE_FIXTURE(after_finalize, "all_reduce") {
  expect_finalized("mesh.all_reduce<\"tp\">", [&] { mesh->all_reduce<"tp">(std::span(v), dm::op::sum); });
}
TEST_CASE_FIXTURE(after_finalize, "broadcast") {
  expect_finalized("mesh.broadcast<\"tp\">", [&] { mesh->broadcast<"tp">(std::span(v), 0); });
}
TEST_CASE_FIXTURE(after_finalize, "flatten") {
  expect_finalized("mesh.flatten<\"all\">", [&] { (void)mesh->flatten<"all">(); });
}
TEST_CASE_FIXTURE(after_finalize, "unflatten") {
  expect_finalized("mesh.unflatten<\"tp\">", [&] { (void)mesh->unflatten<"tp", dm::dim<"t0", 1>, dm::dim<"t1">>(); });
}
TEST_CASE_FIXTURE(after_finalize, "comm") {
  // comm() is an accessor (a load: no MPI call, so it cannot make MPI abort the job and
  // stays zero-cost); whatever is done with the handle after MPI_Finalize throws.
  const auto& c = mesh->comm<"dp">();
  expect_finalized("mesh.comm<\"dp\">().barrier()", [&] { c.barrier(); });
}
TEST_CASE_FIXTURE(after_finalize, "comm_collective") {
  expect_finalized("comm<\"dp\">().barrier()", [&] { dp_comm->barrier(); });
  expect_finalized("comm<\"dp\">().all_reduce",
                   [&] { dp_comm->all_reduce(v.data(), v.data(), v.size(), dm::op::sum); });
}
TEST_CASE_FIXTURE(after_finalize, "init") {
  expect_finalized("init_device_mesh", [&] { (void)dm::init_device_mesh(*world, m2(1, n)); });
}
TEST_CASE_FIXTURE(after_finalize, "split") {
  expect_finalized("communicator::split", [&] { (void)world->split(0, me); });
}

/// MPI initialized by hand; the user's attribute is set before devmesh makes its first
/// communicator (and registers its own), so it is deleted after devmesh's.
TEST_CASE("during") {
  require_fresh_process();
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  int key = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &user_on_finalize, &key, nullptr);
  MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr);
  MPI_Comm_free_keyval(&key);
  {
    const auto world = dm::mpi::world();
    me = world.rank();
    during_mesh.emplace(dm::init_device_mesh(dm::mpi::world(), m2(1, world.size())));
  }
  MPI_Finalize();
  CHECK_MESSAGE(during_result.empty(), during_result);
}
