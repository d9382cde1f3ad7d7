// devmesh/core/derivation.hpp: how a mesh is derived from another (a root from its sizes,
// slice, flatten, unflatten, concatenate). Each operation is a type whose draft() calls the
// algebra (algebra.hpp) on the input's layout; detail::derivation<Op> computes it once. The
// derived mesh's type is basic_mesh<its exact layout, its names>, and its run-time values
// are straight-line code unrolled from the draft's recipes (evaluate).
//
// The operations take dims by index, not by name: meshes with one layout and different
// names share their derivations. A mesh names them through member types of indexed_mesh<L>
// (indexed_mesh.hpp says why).
#pragma once
#include <cstddef>
#include <utility>

#include "algebra.hpp"
#include "config.hpp"
#include "names.hpp"

namespace devmesh {
template <auto L, class Names>
class basic_mesh;
}
namespace devmesh::detail {
/// The run-time values of a mesh with N dynamic values (none: an empty base).
template <int N>
struct mesh_values {
  int v[N]{};
};
template <>
struct mesh_values<0> {};

// ---- the operations, as types ----------------------------------------------------------------
/// Dims Sel... of L (disjoint), in that order (aliases whose modes they cover stay).
template <auto L, int... Sel>
struct slice_op {
  static constexpr auto draft() {
    constexpr int sel[] = {Sel...};
    return slice<L.ndynamic>(L, sel);
  }
};
/// L plus an alias made of the modes of dims Sel..., in order.
template <auto L, int... Sel>
struct flatten_op {
  static constexpr auto draft() {
    constexpr int sel[] = {Sel...};
    return flatten_alias<L.ndynamic>(L, sel);
  }
};
/// L's dims as one dim; the former dims stay as aliases.
template <auto L>
struct flatten_all_op {
  static constexpr auto draft() { return flatten_all<L.ndynamic>(L); }
};
/// L's dims, then L2's (a mesh of the same root), as one mesh.
template <auto L, auto L2>
struct concat_op {
  static constexpr auto draft() { return concatenate<L.ndynamic + L2.ndynamic>(L, L2); }
};
/// Dim D of L cut into dims of sizes Sizes... (one may be dynamic_size: inferred).
template <auto L, int D, int... Sizes>
struct unflatten_op {
  static constexpr int sizes[] = {Sizes...};
  static constexpr auto cut = unflatten<L.ndynamic>(L, D, sizes);
  static constexpr auto draft() { return cut.value; }
};
/// Dim D of L cut into K dims whose pieces are values given at run time (algebra.hpp,
/// unflatten_values): an unflatten with run-time sizes, or whose cut depends on run-time values.
template <auto L, int D, int K>
struct unflatten_values_op {
  static constexpr auto draft() { return unflatten_values<L.ndynamic, K>(L, D); }
};

// ---- the derived mesh's values ----------------------------------------------------------------
template <class Op, int K>
DEVMESH_HOST_DEVICE constexpr int evaluate_slot(const int* slot, const int* inputs) {
  constexpr int op = derivation<Op>::draft.op[K];
  if constexpr (op == input) {
    return inputs[K];
  } else {
    constexpr int a = derivation<Op>::draft.arg_a[K], b = derivation<Op>::draft.arg_b[K];
    const int x = a > 0 ? a : slot[-1 - a];  // a recipe's arguments are static or earlier slots
    const int y = b > 0 ? b : slot[-1 - b];
    return op == times ? x * y : x / y;
  }
}
template <class Op, int... K>
DEVMESH_HOST_DEVICE constexpr void evaluate_slots(int* slot, const int* inputs, std::integer_sequence<int, K...>) {
  ((slot[K] = evaluate_slot<Op, K>(slot, inputs)), ...);
}
/// The run-time values of the mesh an operation's draft describes: draft slot k is
/// inputs[k] (the inputs come first) or the product or quotient of two earlier slots;
/// exact.from picks the slots. Unrolled at compile time: straight-line code.
template <class Op>
DEVMESH_HOST_DEVICE constexpr auto evaluate(const int* inputs) {
  constexpr auto e = derivation<Op>::exact;  // local copies: device code cannot read the statics
  constexpr int slots = derivation<Op>::draft.slots;
  mesh_values<e.value.ndynamic> out{};
  if constexpr (e.value.ndynamic > 0 && derivation<Op>::copies_only) {
    for (int j = 0; j < e.value.ndynamic; ++j) out.v[j] = inputs[e.from[j]];
  } else if constexpr (e.value.ndynamic > 0) {
    int slot[slots > 0 ? slots : 1]{};
    evaluate_slots<Op>(slot, inputs, std::make_integer_sequence<int, slots>{});
    for (int j = 0; j < e.value.ndynamic; ++j) out.v[j] = slot[e.from[j]];
  }
  return out;
}

// ---- the derived mesh's type ------------------------------------------------------------------
/// The names of a derived mesh: dim j keeps its parent's name (source >= 0) or takes the
/// k-th new name (source == -(k+1)), i.e. entry nold + k of the parent's names followed by
/// the new ones: one indexed list, one lookup per dim.
template <class Op, class OldNames, class NewNames, class Seq>
struct derive_names;
template <class Op, class... Old, class... New, std::size_t... J>
struct derive_names<Op, names<Old...>, names<New...>, std::index_sequence<J...>> {
  static constexpr int entry(int s) { return s >= 0 ? s : static_cast<int>(sizeof...(Old)) - 1 - s; }
  using all = name_list<std::index_sequence_for<Old..., New...>, Old..., New...>;
  using type = names<typename decltype(pick<entry(derivation<Op>::exact.source[J])>(all{}))::type...>;
};

/// The mesh type an operation's result describes, with the names of its new dims.
template <class Op, class OldNames, class NewNames>
struct derived_mesh {
  static constexpr auto layout = derivation<Op>::exact.value;
  using names_type = typename derive_names<Op, OldNames, NewNames, std::make_index_sequence<layout.ndims>>::type;
  using type = basic_mesh<layout, names_type>;
};

}  // namespace devmesh::detail
