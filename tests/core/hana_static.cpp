// The opt-in Boost.Hana views (devmesh/hana.hpp), at compile time: dim names to and from
// hana::string, a mesh type's dims as a Hana sequence of (name, size) Products, aliases marked.
// Built by g++ and clang (host) and nvcc.
#include <devmesh/devmesh.hpp>
#include <devmesh/hana.hpp>

#include <boost/hana.hpp>

#include <type_traits>

namespace dm = devmesh;
namespace hana = boost::hana;
using namespace dm::literals;

namespace {
using mesh3d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"cp", 2>, dm::dim<"tp", 2>>;
using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;
constexpr auto tp = BOOST_HANA_STRING("tp");

// ---- names ---------------------------------------------------------------------------------
static_assert(std::is_same_v<decltype(dm::hana_name<"tp">), const hana::string<'t', 'p'>>);
static_assert(dm::hana_name<"tp"> == tp && dm::to_hana("tp"_dim) == tp);
static_assert(dm::to_hana(dm::name_t<dm::fixed_string("data_parallel")>{}) == BOOST_HANA_STRING("data_parallel"));
// A hana::string where a devmesh dim name is expected: template arguments, operator[], dim<>.
static_assert(dm::from_hana(tp).view() == "tp");
static_assert(mesh3d{}.size<dm::from_hana(BOOST_HANA_STRING("tp"))>() == 2);
static_assert(mesh3d::dim_index<dm::from_hana(tp)>() == 2);
static_assert(mesh3d{}.local_rank<dm::from_hana(hana::string_c<'c', 'p'>)>(6) == 1);
// (No dim_name<"tp"> or dim<"tp", 4> spelled inside a type argument: nvcc 13 cannot emit host
// code for a class-type template argument nested in one.)
static_assert(decltype(dm::as_dim_name(tp))::value.view() == "tp");
static_assert(std::is_same_v<decltype(mesh3d{}[dm::as_dim_name(tp)]), decltype(mesh3d{}["tp"_dim])>);
static_assert(std::is_same_v<dm::dim<dm::from_hana(tp), 4>::name_type, dm::name<'t', 'p'>>);
// Round trips.
static_assert(dm::to_hana(dm::as_dim_name(BOOST_HANA_STRING("shard"))) == BOOST_HANA_STRING("shard"));
static_assert(dm::from_hana(dm::hana_name<"replicate">).view() == "replicate");

// ---- a static mesh's dims ------------------------------------------------------------------
constexpr auto dims3 = dm::hana_dims<mesh3d>;
static_assert(hana::length(dims3) == hana::size_c<3>);
static_assert(hana::first(dims3[hana::int_c<0>]) == BOOST_HANA_STRING("dp"));
static_assert(std::is_same_v<decltype(hana::second(dims3[hana::int_c<2>])), hana::int_<2>>);
static_assert(hana::transform(dims3, hana::first) ==
              hana::make_tuple(BOOST_HANA_STRING("dp"), BOOST_HANA_STRING("cp"), BOOST_HANA_STRING("tp")));
static_assert(hana::transform(dims3, hana::second) == hana::make_tuple(hana::int_c<2>, hana::int_c<2>, hana::int_c<2>));
static_assert(hana::unpack(hana::transform(dims3, hana::second), [](auto... s) { return (s * ...); }) == hana::int_c<8>);
static_assert(hana::none_of(dims3, [](auto d) { return d.is_alias; }));
// find_if by name: the size as a compile-time constant.
static_assert(hana::second(hana::find_if(dims3, [](auto d) { return hana::first(d) == tp; }).value()) == hana::int_c<2>);
static_assert(hana::find_if(dims3, [](auto d) { return hana::first(d) == BOOST_HANA_STRING("pp"); }) == hana::nothing);
// The same dims from an object.
static_assert(dm::to_hana(mesh3d{}) == dims3);
// hana_dim is a Product: hana::make, equality by (name, size).
static_assert(hana::Product<decltype(dims3[hana::int_c<0>])>::value);
static_assert(hana::make<dm::hana_dim_tag>(BOOST_HANA_STRING("dp"), hana::int_c<2>) == dims3[hana::int_c<0>]);

// ---- aliases: flattened names after the mesh's own dims, marked ------------------------------
using flat = decltype(mesh3d{}.flatten<"dp_cp", "dp", "cp">());
constexpr auto dims_flat = dm::hana_dims<flat>;
static_assert(hana::length(dims_flat) == hana::size_c<4>);
static_assert(hana::first(dims_flat[hana::int_c<3>]) == BOOST_HANA_STRING("dp_cp"));
static_assert(hana::second(dims_flat[hana::int_c<3>]) == hana::int_c<4>);
static_assert(dims_flat[hana::int_c<3>].is_alias && !dims_flat[hana::int_c<2>].is_alias);
static_assert(hana::transform(hana::filter(dims_flat, [](auto d) { return d.is_alias; }), hana::first) ==
              hana::make_tuple(BOOST_HANA_STRING("dp_cp")));
// A whole-mesh flatten keeps the former dims as aliases.
constexpr auto dims_all = dm::hana_dims<decltype(mesh3d{}.flatten<"all">())>;
static_assert(hana::transform(dims_all, hana::first) == hana::make_tuple(BOOST_HANA_STRING("all"), BOOST_HANA_STRING("dp"),
                                                                          BOOST_HANA_STRING("cp"), BOOST_HANA_STRING("tp")));
static_assert(hana::count_if(dims_all, [](auto d) { return d.is_alias; }) == hana::size_c<3>);

// ---- dynamic sizes: hana::int_<dynamic_size> from the type, an int from the object ----------
constexpr auto dims_hsdp = dm::hana_dims<hsdp>;
static_assert(hana::second(dims_hsdp[hana::int_c<0>]) == hana::int_c<dm::dynamic_size>);
static_assert(hana::second(dims_hsdp[hana::int_c<1>]) == hana::int_c<4>);
constexpr auto from_object = dm::to_hana(hsdp(3));
static_assert(std::is_same_v<decltype(hana::second(from_object[hana::int_c<0>])), int>);
static_assert(hana::second(from_object[hana::int_c<0>]) == 3);
static_assert(std::is_same_v<decltype(hana::second(from_object[hana::int_c<1>])), hana::int_<4>>);
// A derived dynamic mesh: the flattened alias's size is read from the object too.
constexpr auto dims_hsdp_flat = dm::to_hana(hsdp(3).flatten<"rs", "replicate", "shard">());
static_assert(hana::second(dims_hsdp_flat[hana::int_c<2>]) == 12 && dims_hsdp_flat[hana::int_c<2>].is_alias);
}  // namespace

int main() { return 0; }
