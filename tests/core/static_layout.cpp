// Compile-time layout: every query of a fully static mesh is a constant expression.
// Built by g++ and clang (host) and nvcc (with a kernel that uses the layout).
#include <devmesh/devmesh.hpp>

#include <algorithm>
#include <array>
#include <ranges>
#include <type_traits>

namespace dm = devmesh;
using namespace dm::literals;

namespace {
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;
constexpr mesh3d m{};

// The contract from the core issue, verbatim.
static_assert(mesh3d::ndim == 3 && m.size() == 8 && m.size<"tp">() == 2);
static_assert(m.coordinate(5) == std::array{1, 0, 1});
static_assert(m.rank_at({1, 1, 0}) == 6);
static_assert(m.local_rank<"cp">(6) == 1);
static_assert(std::ranges::equal(m.group<"tp">(5), std::array{4, 5}));
static_assert(std::ranges::equal(m.group<"dp", "cp">(1), std::array{1, 3, 5, 7}));
static_assert(std::is_empty_v<mesh3d>);
static_assert(std::ranges::random_access_range<decltype(m.group<"tp">(0))>);
static_assert(std::ranges::sized_range<decltype(m.group<"tp">(0))>);

// A fully static mesh also takes its sizes, checked against the static ones (a mismatch
// here is the compile-fail case static_size_mismatch_constexpr), from any integer type.
constexpr mesh3d sized(2, 2L, 2u);
static_assert(sized.size() == 8 && sized.shape() == m.shape());

// Transposed order: same members, rank order follows the names given.
static_assert(std::ranges::equal(m.group<"cp", "dp">(1), std::array{1, 5, 3, 7}));
// Split arguments: color = first rank of the group, key = index in it.
static_assert(m.comm_split<"tp">(5) == dm::split_args{4, 1});
static_assert(m.comm_split<"cp", "dp">(7) == dm::split_args{1, 3});

// Slices.
constexpr auto s = m.slice<"dp", "cp">();
static_assert(decltype(s)::ndim == 2 && s.size() == 4 && s.shape() == std::array{2, 2});
static_assert(std::ranges::equal(s.group(3), std::array{1, 3, 5, 7}));
static_assert(s.coordinate(6) == std::array{1, 1});
static_assert(s.rank_at({1, 0}, 3) == 5);
constexpr auto tp = m["tp"_dim];
static_assert(decltype(tp)::ndim == 1 && tp.size() == 2);

// Flatten into an alias, adjacent and not; slice the alias with other dims.
constexpr auto f = m.flatten<"dp_cp", "dp", "cp">();
static_assert(f.size<"dp_cp">() == 4 && decltype(f)::ndim == 3 && f.size() == 8);
static_assert(std::ranges::equal(f.group<"dp_cp">(1), std::array{1, 3, 5, 7}));
static_assert(std::ranges::equal(f.slice<"dp_cp", "tp">().group(2), std::array{0, 1, 2, 3, 4, 5, 6, 7}));
constexpr auto dt = m.flatten<"dp_tp", "dp", "tp">();
static_assert(std::ranges::equal(dt.group<"dp_tp">(0), std::array{0, 1, 4, 5}));
static_assert(std::ranges::equal(dt.group<"dp_tp">(7), std::array{2, 3, 6, 7}));

// Whole-mesh flatten (PyTorch _flatten): 1-D; the old dims stay reachable as aliases.
constexpr auto f1 = s.flatten<"dp_cp">();
static_assert(decltype(f1)::ndim == 1 && f1.size() == 4);
static_assert(std::ranges::equal(f1.group(1), std::array{1, 3, 5, 7}));
static_assert(std::ranges::equal(f1.group<"dp">(1), std::array{1, 5}));

// PyTorch's default flatten name: the dims' names joined by '_'; and, as in PyTorch, a
// 1-D mesh flattened into its own name is itself.
constexpr auto f_default = s.flatten();
static_assert(decltype(f_default)::ndim == 1 && decltype(f_default)::name(0) == "dp_cp");
static_assert(std::ranges::equal(f_default.group(1), f1.group(1)));
static_assert(decltype(m.flatten<>())::name(0) == "dp_cp_tp");
static_assert(std::is_same_v<decltype(tp.flatten()), std::remove_const_t<decltype(tp)>>);
static_assert(std::is_same_v<decltype(tp.flatten<"tp">()), std::remove_const_t<decltype(tp)>>);
static_assert(decltype(tp.flatten<"tp2">())::name(0) == "tp2");

// Unflatten.
using mesh2d = dm::mesh<dm::dim<"dp", 4>, dm::dim<"tp", 2>>;
constexpr auto u = mesh2d{}.unflatten<"dp", dm::dim<"dp_rep", 2>, dm::dim<"dp_shard", 2>>();
static_assert(decltype(u)::ndim == 3 && u.shape() == std::array{2, 2, 2});
static_assert(std::ranges::equal(u.group<"dp_shard">(0), std::array{0, 2}));
static_assert(std::ranges::equal(u.group<"dp_rep">(0), std::array{0, 4}));
// Unflatten a flattened dim (non-adjacent atoms): (dp, tp) -> (a=2, b=2).
constexpr auto fu = dt.slice<"dp_tp">().unflatten<"dp_tp", dm::dim<"a", 2>, dm::dim<"b", 2>>();
static_assert(std::ranges::equal(fu.group<"a">(0), std::array{0, 4}));
static_assert(std::ranges::equal(fu.group<"b">(0), std::array{0, 1}));
// Unflatten that cuts an atom: a flattened 4x2 dim into (2, 4).
using mesh42 = dm::mesh<dm::dim<"x", 4>, dm::dim<"y", 2>>;
constexpr auto cut = mesh42{}.flatten<"xy">().unflatten<"xy", dm::dim<"hi", 2>, dm::dim<"lo", 4>>();
static_assert(std::ranges::equal(cut.group<"lo">(0), std::array{0, 1, 2, 3}));
static_assert(std::ranges::equal(cut.group<"hi">(1), std::array{1, 5}));

// A type is its names and layout, not its history (issue 10).
using mesh24 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;
using root24 = mesh24::basic_mesh;
static_assert(std::is_same_v<decltype(mesh24{}.slice<"dp", "tp">()), root24>);
static_assert(std::is_same_v<decltype(mesh24{}.slice<"dp", "tp">().slice<"dp", "tp">()), root24>);
static_assert(std::is_same_v<decltype(mesh24{}.slice<"tp">()), decltype(mesh24{}.slice<"tp", "dp">().slice<"tp">())>);
// ... also with dynamic sizes: the same slots, renumbered the same way.
using dyn24 = dm::mesh<dm::dim<"dp">, dm::dim<"tp", 4>>;
static_assert(std::is_same_v<decltype(dyn24(2).slice<"dp", "tp">()), dyn24::basic_mesh>);
static_assert(std::is_same_v<decltype(dyn24(2).slice<"tp">()), decltype(dyn24(2).slice<"tp", "dp">().slice<"tp">())>);
// An unflatten undone by a flatten into the old name is the old layout plus the new dims'
// names as aliases: not the same type (the names differ), but the same layout value.
constexpr auto round_trip = mesh24{}.unflatten<"tp", dm::dim<"a", 2>, dm::dim<"b", 2>>().flatten<"tp", "a", "b">();
static_assert(decltype(round_trip)::layout.nprimary == 3 && round_trip.group<"tp">(5).size() == 4);
static_assert(std::ranges::equal(round_trip.group<"tp">(5), mesh24{}.group<"tp">(5)));
// Each dim's layout is CuTe's (shape : stride) over the root's ranks. The round trip's "tp"
// has two modes, (2:2, 2:1); coalesce merges them into mesh24's (4:1): the same groups.
constexpr auto rt_tp = round_trip.dim_layout(round_trip.dim_index<"tp">());
static_assert(rt_tp.count == 2 && rt_tp.shape[0] == 2 && rt_tp.stride[0] == 2 && rt_tp.stride[1] == 1);
static_assert(!(rt_tp == mesh24{}.dim_layout(1)) && rt_tp.coalesce() == mesh24{}.dim_layout(1));
static_assert(rt_tp.coalesce().count == 1 && rt_tp.coalesce().shape[0] == 4);
// (dp, tp) of a 2x2x2 mesh is (2:4, 2:1): not contiguous, coalesce keeps both modes; as a
// function it maps the i-th member of a group to its offset from the group's first rank.
constexpr auto dp_tp = dt.dim_layout(dt.dim_index<"dp_tp">());
static_assert(dp_tp.coalesce() == dp_tp && dp_tp.count == 2);
static_assert(dp_tp(0) == 0 && dp_tp(1) == 1 && dp_tp(2) == 4 && dp_tp(3) == 5);
// Size-1 modes carry no rank: coalesce drops them.
constexpr auto with_one = dm::mesh<dm::dim<"a", 1>, dm::dim<"b", 4>>{}.flatten<"ab">().dim_layout(0);
static_assert(with_one.count == 2 && with_one.coalesce().count == 1 && with_one.coalesce().stride[0] == 1);
// Different layouts stay different types even when their sizes agree.
static_assert(!std::is_same_v<decltype(mesh24{}.slice<"tp", "dp">()), root24>);

// One layout vocabulary. dim_layout is a function from an index to an offset, and index_of
// its inverse (-1 off the function's image); size() is its number of indices.
static_assert(dp_tp.size() == 4 && dp_tp.index_of(5) == 3 && dp_tp.index_of(4) == 2 && dp_tp.index_of(0) == 0);
static_assert(dp_tp.index_of(2) == -1 && dp_tp.index_of(8) == -1 && dp_tp.index_of(-1) == -1);
// coalesce() gives one type whatever the capacity: the key of a group.
static_assert(std::is_same_v<decltype(dp_tp.coalesce()), dm::coalesced_layout>);
static_assert(std::is_same_v<decltype(mesh24{}.dim_layout(0).coalesce()), dm::coalesced_layout>);
static_assert(std::is_same_v<dm::coalesced_layout, dm::dim_layout<30>>);
// Equal layouts hash alike across capacities (std::hash is constexpr over them).
constexpr auto mesh24_tp = mesh24{}.dim_layout(1);
static_assert(std::hash<dm::coalesced_layout>{}(rt_tp.coalesce()) == std::hash<std::remove_const_t<decltype(mesh24_tp)>>{}(mesh24_tp));
static_assert(std::hash<std::remove_const_t<decltype(rt_tp)>>{}(rt_tp) != std::hash<std::remove_const_t<decltype(mesh24_tp)>>{}(mesh24_tp));
// A group is its first position and a dim_layout: the i-th position is front() + layout()(i).
constexpr auto g_cd = m.group<"cp", "dp">(7);  // {1, 5, 3, 7}
static_assert(g_cd.front() == 1 && g_cd.layout().count == 2 && g_cd.layout().stride[0] == 2 && g_cd.layout().stride[1] == 4);
static_assert(g_cd[2] == g_cd.front() + g_cd.layout()(2) && g_cd.index_of(3) == 2 && g_cd.index_of(2) == -1);
// (Not dm::rank_group<2>: nvcc 13's host code would spell that type as the expression it was
// first made from inside group<>, which does not compile.)
static_assert(std::remove_const_t<decltype(g_cd)>(1, g_cd.layout()) == g_cd);

// One index domain per name: dim indices are [0, ndim_with_aliases), aliases after the
// mesh's own dims, for every query that takes one (size(d) is PyTorch's for d < ndim).
static_assert(decltype(f)::ndim == 3 && f.size(3) == 4 && f.size(f.dim_index<"dp_cp">()) == f.size<"dp_cp">());
static_assert(f.dim_size(3) == 4 && f.dim_layout(3).count == 2 && decltype(f)::name(3) == "dp_cp");
static_assert(f.comm_split(5, 3) == f.comm_split<"dp_cp">(5));

// Static <-> dynamic conversion, as std::extents: static -> dynamic is implicit, and the
// dynamic mesh has the same values; back to static is explicit (checked).
using dyn3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;
constexpr dyn3 m_dyn = m;
static_assert(m_dyn.shape() == m.shape() && m_dyn == m && !std::is_empty_v<dyn3>);
static_assert(std::is_convertible_v<mesh3d, dyn3> && !std::is_convertible_v<dyn3, mesh3d>);
static_assert(std::is_constructible_v<mesh3d, dyn3> && mesh3d(m_dyn) == m);
// Derived meshes convert the same way (same names and structure): slices, aliases.
using dyn_f = decltype(m_dyn.flatten<"dp_cp", "dp", "cp">());
constexpr dyn_f f_dyn = f;
static_assert(f_dyn.size<"dp_cp">() == 4 && decltype(f)(f_dyn) == f);
static_assert(!std::is_constructible_v<dyn_f, mesh3d>);  // another structure (no alias)
static_assert(!std::is_constructible_v<dm::mesh<dm::dim<"dp">, dm::dim<"pp">>, mesh24>);  // other names
static_assert(std::is_convertible_v<decltype(mesh24{}.slice<"dp", "tp">()), mesh24>);  // a root's own layout

// Unflatten as PyTorch cuts a dim (issue 40): a contiguous flattened dim is cut as one mode,
// here ep straddles cp and tp; every ep group over the root, from the derived mesh.
constexpr auto expert = dm::mesh<dm::dim<"pp", 2>, dm::dim<"dp", 4>, dm::dim<"cp", 3>, dm::dim<"tp", 2>>{}
                            .flatten<"dp_cp_tp", "dp", "cp", "tp">()
                            .slice<"pp", "dp_cp_tp">()
                            .unflatten<"dp_cp_tp", dm::dim<"edp", 6>, dm::dim<"ep", 4>, dm::dim<"etp", 1>>();
static_assert(std::ranges::equal(expert.group<"ep">(5), std::array{4, 5, 6, 7}));
static_assert(dm::all_groups<"ep">(expert).size() == 12 && dm::all_groups<"ep">(expert.slice<"ep">()).size() == 12);
static_assert((*dm::all_groups<"edp">(expert).begin()).back() == 20);

}  // namespace

#if defined(__CUDACC__)
// The layout in device code: coordinates and groups inside a kernel.
__global__ void layout_kernel(int* out) {
  constexpr mesh3d mm{};
  const int r = static_cast<int>(threadIdx.x);
  out[r] = mm.local_rank<"tp">(r) + 10 * mm.group<"dp", "cp">(r)[1] + 100 * mm.coordinate(r)[0];
}
// Every derivation is host-device: slice, flatten, unflatten and concatenate inside a kernel,
// with the run-time checks of a dynamic mesh (unflatten's sizes, concatenate's overlap, a
// conversion to a static type), which trap in device code. A dynamic mesh comes in as an
// argument, converted from a static one on the host.
__global__ void derive_kernel(dyn3 d, int* out) {
  constexpr mesh3d mm{};
  const int r = static_cast<int>(threadIdx.x);
  const auto u = mm.unflatten<"tp", dm::dim<"a", 1>, dm::dim<"b">>();
  const auto c = dm::concatenate(mm["tp"_dim], mm.flatten<"dp_cp", "dp", "cp">()["dp_cp"_dim]);
  const auto du = d.unflatten<"dp", dm::dim<"x">, dm::dim<"y", 1>>();
  const auto dc = d["tp"_dim].concatenate(d["dp"_dim]);
  const mesh3d back(d);
  const dyn3 again = back;
  out[r] = u.size<"b">() + c.group<"dp_cp">(r).front() + du.size<"x">() + dc.local_rank<"dp">(r) + again.size();
  // Sizes given at run time, a flattened dim cut as PyTorch cuts it (checks trap here).
  const auto cut = d.flatten<"all">().unflatten<"all", dm::dim<"p">, dm::dim<"q">>(dm::dynamic_size, 4);
  out[8 + r] = cut.group<"q">(r).front() + dm::all_groups<"p">(cut).size();
}
void launch_derive_kernel(int* out) { derive_kernel<<<1, 8>>>(dyn3(mesh3d{}), out); }
#endif

int main() { return 0; }
