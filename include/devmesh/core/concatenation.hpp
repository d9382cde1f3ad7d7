// devmesh/core/concatenation.hpp: the checks of concatenate (PyTorch's _concatenate): the
// meshes must be of one root, and no dim of one may share digits of the root's positions with
// a dim of the other. A compile error naming the two dims where both meshes are static, else
// a mesh_error (a trap in device code). And the free concatenate(a, b, ...).
#pragma once
#include "algebra.hpp"
#include "config.hpp"
#include "diagnostics.hpp"
#include "indexed_mesh.hpp"
#include "names.hpp"

namespace devmesh {

namespace detail {

/// concatenate's compile-time checks, where both meshes are static: one root size, and no
/// dim of one sharing digits with a dim of the other (the first such pair, by name).
template <auto L, class Names, auto L2, class N2>
constexpr bool check_concatenation() {
  if constexpr (L.is_static() && L2.is_static()) {
    using all_a = typename as_existing<Names>::as_dims;
    using all_b = typename as_existing<N2>::as_dims;
    if constexpr (L.root != L2.root) {
      require<false, error::concatenated_roots_differ<all_a, all_b>>();
      return false;
    } else {
      constexpr auto bad = first_shared_digits(L, L2);
      if constexpr (bad.first >= 0)
        require<false, error::concatenated_dims_overlap<name_of<Names, bad.first>, name_of<N2, bad.second>, all_b>>();
      return bad.first < 0;
    }
  } else {
    return true;
  }
}

// The run-time failures, built once here (not per mesh type). Not constexpr: in a constant
// expression a failing check is a compile error naming the function.
[[noreturn]] inline void throw_concatenated_roots_error(int a, int b) {
  throw_mesh_error(message() << DEVMESH_MSG_CONCAT_ROOTS ": " << a << " and " << b << " ranks");
}
[[noreturn]] inline void throw_concatenated_overlap_error(std::string_view a, std::string_view b) {
  throw_mesh_error(message() << DEVMESH_MSG_CONCAT_OVERLAP ": dims '" << a << "' and '" << b << "'");
}
template <class Names, class N2>
[[noreturn]] DEVMESH_HOST_DEVICE void fail_concatenation(int i, int j, int root_a, int root_b) {
#if DEVMESH_DEVICE_PASS
  (void)i, (void)j, (void)root_a, (void)root_b;
  __trap();
  __builtin_unreachable();
#else
  if (i < 0) throw_concatenated_roots_error(root_a, root_b);
  throw_concatenated_overlap_error(Names::views[i], N2::views[j]);
#endif
}

/// The inputs of concatenate's operation: a's dynamic values (na of them), then b's (nb).
template <int NA, int NB>
struct concatenated_values {
  int v[NA + NB + 1]{};
  DEVMESH_HOST_DEVICE constexpr concatenated_values(const int* a, const int* b) {
    for (int k = 0; k < NA; ++k) v[k] = a[k];
    for (int k = 0; k < NB; ++k) v[NA + k] = b[k];
  }
};

/// concatenate's run-time checks (values): one root size, no shared digits.
template <class Names, class N2, auto L, auto L2>
DEVMESH_HOST_DEVICE constexpr void check_concatenation_values(const indexed_mesh<L>& a, const indexed_mesh<L2>& b) {
  if (a.root_size() != b.root_size()) fail_concatenation<Names, N2>(-1, -1, a.root_size(), b.root_size());
  for (int i = 0; i < L.nprimary; ++i)
    for (int j = 0; j < L2.nprimary; ++j)
      for (int m = L.first[i]; m < L.first[i + 1]; ++m)
        for (int n = L2.first[j]; n < L2.first[j + 1]; ++n)
          if (modes_overlap(a.mode_shape(m), a.mode_stride(m), b.mode_shape(n), b.mode_stride(n)))
            fail_concatenation<Names, N2>(i, j, 0, 0);
}

}  // namespace detail

/// a's dims, then b's, then the rest's, as one mesh (PyTorch's DeviceMesh._concatenate), for
/// layouts and device meshes alike: concatenate(m["dp"_dim], m["tp"_dim]).
#if defined(__CUDACC__)
#pragma nv_exec_check_disable  // host-only for device meshes: their concatenate is host code
#endif
template <class A, class B, class... Rest>
DEVMESH_HOST_DEVICE constexpr auto concatenate(const A& a, const B& b, const Rest&... rest)
  requires requires { a.concatenate(b); }
{
  if constexpr (sizeof...(Rest) == 0)
    return a.concatenate(b);
  else
    return concatenate(a.concatenate(b), rest...);
}

}  // namespace devmesh
