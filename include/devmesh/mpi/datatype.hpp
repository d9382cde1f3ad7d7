// devmesh/mpi/datatype.hpp: element types on MPI. Which types the backend carries is decided
// at compile time (an unsupported type is a static_assert:
// error::unsupported_element_type<T, mpi::communicator>); the MPI_Datatype of an element type
// is looked up at run time, once per call, by the one function every collective shares (the
// predefined handles are link-time constants in Open MPI, addresses, not constant expressions).
#pragma once
#include <type_traits>

#include "native.hpp"

#include "../core/config.hpp"
#include "../core/diagnostics.hpp"
#include "../runtime/element_type.hpp"

namespace devmesh::mpi {

class communicator;

/// True if MPI has a datatype for T (cv-qualifiers ignored): every element code devmesh knows
/// but the 16-bit floats.
template <class T>
inline constexpr bool has_datatype = [] {
  if constexpr (known_element<T>) {
    constexpr element_code c = element_type_of<T>.code;
    return c != element_code::float16 && c != element_code::bfloat16;
  } else {
    return false;
  }
}();

namespace detail {
/// The MPI datatype of elements of type t (mpi/impl/datatype.ipp); comm_error for a code MPI
/// has none for.
DEVMESH_DECL MPI_Datatype datatype_of(element_type t);
}  // namespace detail

/// T as an element type; a static_assert naming T if MPI has no datatype for it.
template <class T>
constexpr element_type element_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (has_datatype<U>) {
    return element_type_of<U>;
  } else {
    devmesh::detail::require<false, devmesh::error::unsupported_element_type<U, communicator>>();
    return {};
  }
}

/// The MPI datatype of T; a static_assert naming T if there is none.
template <class T>
MPI_Datatype datatype() {
  return detail::datatype_of(element_of<T>());
}

}  // namespace devmesh::mpi

#if DEVMESH_INLINE_DEFINITIONS
#include "impl/datatype.ipp"
#endif
