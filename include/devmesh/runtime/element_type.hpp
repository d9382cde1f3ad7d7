// devmesh/runtime/element_type.hpp: a collective's element type as a value. The typed layer
// turns T into an element_type once, at compile time; everything below it (the runtime's
// collective bodies, the backends' calls, redistribute's executor) is written once over the
// value and compiled once per backend, not once per element type.
//
//   constexpr dm::element_type t = dm::element_type_of<float>;   // {float32, 4, "float"}
//
// A backend carries the codes its library has a datatype for (mpi: every code but the 16-bit
// floats; nccl: the widths NCCL has, bool and std::byte as bytes) and says so per type
// (Comm::carries<T>); a type it cannot carry is a compile error naming T and the backend.
#pragma once
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace devmesh {

/// What an element is, independent of its C++ spelling: long and long long are both int64
/// where they are 64 bits.
enum class element_code : std::uint8_t {
  int8, uint8, int16, uint16, int32, uint32, int64, uint64,  // integers, by width and sign
  float16, bfloat16, float32, float64, long_double,          // floating point
  complex64, complex128,                                     // std::complex<float>, <double>
  boolean,                                                   // bool: reduced logically
  byte,                                                      // std::byte: moved, never reduced
};

/// A collective's element type: its code, its size in bytes and its name as written in the
/// program ("float", "long", "std::complex<double>"), for messages and the flight record.
struct element_type {
  element_code code{};
  std::size_t size = 0;
  std::string_view name;
  /// True for the integer codes (op::avg on them is exact: the sum, then a division).
  constexpr bool is_integer() const { return code <= element_code::uint64; }
  /// True for signed integers.
  constexpr bool is_signed_integer() const { return is_integer() && (static_cast<int>(code) % 2 == 0); }
};

namespace detail {

/// T's name as the compiler spells it ("float", "std::complex<double>").
template <class T>
constexpr std::string_view type_name() {
#if defined(__clang__) || defined(__GNUC__)
  std::string_view f = __PRETTY_FUNCTION__;
  const auto b = f.find("T = ");
  if (b == std::string_view::npos) return "?";
  f.remove_prefix(b + 4);
  return f.substr(0, f.find_first_of(";]"));
#else
  return "?";
#endif
}

/// type_name<T>() computed once, at compile time.
template <class T>
inline constexpr std::string_view type_name_v = type_name<T>();

/// std::complex<F>, recognised by what it is rather than by name, so that no header needs
/// <complex> (with the <sstream> it pulls in): a class with value_type F, real() and imag()
/// returning F, constructible from (F, F), of standard layout and the size of two F: the
/// layout the standard gives std::complex ([complex.numbers]).
template <class T, class F>
concept complex_of = std::is_class_v<T> && requires(const T& z) {
  requires std::same_as<typename T::value_type, F>;
  { z.real() } -> std::same_as<F>;
  { z.imag() } -> std::same_as<F>;
} && std::is_constructible_v<T, F, F> && std::is_standard_layout_v<T> && sizeof(T) == 2 * sizeof(F);

/// The code of an integer of N bytes, signed or not.
template <std::size_t N, bool Signed>
constexpr element_code integer_code() {
  static_assert(N == 1 || N == 2 || N == 4 || N == 8, "devmesh: integers of 1, 2, 4 or 8 bytes");
  constexpr int base = N == 1 ? 0 : N == 2 ? 2 : N == 4 ? 4 : 6;
  return static_cast<element_code>(base + (Signed ? 0 : 1));
}

}  // namespace detail

/// The element code of T (cv-qualifiers dropped), for the types devmesh knows: specialize it
/// for a type of the same layout as a known one (a backend does for its 16-bit floats).
template <class T>
struct element_traits {
  static constexpr bool known = false;
};
template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
struct element_traits<T> {
  static constexpr bool known = true;
  static constexpr element_code code = detail::integer_code<sizeof(T), std::is_signed_v<T>>();
};
template <>
struct element_traits<bool> {
  static constexpr bool known = true;
  static constexpr element_code code = element_code::boolean;
};
template <>
struct element_traits<std::byte> {
  static constexpr bool known = true;
  static constexpr element_code code = element_code::byte;
};
template <>
struct element_traits<float> {
  static constexpr bool known = true;
  static constexpr element_code code = element_code::float32;
};
template <>
struct element_traits<double> {
  static constexpr bool known = true;
  static constexpr element_code code = element_code::float64;
};
template <>
struct element_traits<long double> {
  static constexpr bool known = true;
  static constexpr element_code code = element_code::long_double;
};
template <class T>
  requires detail::complex_of<T, float>
struct element_traits<T> {
  static constexpr bool known = true;
  static constexpr element_code code = element_code::complex64;
};
template <class T>
  requires detail::complex_of<T, double>
struct element_traits<T> {
  static constexpr bool known = true;
  static constexpr element_code code = element_code::complex128;
};

/// True when devmesh knows T's element code.
template <class T>
inline constexpr bool known_element = element_traits<std::remove_cv_t<T>>::known;

/// T as a value (a known element type only).
template <class T>
  requires known_element<T>
inline constexpr element_type element_type_of = {element_traits<std::remove_cv_t<T>>::code, sizeof(T),
                                                 detail::type_name_v<std::remove_cv_t<T>>};

/// An element type's code as text ("float32"), for messages.
constexpr std::string_view code_name(element_code c) {
  constexpr std::string_view names[] = {"int8",    "uint8",   "int16",   "uint16",      "int32",     "uint32",
                                        "int64",   "uint64",  "float16", "bfloat16",    "float32",   "float64",
                                        "long_double", "complex64", "complex128", "bool", "byte"};
  const auto i = static_cast<std::size_t>(c);
  return i < sizeof names / sizeof names[0] ? names[i] : "?";
}

}  // namespace devmesh
