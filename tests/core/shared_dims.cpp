// Views of one world that must agree on the dims they share (core/shared_dims.hpp; Megatron's
// register_view): Megatron's dense (pp, dp, cp, tp) and expert (pp, edp, ep, etp) views, static
// (a static_assert) and with run-time sizes (check_shared_dims), and views that do not agree:
// pp laid out otherwise, a root of another size. Aliases count as dims.
#include <doctest/doctest.h>

#include <devmesh/devmesh.hpp>

#include <string>

namespace dm = devmesh;

namespace {

using dense_t = dm::mesh<dm::dim<"pp", 2>, dm::dim<"dp", 2>, dm::dim<"cp", 1>, dm::dim<"tp", 2>>;
constexpr dense_t dense{};
constexpr auto expert = dense.flatten<"dp_cp_tp", "dp", "cp", "tp">()
                            .slice<"pp", "dp_cp_tp">()
                            .unflatten<"dp_cp_tp", dm::dim<"edp", 2>, dm::dim<"ep", 2>, dm::dim<"etp", 1>>();
static_assert(dm::shared_dims_agree(dense, expert));  // pp: the same groups in both views
static_assert(dm::first_disagreeing_dim(dense, expert) == -1);
// pp outermost in one view, in the middle of the other (Megatron's two order strings mixed).
constexpr dm::mesh<dm::dim<"edp", 2>, dm::dim<"pp", 2>, dm::dim<"ep", 2>> other_order{};
static_assert(!dm::shared_dims_agree(dense, other_order));
static_assert(dm::first_disagreeing_dim(dense, other_order) == 0);  // pp, dense's dim 0
// A root of another size: nothing agrees.
constexpr dm::mesh<dm::dim<"pp", 2>, dm::dim<"tp", 2>> smaller{};
static_assert(dm::first_disagreeing_dim(dense, smaller) == -2);
// No shared name: nothing to disagree on.
constexpr dm::mesh<dm::dim<"a", 8>> world{};
static_assert(dm::shared_dims_agree(dense, world));
// An alias is a dim: dp_cp_tp in the flattened dense view against another mesh's dp_cp_tp.
constexpr auto flat = dense.flatten<"dp_cp_tp", "dp", "cp", "tp">();
constexpr auto wrong_flat = dm::mesh<dm::dim<"dp_cp_tp", 4>, dm::dim<"pp", 2>>{};
static_assert(dm::first_disagreeing_dim(flat, wrong_flat) >= 0);

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const dm::mesh_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_SUITE("shared_dims") {
  TEST_CASE("run-time sizes: Megatron's views from its command line") {
    const int tp = 2, cp = 2, pp = 2, ep = 4;  // world 16, dp inferred
    using world_mesh = dm::mesh<dm::dim<"world">>;
    const auto d = world_mesh(16).unflatten<"world", dm::dim<"pp">, dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>(
        pp, dm::dynamic_size, cp, tp);
    const auto e = d.flatten<"dp_cp_tp", "dp", "cp", "tp">()
                       .slice<"pp", "dp_cp_tp">()
                       .unflatten<"dp_cp_tp", dm::dim<"edp">, dm::dim<"ep">, dm::dim<"etp">>(dm::dynamic_size, ep, 1);
    CHECK(dm::shared_dims_agree(d, e));
    CHECK_NOTHROW(dm::check_shared_dims(d, e));
    // The other order string's expert view against the default's dense view: pp differs.
    const auto wrong = world_mesh(16).unflatten<"world", dm::dim<"edp">, dm::dim<"pp">, dm::dim<"ep">>(
        dm::dynamic_size, pp, ep);
    const std::string msg = error_of([&] { dm::check_shared_dims(d, wrong); });
    CHECK_MESSAGE(msg.find("dim 'pp' has other groups in") != std::string::npos, msg);
    CHECK_MESSAGE(msg.find("(modes (2:4))") != std::string::npos, msg);  // wrong's pp: stride 4
    CHECK_MESSAGE(msg.find("(modes (2:8))") != std::string::npos, msg);  // d's pp: stride 8
    CHECK_MESSAGE(msg.find("views of one world must agree") != std::string::npos, msg);
    const std::string root = error_of([&] { dm::check_shared_dims(d, dm::mesh<dm::dim<"pp">>(4)); });
    CHECK_MESSAGE(root.find("not over the same root (16 and 4 positions)") != std::string::npos, root);
  }
}
