// tests/contract/contract_custom_backend.cpp: a backend of the user's own in the compiled mode
// (docs/runtime.md, "Writing a backend"; docs/design.md, "Compiled once"). The program links
// devmesh::mpi, so DEVMESH_SEPARATE_COMPILATION is on and the headers only declare the
// runtime; devmesh's library instantiates it for dm::mpi::communicator alone. A backend of
// its own (here a wrapper of the MPI communicator that counts the calls reaching it) is
// instantiated in one file of the program: this one includes the runtime's definitions
// (runtime/impl/mesh_runtime.hpp) and compiles them all once, DEVMESH_INSTANTIATE_RUNTIME, so
// that the program's other files may use the backend with the declarations alone. (Without the
// include, mesh_runtime<counting_comm>'s members are undefined and the program does not link.)
//   compiled   init, a lazy dim, a flatten and collectives over counting_comm: right values,
//              and the runtime's steps went through the wrapper (its control plane and its
//              collectives counted).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <devmesh/devmesh.hpp>
#include <devmesh/runtime/impl/mesh_runtime.hpp>

#include "../mpi/mpi_doctest.hpp"

namespace dm = devmesh;

static_assert(!DEVMESH_HEADER_ONLY, "this test checks the compiled mode (it links devmesh::mpi)");

namespace contract_custom_backend_test {

/// The MPI communicator behind the concept's members, counting what devmesh calls.
class counting_comm {
 public:
  using native_type = MPI_Comm;
  using options_type = dm::mpi::comm_options;
  using stream_type = dm::mpi::communicator::stream_type;
  template <class T>
  static constexpr bool carries = dm::mpi::communicator::carries<T>;
  static inline int control_calls = 0;     // all_gather_bytes, all_reduce_max, duplicate
  static inline int collective_calls = 0;  // the collectives

  counting_comm() = default;
  explicit counting_comm(dm::mpi::communicator c) : c_(std::move(c)) {}

  bool valid() const { return c_.valid(); }
  int rank() const { return c_.rank(); }
  int size() const { return c_.size(); }
  MPI_Comm native() const { return c_.native(); }
  static const char* backend_name() { return "counting"; }
  static void group_start() {}
  static void group_end() {}
  void abort() noexcept { c_.abort(); }

  counting_comm split(int color, int key, const options_type& o) const { return counting_comm(c_.split(color, key, o)); }
  void all_gather_bytes(const void* in, void* out, std::size_t n, const dm::deadline& d) const {
    ++control_calls;
    c_.all_gather_bytes(in, out, n, d);
  }
  void all_reduce_max(std::uint64_t* w, std::size_t n, const dm::deadline& d) const {
    ++control_calls;
    c_.all_reduce_max(w, n, d);
  }
  counting_comm duplicate(const dm::deadline& d) const {
    ++control_calls;
    return counting_comm(c_.duplicate(d));
  }

  void all_reduce(const void* s, void* r, std::size_t n, dm::element_type t, dm::op o, stream_type st) const {
    ++collective_calls;
    c_.all_reduce(s, r, n, t, o, st);
  }
  void reduce(const void* s, void* r, std::size_t n, dm::element_type t, dm::op o, int root, stream_type st) const {
    ++collective_calls;
    c_.reduce(s, r, n, t, o, root, st);
  }
  void broadcast(void* b, std::size_t n, dm::element_type t, int root, stream_type st) const {
    ++collective_calls;
    c_.broadcast(b, n, t, root, st);
  }
  void all_gather(const void* s, void* r, std::size_t n, dm::element_type t, stream_type st) const {
    ++collective_calls;
    c_.all_gather(s, r, n, t, st);
  }
  void reduce_scatter(const void* s, void* r, std::size_t n, dm::element_type t, dm::op o, stream_type st) const {
    ++collective_calls;
    c_.reduce_scatter(s, r, n, t, o, st);
  }
  void all_to_all(const void* s, void* r, std::size_t n, dm::element_type t, stream_type st) const {
    ++collective_calls;
    c_.all_to_all(s, r, n, t, st);
  }
  void barrier(stream_type st) const {
    ++collective_calls;
    c_.barrier(st);
  }
  void sendrecv(const void* s, std::size_t ns, int dest, void* r, std::size_t nr, int source, dm::element_type t,
                stream_type st) const {
    ++collective_calls;
    c_.sendrecv(s, ns, dest, r, nr, source, t, st);
  }

 private:
  dm::mpi::communicator c_;
};
static_assert(dm::communicator<counting_comm>);

using m2 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp">>;

TEST_CASE("compiled") {
  auto world = counting_comm(dm::mpi::world().split(0, dm::mpi::world().rank(), {}));
  REQUIRE(world.size() == 4);
  dm::device_mesh_options<counting_comm> options;
  options.lazy = true;
  auto mesh = dm::init_device_mesh<m2>(world, options);
  const int control_after_init = counting_comm::control_calls;
  CHECK(control_after_init > 0);  // init's agreement ran on the wrapper's control plane

  std::vector<long> v{mesh.rank() + 1L, 10L};
  mesh.all_reduce<"tp">(std::span(v), dm::op::sum);  // a lazy dim: created on first use
  const int tp = mesh.local_rank<"dp">();             // tp's group: world ranks 2 dp + {0, 1}
  CHECK(v[0] == (2 * tp + 1) + (2 * tp + 2));
  CHECK(v[1] == 20);

  auto flat = mesh.flatten<"all">();
  std::vector<double> w{1.5};
  flat.all_reduce<"all">(std::span(w), dm::op::max);
  CHECK(w[0] == 1.5);
  std::vector<int> g(4, -1);
  int mine = mesh.rank();
  flat.all_gather<"all">(std::span(&mine, 1), std::span(g));
  CHECK(g == std::vector<int>{0, 1, 2, 3});
  CHECK(counting_comm::collective_calls == 3);
  CHECK(counting_comm::control_calls > control_after_init);  // the lazy dim and the flatten agreed
}

}  // namespace contract_custom_backend_test

// The compiled runtime for this program's own backend (docs/runtime.md, "Writing a backend").
DEVMESH_INSTANTIATE_RUNTIME(contract_custom_backend_test::counting_comm);
