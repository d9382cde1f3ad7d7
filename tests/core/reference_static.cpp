// The reference docs' rank tables as static_asserts on static meshes (every query is a
// constant expression). Built by g++, clang (-fsyntax-only) and nvcc.
#include "reference_tables.hpp"

namespace dm = devmesh;

namespace {
using mesh_dp_tp = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
using mesh_dp_pp_cp = dm::mesh<dm::dim<"dp", 2>, dm::dim<"pp", 2>, dm::dim<"cp", 2>>;
using mesh_dp_cp_tp = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;
using mesh_rst = dm::mesh<dm::dim<"replicate", 2>, dm::dim<"shard", 2>, dm::dim<"tp", 2>>;
using mesh_hsdp = dm::mesh<dm::dim<"replicate", 2>, dm::dim<"shard", 4>>;

static_assert(reference::local_rank_2x4(mesh_dp_tp{}));
static_assert(reference::getitem_2x4(mesh_dp_tp{}));
static_assert(reference::getitem_2x2x2(mesh_dp_pp_cp{}));
static_assert(reference::flatten_dp_cp(mesh_dp_cp_tp{}));
static_assert(reference::flatten_dp_tp(mesh_dp_cp_tp{}));
static_assert(reference::slice_alias_with_tp(mesh_dp_cp_tp{}));
static_assert(reference::notes_table_2x2x2(mesh_rst{}));
static_assert(reference::notes_hsdp_slice(mesh_rst{}));
static_assert(reference::tutorial_hsdp(mesh_hsdp{}));

// The tables are not vacuous: a wrong layout fails them.
static_assert(!reference::local_rank_2x4(dm::mesh<dm::dim<"dp", 4>, dm::dim<"tp", 2>>{}));
static_assert(!reference::tutorial_hsdp(dm::mesh<dm::dim<"shard", 4>, dm::dim<"replicate", 2>>{}));
static_assert(!reference::getitem_2x2x2(dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"pp", 2>>{}));
static_assert(!reference::notes_table_2x2x2(dm::mesh<dm::dim<"tp", 2>, dm::dim<"shard", 2>, dm::dim<"replicate", 2>>{}));
}  // namespace

int main() { return 0; }
