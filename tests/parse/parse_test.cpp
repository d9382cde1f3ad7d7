// Unit tests for devmesh/core/parse.hpp: what parses, and the exact complaint for each kind of
// bad input (the message fragment each test checks is what a user would see).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <devmesh/core/parse.hpp>

#include <cstdlib>
#include <string>
#include <string_view>

namespace dm = devmesh;

using hsdp = dm::mesh<dm::dim<"replicate">, dm::dim<"shard", 4>>;
using dyn3 = dm::mesh<dm::dim<"dp">, dm::dim<"cp">, dm::dim<"tp">>;
using static2 = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

namespace {
// The message of the mesh_error that f throws; fails the test if it throws nothing else.
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const dm::mesh_error& e) {
    return e.what();
  }
  FAIL("no mesh_error thrown");
  return {};
}
#define CHECK_REJECTS(expr, fragment)                               \
  do {                                                              \
    const std::string msg = error_of([&] { (void)(expr); });        \
    INFO(msg);                                                      \
    CHECK(msg.starts_with("devmesh: "));                            \
    CHECK(msg.find(fragment) != std::string::npos);                 \
  } while (0)

template <class M>
std::string parsed(std::string_view spec, int world = -1) {
  return dm::to_spec(world < 0 ? dm::parse_mesh<M>(spec) : dm::parse_mesh<M>(spec, world));
}
}  // namespace

TEST_CASE("well-formed specs") {
  CHECK(parsed<hsdp>("replicate=2,shard=4") == "replicate=2,shard=4");
  CHECK(parsed<hsdp>("shard=4,replicate=2") == "replicate=2,shard=4");  // any order
  CHECK(parsed<hsdp>("  replicate = 2 ,\tshard= 4  ") == "replicate=2,shard=4");
  CHECK(parsed<dyn3>("dp=1,cp=1,tp=1") == "dp=1,cp=1,tp=1");
  CHECK(parsed<dyn3>("tp=8,dp=3,cp=5", 120) == "dp=3,cp=5,tp=8");
  CHECK(parsed<static2>("dp=2,tp=4", 8) == "dp=2,tp=4");
  CHECK(parsed<dyn3>("dp=2147483647,cp=1,tp=1") == "dp=2147483647,cp=1,tp=1");
  const auto h = dm::parse_mesh<hsdp>("replicate=2,shard=4", 8);
  CHECK(h.size() == 8);
  CHECK(h.rank_at({1, 3}) == 7);
  CHECK(dm::to_spec(hsdp::for_world(16)) == "replicate=4,shard=4");
}

TEST_CASE("one inferred size: *, auto, -1") {
  CHECK(parsed<hsdp>("replicate=*,shard=4", 8) == "replicate=2,shard=4");
  CHECK(parsed<hsdp>("replicate=auto,shard=4", 12) == "replicate=3,shard=4");
  CHECK(parsed<hsdp>("replicate=-1,shard=4", 4) == "replicate=1,shard=4");
  CHECK(parsed<hsdp>("replicate=2,shard=*", 8) == "replicate=2,shard=4");  // static dim: checked
  CHECK(parsed<dyn3>("dp=2, cp=*, tp=2", 24) == "dp=2,cp=6,tp=2");
}

TEST_CASE("empty string") {
  CHECK_REJECTS(dm::parse_mesh<hsdp>(""), "devmesh: empty mesh spec");
  CHECK_REJECTS(dm::parse_mesh<hsdp>(" \t "), "devmesh: empty mesh spec");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("", 8), "expected name=size,... for dims replicate, shard");
}

TEST_CASE("unknown name lists the dims that exist") {
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=2,shards=4"),
                "devmesh: unknown dim \"shards\" in mesh spec; the dims are replicate, shard");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("Replicate=2,shard=4"), "unknown dim \"Replicate\"");  // case matters
  CHECK_REJECTS(dm::parse_mesh<hsdp>("=2,shard=4"), "has no dim name before '='");
}

TEST_CASE("a space or tab inside a name is a typo, whatever the mesh's names") {
  CHECK_REJECTS(dm::parse_mesh<hsdp>("repl icate=2,shard=4"),
                "devmesh: dim name \"repl icate\" in mesh spec has a space or tab in it (no dim name has one)");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=2, sh\tard =4"), "dim name \"sh\\x09ard\" in mesh spec has a space");
  // The parser itself, given a name with a space (parse_mesh<M> for such an M does not
  // compile: the compile-fail case parse_mesh_unwritable_name): still no match.
  const std::string_view names[] = {"a b", "c"};
  const int statics[] = {dm::dynamic_size, dm::dynamic_size};
  int out[2]{};
  CHECK_REJECTS(dm::detail::parse_sizes("a b=2,c=3", names, statics, -1, out), "dim name \"a b\" in mesh spec");
  // Blanks around names stay fine.
  CHECK(parsed<hsdp>(" replicate\t=2,\tshard =4") == "replicate=2,shard=4");
}

TEST_CASE("missing dim") {
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=2"), "devmesh: mesh spec lacks dim(s) 'shard'");
  CHECK_REJECTS(dm::parse_mesh<dyn3>("cp=2"), "lacks dim(s) 'dp', 'tp': every dim needs a size");
}

TEST_CASE("duplicate dim") {
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=2,shard=4,replicate=2"),
                "devmesh: dim 'replicate' is given twice in mesh spec");
}

TEST_CASE("zero and negative sizes") {
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=0,shard=4"), "devmesh: size 0 of dim 'replicate': a dim size must be positive");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=-2,shard=4"), "devmesh: size \"-2\" of dim 'replicate' is negative");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=-0,shard=4"), "size \"-0\" of dim 'replicate' is negative");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=-2147483649,shard=4"), "is negative");
}

TEST_CASE("overflow of int, per size and in the product") {
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=2147483648,shard=4"),
                "devmesh: size \"2147483648\" of dim 'replicate' does not fit in an int (max 2147483647)");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=99999999999999999999999999999999,shard=4"), "does not fit in an int");
  CHECK_REJECTS(dm::parse_mesh<dyn3>("dp=65536,cp=32768,tp=1"),
                "devmesh: the mesh has more ranks than an int can count: the sizes multiply to more than 2147483647");
  CHECK_REJECTS(dm::parse_mesh<dyn3>("dp=2147483647,cp=2147483647,tp=2147483647"), "more ranks than an int can count");
  CHECK_REJECTS(dm::parse_mesh<dyn3>("dp=*,cp=65536,tp=65536", 8), "more ranks than an int can count");
}

TEST_CASE("product differs from the world size") {
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=2,shard=4", 16),
                "devmesh: the mesh does not fit the world size: the mesh spec gives 8 ranks, the world size is 16");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=*,shard=4", 6),
                "world size 6 is not a multiple of the other dims' product 4, so dim 'replicate' cannot be inferred");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=2,shard=4", 0), "the world size is 0");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=2,shard=4", -8), "the world size is negative: -8");
}

TEST_CASE("static sizes must match") {
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=2,shard=8"),
                "devmesh: a size given for a static dim differs from its static size: dim 'shard' is 4, the mesh spec gives 8");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=2,shard=*", 16), "dim 'shard' is 4, inferred from the world size 16: 8");
  CHECK_REJECTS(dm::parse_mesh<static2>("dp=4,tp=2"), "dim 'dp' is 2, the mesh spec gives 4");
}

TEST_CASE("inferred sizes") {
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=*,shard=*", 8),
                "devmesh: dims 'replicate' and 'shard' both ask for an inferred size; at most one dim can be inferred");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=*,shard=4"), "dim 'replicate' asks for an inferred size, which needs the world size");
}

TEST_CASE("garbage") {
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=2x,shard=4"),
                "devmesh: size \"2x\" of dim 'replicate' is not a decimal number (digits only; '*', 'auto' or '-1' to infer it)");
  for (const char* bad : {"+2", "0x2", "2.0", "1e3", "2 2", "two", "--2", "-", "- 2", "2\n", "\xff", "**", "-1x"})
    CHECK_REJECTS(dm::parse_mesh<hsdp>(std::string("replicate=") + bad + ",shard=4"), "is not a decimal number");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=02,shard=4"), "size \"02\" of dim 'replicate' has a leading zero");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=,shard=4"), "devmesh: dim 'replicate' has no size after '='");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=2,shard=4,"), "devmesh: mesh spec entry 3 is empty (a stray ',')");
  CHECK_REJECTS(dm::parse_mesh<hsdp>(",replicate=2,shard=4"), "mesh spec entry 1 is empty");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=2,,shard=4"), "mesh spec entry 2 is empty");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=2;shard=4"), "size \"2;shard=4\" of dim 'replicate' is not a decimal number");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate 2,shard=4"), "devmesh: mesh spec entry \"replicate 2\" is not name=size");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=2=3,shard=4"), "size \"2=3\" of dim 'replicate' is not a decimal number");
  CHECK_REJECTS(dm::parse_mesh<hsdp>("replicate=2,shard=4\n"), "size \"4\\x0a\" of dim 'shard' is not a decimal number");
  CHECK_REJECTS(dm::parse_mesh<hsdp>(std::string_view("replicate=2\0,shard=4", 20)), "size \"2\\x00\"");
}

TEST_CASE("messages quote hostile input safely and briefly") {
  const std::string huge(100000, 'a');
  const std::string msg = error_of([&] { (void)dm::parse_mesh<hsdp>(huge + "=1,shard=4"); });
  CHECK(msg.size() < 600);
  CHECK(msg.find("unknown dim \"aaaa") != std::string::npos);
  CHECK(msg.find("... (100000 bytes)") != std::string::npos);  // the name
  CHECK(msg.find("... (100010 bytes)") != std::string::npos);  // the spec
  CHECK(msg.find("(in mesh spec \"aaaa") != std::string::npos);
  const std::string ctl = error_of([&] { (void)dm::parse_mesh<hsdp>("\x1b[31m=1"); });
  CHECK(ctl.find('\x1b') == std::string::npos);
  CHECK(ctl.find("unknown dim \"\\x1b[31m\"") != std::string::npos);
}

TEST_CASE("environment: DEVMESH_SHAPE") {
  ::unsetenv("DEVMESH_TEST_SHAPE");
  CHECK_REJECTS(dm::mesh_from_env<hsdp>("DEVMESH_TEST_SHAPE", 8), "devmesh: environment variable DEVMESH_TEST_SHAPE is not set");
  CHECK(dm::to_spec(dm::mesh_from_env<hsdp>("DEVMESH_TEST_SHAPE", 8, "replicate=*,shard=4")) == "replicate=2,shard=4");
  ::setenv("DEVMESH_TEST_SHAPE", "shard=4, replicate=4", 1);
  CHECK(dm::to_spec(dm::mesh_from_env<hsdp>("DEVMESH_TEST_SHAPE", 16)) == "replicate=4,shard=4");
  CHECK(dm::to_spec(dm::mesh_from_env<hsdp>("DEVMESH_TEST_SHAPE", 16, "replicate=1,shard=4")) == "replicate=4,shard=4");
  CHECK_REJECTS(dm::mesh_from_env<hsdp>("DEVMESH_TEST_SHAPE", 8), "[from environment variable DEVMESH_TEST_SHAPE]");
  ::setenv("DEVMESH_TEST_SHAPE", "", 1);
  CHECK_REJECTS(dm::mesh_from_env<hsdp>("DEVMESH_TEST_SHAPE", 8, "replicate=2,shard=4"), "devmesh: empty mesh spec");
  ::unsetenv("DEVMESH_TEST_SHAPE");
}

TEST_CASE("command line: --mesh X and --mesh=X") {
  {
    const char* argv[] = {"prog", "--verbose", "--mesh", "replicate=2,shard=4", "x"};
    CHECK(dm::to_spec(dm::mesh_from_args<hsdp>(5, argv, 8).value()) == "replicate=2,shard=4");
  }
  {
    const char* argv[] = {"prog", "--mesh=replicate=*,shard=4"};
    CHECK(dm::to_spec(dm::mesh_from_args<hsdp>(2, argv, 32).value()) == "replicate=8,shard=4");
  }
  {
    const char* argv[] = {"prog", "--meshy=1", "--", "--mesh=replicate=2,shard=4"};
    CHECK_FALSE(dm::mesh_from_args<hsdp>(4, argv, 8).has_value());  // after "--": not an option
  }
  {
    const char* argv[] = {"prog", "--shape", "dp=1,cp=2,tp=3"};
    CHECK(dm::to_spec(dm::mesh_from_args<dyn3>(3, argv, 6, "--shape").value()) == "dp=1,cp=2,tp=3");
  }
  {
    char a0[] = "prog", a1[] = "--mesh=replicate=2,shard=4";
    char* argv[] = {a0, a1, nullptr};  // main's char** converts
    CHECK(dm::find_mesh_arg(2, argv) == "replicate=2,shard=4");
  }
  {
    const char* argv[] = {"prog", "--mesh"};
    CHECK_REJECTS(dm::mesh_from_args<hsdp>(2, argv, 8), "devmesh: --mesh needs a value, e.g. --mesh name=size,...");
  }
  {
    const char* argv[] = {"prog", "--mesh", "--verbose"};
    CHECK_REJECTS(dm::mesh_from_args<hsdp>(3, argv, 8), "--mesh needs a value");
  }
  {
    const char* argv[] = {"prog", "--mesh=replicate=2,shard=4", "--mesh", "replicate=2,shard=4"};
    CHECK_REJECTS(dm::mesh_from_args<hsdp>(4, argv, 8), "devmesh: --mesh is given twice on the command line");
  }
  {
    const char* argv[] = {"prog", "--mesh="};
    CHECK_REJECTS(dm::mesh_from_args<hsdp>(2, argv, 8), "devmesh: empty mesh spec");
  }
  {
    const char* argv[] = {"prog", "--mesh", "replicate=3,shard=4"};
    CHECK_REJECTS(dm::mesh_from_args<hsdp>(3, argv, 8), "[from command-line option --mesh]");
  }
}

TEST_CASE("to_spec round-trips through parse_mesh") {
  for (int world : {1, 4, 8, 12, 4096}) {
    const auto h = hsdp::for_world(world * 4);
    CHECK(dm::to_spec(dm::parse_mesh<hsdp>(dm::to_spec(h), world * 4)) == dm::to_spec(h));
  }
}
