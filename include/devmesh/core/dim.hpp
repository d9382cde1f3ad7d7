// devmesh/core/dim.hpp: dim<"name", size>, the building block of a mesh type.
#pragma once
#include <type_traits>

#include "config.hpp"
#include "diagnostics.hpp"
#include "fixed_string.hpp"

namespace devmesh {

namespace detail {
template <auto Name, int Size>
constexpr bool check_dim() {
  require<(Name.size() > 0), error::empty_dim_name<size_value<Size>>>();
  require<(Size > 0 || Size == dynamic_size), error::non_positive_size<name_t<Name>, size_value<Size>>>();
  return true;
}
}  // namespace detail

/// One named mesh dimension. Size is static (> 0) or dynamic_size (set at run time).
template <fixed_string Name, int Size = dynamic_size>
struct dim {
  static_assert(detail::check_dim<Name, Size>());
  static constexpr auto name = Name;
  static constexpr int size = Size;
  static constexpr bool is_dynamic = Size == dynamic_size;
  using name_type = name_t<Name>;
  using devmesh_dim_tag = void;
};

/// A type is a dim spec if it is dim<name, size>. (A member tag, not a match on
/// dim<N, S>: nvcc 13 fails to match class-type NTTPs in partial specializations.)
template <class T>
concept dim_spec = requires { typename T::devmesh_dim_tag; };

}  // namespace devmesh
