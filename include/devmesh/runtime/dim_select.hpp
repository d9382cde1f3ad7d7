// devmesh/runtime/dim_select.hpp: which dim a device mesh call is on, resolved in one place.
//
//   mesh.comm<"tp">()      a name checked at compile time (an unknown one does not compile)
//   mesh.comm()            no name: the only dim of a 1-D mesh (on more dims, a devmesh:
//                          compile error that lists them)
//   mesh.comm("tp"), mesh.comm(2)   a name or an index known at run time (dim_ref)
//
// An index is the one dim_index returns, the same in the core and the runtime: the mesh's
// own dims [0, ndim), then its aliases (flattened dims).
#pragma once
#include <string>
#include <string_view>

#include "../core/diagnostics.hpp"
#include "../core/fixed_string.hpp"
#include "../core/names.hpp"

namespace devmesh {

namespace error {
/// A call without a dim name (comm(), all_reduce(buf, op), ...) on a mesh of more than one
/// dim: which dim is meant cannot be known.
template <class Existing>
struct dim_name_needed {
  static constexpr void fire() {
    static_assert(always_false<Existing>,
                  "devmesh: this call names no dim, and the mesh has more than one: name one, e.g. "
                  "all_reduce<\"tp\">(buf, op) or comm<\"tp\">() (the dims are the arguments of "
                  "error::dim_name_needed<existing_dims<...>>)");
  }
};
}  // namespace error

/// A dim chosen at run time (PyTorch's string and int lookups, config-driven code): by name,
/// or by index as dim_index returns it. Compile-time names stay the primary API: misspelling
/// one is a compile error; an unknown run-time name or index throws mesh_error listing the dims.
class dim_ref {
  std::string_view name_{};
  int index_ = -1;

 public:
  /// By index: the mesh's own dims [0, ndim), then its aliases.
  constexpr dim_ref(int index) : index_(index) {}  // NOLINT: implicit by design
  /// By name (aliases too).
  constexpr dim_ref(std::string_view name) : name_(name) {}  // NOLINT: implicit by design
  /// By name, from a string literal.
  constexpr dim_ref(const char* name) : name_(name ? name : "") {}  // NOLINT: implicit by design
  /// By name, from a std::string.
  dim_ref(const std::string& name) : name_(name) {}  // NOLINT: implicit by design
  /// True when the dim is named.
  constexpr bool by_name() const { return index_ < 0 && name_.data() != nullptr; }
  /// The name (by_name()).
  constexpr std::string_view name() const { return name_; }
  /// The index (!by_name()).
  constexpr int index() const { return index_; }
};

namespace detail {

/// The index of the dim a call names at compile time: N, or with no name the only dim.
template <class Layout, fixed_string N>
constexpr int select_dim() {
  if constexpr (N.size() == 0) {
    require<Layout::ndim == 1, error::dim_name_needed<typename as_existing<typename Layout::names_type>::type>>();
    return 0;
  } else {
    return Layout::template dim_index<N>();
  }
}

/// "dp, cp, tp (aliases: dp_cp)"
template <class Layout>
std::string dim_list() {
  std::string out;
  for (int d = 0; d < Layout::ndim_with_aliases; ++d) {
    if (d == Layout::ndim) out += " (aliases: ";
    else if (d) out += ", ";
    out += Layout::name(d);
  }
  return Layout::ndim_with_aliases > Layout::ndim ? out + ")" : out;
}

/// The index of the dim `d` names in Layout; `what` (the call) and `mesh` (its text) for the
/// mesh_error an unknown name or an index out of range throws.
template <class Layout>
int select_dim(const dim_ref& d, const char* what, const std::string& mesh) {
  if (d.by_name()) {
    for (int i = 0; i < Layout::ndim_with_aliases; ++i)
      if (Layout::name(i) == d.name()) return i;
    throw mesh_error("devmesh: " + std::string(what) + "(\"" + std::string(d.name()) + "\"): unknown dim '" +
                     std::string(d.name()) + "': the dims of " + mesh + " are " + dim_list<Layout>());
  }
  if (d.index() >= 0 && d.index() < Layout::ndim_with_aliases) return d.index();
  throw mesh_error("devmesh: " + std::string(what) + "(" + std::to_string(d.index()) + "): dim index not in [0, " +
                   std::to_string(Layout::ndim_with_aliases) + ") (dims: " + dim_list<Layout>() + ")");
}

}  // namespace detail
}  // namespace devmesh
