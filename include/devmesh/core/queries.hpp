// devmesh/core/queries.hpp: every named query and derivation as a free function too, for
// layouts and device meshes alike, so that generic code never writes `.template`:
//
//   template <class Mesh> int tp_size(const Mesh& m) {
//     return dm::size<"tp">(m);            // not m.template size<"tp">()
//   }
//
// Each calls the member of the same name (the one implementation), with the same checks:
// an unknown name is the same compile error naming the dim. Host and device, as the
// layout's members (a device mesh's are host only).
#pragma once
#include <initializer_list>
#include <string_view>
#include <utility>

#include "config.hpp"
#include "fixed_string.hpp"

namespace devmesh {

/// m.dim_index<N>(): the index of dim N (aliases after the mesh's own dims).
DEVMESH_FORWARDING
template <fixed_string N, class M>
DEVMESH_HOST_DEVICE constexpr auto dim_index(const M& m) -> decltype(m.template dim_index<N>()) {
  return m.template dim_index<N>();
}
/// m.size<N>(): the number of ranks along dim N.
DEVMESH_FORWARDING
template <fixed_string N, class M>
DEVMESH_HOST_DEVICE constexpr auto size(const M& m) -> decltype(m.template size<N>()) {
  return m.template size<N>();
}
/// m.local_rank<N>(position) for a layout, mesh.local_rank<N>() for a device mesh: the index
/// along dim N.
DEVMESH_FORWARDING
template <fixed_string N, class M, class... Position>
DEVMESH_HOST_DEVICE constexpr auto local_rank(const M& m, Position... p) -> decltype(m.template local_rank<N>(p...)) {
  return m.template local_rank<N>(p...);
}
/// m.group<Ns...>(position): the ranks of the group of dims Ns... that holds the position.
DEVMESH_FORWARDING
template <fixed_string... Ns, class M>
  requires(sizeof...(Ns) > 0)
DEVMESH_HOST_DEVICE constexpr auto group(const M& m, int position) -> decltype(m.template group<Ns...>(position)) {
  return m.template group<Ns...>(position);
}
/// m.comm_split<Ns...>(position): (color, key) for splitting a communicator into the groups
/// of dims Ns...
DEVMESH_FORWARDING
template <fixed_string... Ns, class M>
DEVMESH_HOST_DEVICE constexpr auto comm_split(const M& m, int position) -> decltype(m.template comm_split<Ns...>(position)) {
  return m.template comm_split<Ns...>(position);
}
/// m.slice<Ns...>(): the submesh of dims Ns...
DEVMESH_FORWARDING
template <fixed_string... Ns, class M>
DEVMESH_HOST_DEVICE constexpr auto slice(const M& m) -> decltype(m.template slice<Ns...>()) {
  return m.template slice<Ns...>();
}
/// m.slice(dims): the dims a range names at run time (a dynamic_slice for a layout).
template <class M, class Range>
constexpr auto slice(const M& m, const Range& dims) -> decltype(m.slice(dims)) {
  return m.slice(dims);
}
/// m.slice({"dp", "cp"}): the dims named at run time.
template <class M>
constexpr auto slice(const M& m, std::initializer_list<std::string_view> names) -> decltype(m.slice(names)) {
  return m.slice(names);
}
/// m.flatten<Alias, Ns...>(options...): m plus the alias Alias flattening Ns... (no Ns: the
/// whole mesh as one dim); a device mesh takes backend options too.
DEVMESH_FORWARDING
template <fixed_string Alias, fixed_string... Ns, class M, class... Options>
DEVMESH_HOST_DEVICE constexpr auto flatten(const M& m, const Options&... o) -> decltype(m.template flatten<Alias, Ns...>(o...)) {
  return m.template flatten<Alias, Ns...>(o...);
}
/// m.flatten(): the whole mesh as one dim with PyTorch's default name.
DEVMESH_FORWARDING
template <class M>
DEVMESH_HOST_DEVICE constexpr auto flatten(const M& m) -> decltype(m.flatten()) {
  return m.flatten();
}
/// m.unflatten<N, New...>(options...): dim N split into the dims New...
DEVMESH_FORWARDING
template <fixed_string N, class... New, class M, class... Options>
DEVMESH_HOST_DEVICE constexpr auto unflatten(const M& m, const Options&... o) -> decltype(m.template unflatten<N, New...>(o...)) {
  return m.template unflatten<N, New...>(o...);
}

}  // namespace devmesh
