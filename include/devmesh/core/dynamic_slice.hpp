// devmesh/core/dynamic_slice.hpp: a slice whose dims are chosen at run time, by name or index
// (config-driven code, TorchTitan's get_activated_mesh): m.slice({"dp", "cp"}).
//
// A mesh type cannot change with a run-time value, so a dynamic slice is the mesh it slices
// plus the dims it chose, in that order: its queries answer as m.slice<"dp", "cp">() would
// (the submesh holding a position, row-major in the order chosen; sizes, coordinates, local
// ranks, comm_split), and it slices again by names. A name that is not a dim of the mesh, a
// dim named twice, or an alias named with one of its own dims throws mesh_error with the
// text the compile-time diagnostic has, naming the dim and the dims that exist.
#pragma once
#include <array>
#include <initializer_list>
#include <string_view>
#include <type_traits>

#include "diagnostics.hpp"
#include "group.hpp"
#include "group_list.hpp"
#include "layout.hpp"

namespace devmesh {

namespace detail {
/// A dim as a run-time value gives it: a name, or an index (dims [0, ndim) then aliases).
struct chosen_dim {
  std::string_view name{};
  int index = -1;
  bool by_name = true;
};
/// Any value that names a dim at run time: a string (string_view, const char*, std::string),
/// an integer index, or a dim reference with by_name(), name() and index() (the runtime's dm::dim_ref).
template <class T>
constexpr chosen_dim choose(const T& d) {
  if constexpr (std::is_integral_v<T>) {
    return {{}, static_cast<int>(d), false};
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    return {std::string_view(d), -1, true};
  } else {
    return {d.name(), d.index(), d.by_name()};
  }
}

}  // namespace detail

/// The submesh of Mesh's dims chosen at run time (basic_mesh::slice(names)): the mesh and the
/// chosen dims' indices, in the order given. Every query answers as the compile-time slice of
/// the same dims would.
template <class Mesh>
class dynamic_slice {
  static constexpr int room = Mesh::ndim_with_aliases;
  static constexpr int modes = Mesh::layout.nmodes;
  Mesh m_;
  std::array<int, room> dims_{};  // the chosen dims, as Mesh's indices; [0, ndim_) used
  int ndim_ = 0;

 public:
  /// The dims `chosen` of m (each a name or an index of m: its dims, then its aliases), in
  /// that order. Throws mesh_error on none, an unknown name or index, a repeat, or an alias
  /// named with one of its own dims.
  template <class Range>
  dynamic_slice(const Mesh& m, const Range& chosen) : m_(m) {
    choose(chosen, nullptr);
  }

  /// The mesh this slice was cut from.
  const Mesh& mesh() const { return m_; }
  /// Number of dims chosen.
  int ndim() const { return ndim_; }
  /// The index in mesh() of dim i of the slice.
  int dim_index(int i) const { return dims_[checked(i)]; }
  /// The name of dim i of the slice.
  std::string_view name(int i) const { return Mesh::name(dims_[checked(i)]); }
  /// The size of dim i of the slice.
  int size(int i) const { return m_.dim_size(dims_[checked(i)]); }
  /// The number of positions of the slice (the product of its dims' sizes).
  int size() const {
    int n = 1;
    for (int i = 0; i < ndim_; ++i) n *= size(i);
    return n;
  }
  /// The index in the slice of its dim named `name`; mesh_error if it has none.
  int index_of(std::string_view name) const {
    for (int i = 0; i < ndim_; ++i)
      if (Mesh::name(dims_[i]) == name) return i;
    fail_unknown(name, this);
  }
  /// The slice's dims as one layout (their modes concatenated in the order chosen): its groups'
  /// function, and (coalesced) the key of a communicator over them.
  dim_layout<modes> layout() const {
    dim_layout<modes> out{};
    for (int i = 0; i < ndim_; ++i) {
      const auto l = m_.dim_layout(dims_[i]);
      for (int k = 0; k < l.count; ++k) out.shape[out.count] = l.shape[k], out.stride[out.count++] = l.stride[k];
    }
    return out;
  }
  /// The positions of the submesh that holds `position`, row-major in the order chosen (as
  /// m.slice<...>().group(position)).
  rank_group<modes> group(int position) const {
    (void)m_.group(position);  // devmesh: rank out of range
    const auto l = layout();
    int base = position;
    for (int k = 0; k < l.count; ++k) base -= (position / l.stride[k]) % l.shape[k] * l.stride[k];
    return rank_group<modes>(base, l);
  }
  /// Every submesh of the slice over the root's positions (as all_groups of its dims, in order).
  group_list<modes, modes + 1> all_groups() const {
    const auto l = layout();
    return {l, 0, detail::complement<modes + 1>(l, m_.root_size())};
  }
  /// (color, key) of `position` for a split into the slice's submeshes.
  split_args comm_split(int position) const {
    const auto g = group(position);
    return {g.front(), g.index_of(position)};
  }
  /// The coordinate of `position` along dim i of the slice.
  int local_rank(int i, int position) const {
    (void)m_.group(position);  // devmesh: rank out of range
    return m_.coordinate_unchecked(position, dims_[checked(i)]);
  }
  /// The coordinate of `position` along the slice's dim named `name`.
  int local_rank(std::string_view name, int position) const { return local_rank(index_of(name), position); }

  /// The dims `chosen` of this slice (names or indices of its own dims, or names of mesh()'s
  /// dims that its dims cover, as a compile-time slice keeps them), in that order.
  template <class Range>
  dynamic_slice slice(const Range& chosen) const {
    dynamic_slice out(m_);
    out.choose(chosen, this);
    return out;
  }
  /// The dims named `names` of this slice.
  dynamic_slice slice(std::initializer_list<std::string_view> names) const { return slice<decltype(names)>(names); }

 private:
  explicit dynamic_slice(const Mesh& m) : m_(m) {}

  /// Chooses the dims of `chosen`, looked up in m (within null) or in slice `within`.
  template <class Range>
  void choose(const Range& chosen, const dynamic_slice* within) {
    for (const auto& c : chosen) {
      const int d = resolve(detail::choose(c), within);
      for (int i = 0; i < ndim_; ++i)
        if (dims_[i] == d) fail_repeat(d);
      dims_[ndim_++] = d;  // (fewer than room: a dim chosen twice has been refused)
    }
    check_chosen(within);
  }
  int checked(int i) const {
    if (i < 0 || i >= ndim_) {
      detail::message m;
      m << "devmesh: dim index " << i << " is not in [0, " << ndim_ << ") (dims of the slice:";
      for (int k = 0; k < ndim_; ++k) m << (k ? ", " : " ") << Mesh::name(dims_[k]);
      detail::throw_mesh_error(m << ")");
    }
    return i;
  }
  /// True if every mode of mesh dim e is a mode of a dim of this slice.
  bool covers(int e) const {
    for (int m = Mesh::layout.first[e]; m < Mesh::layout.first[e + 1]; ++m) {
      bool found = false;
      for (int i = 0; i < ndim_; ++i) found = found || Mesh::layout.dim_has(dims_[i], m);
      if (!found && Mesh::layout.shape[m] != 1) return false;
    }
    return true;
  }
  int resolve(const detail::chosen_dim& d, const dynamic_slice* within) const {
    if (!d.by_name) {
      if (within) return within->dims_[within->checked(d.index)];
      if (d.index < 0 || d.index >= Mesh::ndim_with_aliases) (void)m_.dim_size(d.index);  // devmesh: dim index out of range
      return d.index;
    }
    for (int e = 0; e < Mesh::ndim_with_aliases; ++e)
      if (Mesh::name(e) == d.name && (!within || within->covers(e))) return e;
    fail_unknown(d.name, within);
  }
  void check_chosen(const dynamic_slice* within) const {
    if (ndim_ == 0) {
      detail::message m;
      m << DEVMESH_MSG_EMPTY_SLICE ": the dims are ";
      list_dims(m, within);
      detail::throw_mesh_error(m);
    }
    for (int i = 0; i < ndim_; ++i)
      for (int j = 0; j < i; ++j)
        if (Mesh::layout.overlap(dims_[j], dims_[i])) {
          detail::message m;
          m << DEVMESH_MSG_SLICE_OVERLAP ": '" << Mesh::name(dims_[j]) << "' and '" << Mesh::name(dims_[i])
            << "' share ranks";
          detail::throw_mesh_error(m);
        }
  }
  /// The dims one can choose: mesh()'s (within null), or slice within's and the dims it covers.
  void list_dims(detail::message& m, const dynamic_slice* within) const {
    if (!within) {
      for (int d = 0; d < Mesh::ndim_with_aliases; ++d)
        m << (d == 0 ? "" : d == Mesh::ndim ? " (aliases: " : ", ") << Mesh::name(d);
      if (Mesh::ndim_with_aliases > Mesh::ndim) m << ")";
      return;
    }
    for (int i = 0; i < within->ndim_; ++i) m << (i ? ", " : "") << Mesh::name(within->dims_[i]);
    bool any = false;
    for (int e = 0; e < Mesh::ndim_with_aliases; ++e) {
      bool chosen = false;
      for (int i = 0; i < within->ndim_; ++i) chosen = chosen || within->dims_[i] == e;
      if (chosen || !within->covers(e)) continue;
      m << (any ? ", " : " (aliases: ") << Mesh::name(e);
      any = true;
    }
    if (any) m << ")";
  }
  [[noreturn]] void fail_unknown(std::string_view name, const dynamic_slice* within) const {
    if (!within) detail::throw_unknown_dim(name, Mesh::names_type::views, Mesh::ndim, Mesh::ndim_with_aliases);
    detail::message m;
    m << DEVMESH_MSG_UNKNOWN_DIM ": '" << name << "': the dims are ";
    list_dims(m, within);
    detail::throw_mesh_error(m);
  }
  [[noreturn]] static void fail_repeat(int d) {
    detail::message m;
    m << DEVMESH_MSG_REPEATED_IN_SLICE ": '" << Mesh::name(d) << "'";
    detail::throw_mesh_error(m);
  }
};

/// s.all_groups(): every submesh of a dynamic slice over the root's positions.
template <class Mesh>
auto all_groups(const dynamic_slice<Mesh>& s) {
  return s.all_groups();
}

}  // namespace devmesh
