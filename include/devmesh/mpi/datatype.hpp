// devmesh/mpi/datatype.hpp: element type -> MPI_Datatype, resolved at compile time.
// An unsupported type is a static_assert: error::unsupported_element_type<T, mpi::communicator>.
#pragma once
#include <concepts>
#include <cstddef>
#include <type_traits>

#include "native.hpp"

#include "../core/diagnostics.hpp"

namespace devmesh::mpi {

class communicator;

namespace detail {
/// std::complex<F>, recognised by what it is rather than by name, so that this header needs
/// no <complex> (with the <sstream> it pulls in, +0.8 G instructions of g++ in every TU): a
/// class with value_type F, real() and imag() returning F, constructible from (F, F), of
/// standard layout and the size of two F: the layout the standard gives std::complex
/// ([complex.numbers]), so MPI's complex datatypes describe it exactly.
template <class T, class F>
concept complex_of = std::is_class_v<T> && requires(const T& z) {
  requires std::same_as<typename T::value_type, F>;
  { z.real() } -> std::same_as<F>;
  { z.imag() } -> std::same_as<F>;
} && std::is_constructible_v<T, F, F> && std::is_standard_layout_v<T> && sizeof(T) == 2 * sizeof(F);

// The predefined MPI_Datatype handles are link-time constants in OpenMPI (addresses), not
// constant expressions: the *choice* is made at compile time, the handle read at run time.
template <class T>
struct datatype_of {
  static constexpr bool supported = false;
};
#define DEVMESH_MPI_DATATYPE(T, D)                   \
  template <>                                        \
  struct datatype_of<T> {                            \
    static constexpr bool supported = true;          \
    static MPI_Datatype get() noexcept { return D; } \
  }
// char's signedness is the platform's; MPI_CHAR is not valid in reductions, the explicit
// (un)signed char types are.
DEVMESH_MPI_DATATYPE(char, (std::is_signed_v<char> ? MPI_SIGNED_CHAR : MPI_UNSIGNED_CHAR));
DEVMESH_MPI_DATATYPE(signed char, MPI_SIGNED_CHAR);      // std::int8_t
DEVMESH_MPI_DATATYPE(unsigned char, MPI_UNSIGNED_CHAR);  // std::uint8_t
DEVMESH_MPI_DATATYPE(short, MPI_SHORT);
DEVMESH_MPI_DATATYPE(unsigned short, MPI_UNSIGNED_SHORT);
DEVMESH_MPI_DATATYPE(int, MPI_INT);
DEVMESH_MPI_DATATYPE(unsigned, MPI_UNSIGNED);
DEVMESH_MPI_DATATYPE(long, MPI_LONG);
DEVMESH_MPI_DATATYPE(unsigned long, MPI_UNSIGNED_LONG);
DEVMESH_MPI_DATATYPE(long long, MPI_LONG_LONG);
DEVMESH_MPI_DATATYPE(unsigned long long, MPI_UNSIGNED_LONG_LONG);
DEVMESH_MPI_DATATYPE(float, MPI_FLOAT);
DEVMESH_MPI_DATATYPE(double, MPI_DOUBLE);
DEVMESH_MPI_DATATYPE(long double, MPI_LONG_DOUBLE);
DEVMESH_MPI_DATATYPE(bool, MPI_CXX_BOOL);
DEVMESH_MPI_DATATYPE(wchar_t, MPI_WCHAR);
DEVMESH_MPI_DATATYPE(std::byte, MPI_BYTE);  // moves only: reductions on bytes are MPI errors
#undef DEVMESH_MPI_DATATYPE
template <class T>
  requires complex_of<T, float>
struct datatype_of<T> {  // std::complex<float>
  static constexpr bool supported = true;
  static MPI_Datatype get() noexcept { return MPI_CXX_FLOAT_COMPLEX; }
};
template <class T>
  requires complex_of<T, double>
struct datatype_of<T> {  // std::complex<double>
  static constexpr bool supported = true;
  static MPI_Datatype get() noexcept { return MPI_CXX_DOUBLE_COMPLEX; }
};
}  // namespace detail

/// True if T has an MPI datatype (cv-qualifiers ignored).
template <class T>
inline constexpr bool has_datatype = detail::datatype_of<std::remove_cv_t<T>>::supported;

/// The MPI datatype of T; a static_assert naming T if there is none.
template <class T>
MPI_Datatype datatype() {
  using U = std::remove_cv_t<T>;
  if constexpr (detail::datatype_of<U>::supported) {
    return detail::datatype_of<U>::get();
  } else {
    devmesh::detail::require<false, devmesh::error::unsupported_element_type<U, communicator>>();
    return MPI_DATATYPE_NULL;
  }
}

}  // namespace devmesh::mpi
