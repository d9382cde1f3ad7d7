// libFuzzer target for devmesh/sharding/text.hpp. Input: the bytes are a sharding spec, parsed
// on a (2, 4) mesh and on its flattened form (an alias to name). parse_sharding must either
// throw mesh_error with a short, printable "devmesh:" message, or return a spec that prints
// back to text which parses to the same text, and whose queries on a 5 x 7 tensor answer
// (every rank's block inside the tensor) or throw mesh_error (a tensor dim past 2). Any other
// exception, crash, leak or UB is a finding.
#include <devmesh/sharding.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace dm = devmesh;

namespace {

using mesh2d = dm::mesh<dm::dim<"dp", 2>, dm::dim<"tp", 4>>;

[[noreturn]] void finding(const char* what, std::string_view spec) {
  std::fprintf(stderr, "devmesh fuzz_sharding: %s for spec %s\n", what, dm::detail::quoted_spec(spec).c_str());
  std::abort();
}

void check_message(const dm::mesh_error& e, std::string_view spec) {
  const std::string_view m = e.what();
  if (!m.starts_with("devmesh: ") || m.size() > 2000) finding("a message that is not a short devmesh: message", spec);
  for (char c : m)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      finding("an unprintable byte in the message", spec);
}

template <class Mesh>
void one(const Mesh& mesh, std::string_view spec) {
  try {
    const auto s = dm::parse_sharding(spec, mesh);
    const std::string text = dm::to_string(s);
    if (dm::to_string(dm::parse_sharding(text, mesh)) != text) finding("to_string does not read back", spec);
    const dm::dextents<2> ext(5, 7);
    try {
      for (int r = 0; r < mesh.size(); ++r) {
        const auto shape = s.local_shape(ext, r);
        const auto offset = s.global_offset(ext, r);
        for (int t = 0; t < 2; ++t)
          if (shape[t] < 0 || offset[t] < 0 || offset[t] + shape[t] > ext.extent(t)) finding("a block outside the tensor", spec);
      }
    } catch (const dm::mesh_error& e) {
      check_message(e, spec);
    }
  } catch (const dm::mesh_error& e) {
    check_message(e, spec);
  } catch (...) {
    finding("an exception other than mesh_error", spec);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view spec(reinterpret_cast<const char*>(data), size);
  one(mesh2d{}, spec);
  one(mesh2d{}.flatten<"dp_tp", "dp", "tp">(), spec);
  return 0;
}
