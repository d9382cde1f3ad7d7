// tests/sharding/messages.hpp: what a call throws, as text, for the run-time checks' tests.
#pragma once
#include <devmesh/core/diagnostics.hpp>

#include <string>

namespace sharding_test {

/// The what() of the mesh_error f() throws, or "(no mesh_error)".
inline std::string message_of(auto&& f) {
  try {
    f();
  } catch (const devmesh::mesh_error& e) {
    return e.what();
  }
  return "(no mesh_error)";
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace sharding_test
