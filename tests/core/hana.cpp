// The opt-in Boost.Hana views (devmesh/hana.hpp) at run time: the dims of meshes whose sizes
// are only known at run time, walked with hana::for_each / transform / find_if.
// (The compile-time side: hana_static.cpp.)
#include <devmesh/devmesh.hpp>
#include <devmesh/hana.hpp>

#include <boost/hana.hpp>
#include <doctest/doctest.h>

#include <string>

namespace dm = devmesh;
namespace hana = boost::hana;

namespace {
using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 2>, dm::dim<"tp">>;

/// "name=size" for every dim, aliases as "(alias name=size)": what a user's logging would do.
template <class Dims>
std::string describe(const Dims& dims) {
  std::string out;
  hana::for_each(dims, [&](const auto& d) {
    const std::string item = std::string(hana::to<const char*>(hana::first(d))) + "=" +
                             std::to_string(static_cast<int>(hana::second(d)));
    out += (out.empty() ? "" : " ") + (d.is_alias ? "(alias " + item + ")" : item);
  });
  return out;
}
}  // namespace

TEST_SUITE("hana") {
TEST_CASE("the dims of a dynamic mesh: sizes read from the object, static ones as hana::int_") {
  const int replicate = 3, tp = 4;  // as if from the command line
  const hsdp m(replicate, 2, tp);
  const auto dims = dm::to_hana(m);
  CHECK(describe(dims) == "replicate=3 shard=2 tp=4");
  // hana::transform to the sizes, multiplied at run time: the mesh's size.
  int product = 1;
  hana::for_each(hana::transform(dims, hana::second), [&](auto s) { product *= s; });
  CHECK(product == m.size());
  // find_if by name: a dynamic dim's size is m's value.
  const auto found = hana::find_if(dims, [](auto d) { return hana::first(d) == BOOST_HANA_STRING("tp"); });
  CHECK(hana::second(found.value()) == m.size<"tp">());
  // The type alone cannot know the dynamic sizes: dynamic_size, as in dim<"tp">::size.
  CHECK(describe(dm::hana_dims<hsdp>) == "replicate=-1 shard=2 tp=-1");
}

TEST_CASE("aliases after the mesh's own dims, marked; a hana::string names a dim at run time too") {
  const hsdp m(2, 2, 3);
  const auto f = m.flatten<"rs", "replicate", "shard">();
  CHECK(describe(dm::to_hana(f)) == "replicate=2 shard=2 tp=3 (alias rs=4)");
  // A slice keeps as aliases the dims whose modes it covers.
  CHECK(describe(dm::to_hana(f.slice<"replicate", "shard">())) == "replicate=2 shard=2 (alias rs=4)");
  CHECK(describe(dm::to_hana(f.slice<"tp">())) == "tp=3");
  // Names from Hana where devmesh expects one: a template argument, operator[].
  constexpr auto rs = BOOST_HANA_STRING("rs");
  CHECK(f.size<dm::from_hana(rs)>() == 4);
  CHECK(f[dm::as_dim_name(rs)].size() == 4);
  CHECK(f.local_rank<dm::from_hana(BOOST_HANA_STRING("tp"))>(5) == 2);
  // And back: every name of the mesh as a hana::string, as text.
  std::string names;
  hana::for_each(hana::transform(dm::to_hana(f), hana::first), [&](auto s) { names += hana::to<const char*>(s); });
  CHECK(names == "replicateshardtprs");
}
}
