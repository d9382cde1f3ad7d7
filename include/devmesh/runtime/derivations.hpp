// devmesh/runtime/derivations.hpp: deriving meshes from a device mesh (PyTorch's slicing,
// _flatten, _unflatten, _concatenate): a base of device_mesh, as collectives_of is. Each
// derived mesh shares its root's state; slices and concatenations create nothing, flatten and
// unflatten create the missing communicators (collective; recorded in the flight record).
#pragma once
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "../core/diagnostics.hpp"
#include "../core/dim.hpp"
#include "../core/fixed_string.hpp"
#include "../core/print.hpp"
#include "backend.hpp"
#include "dim_select.hpp"
#include "mesh_runtime.hpp"
#include "root_state.hpp"

namespace devmesh {

template <class Layout, communicator Comm>
class device_mesh;

namespace detail {
template <class Layout, communicator Comm>
device_mesh<Layout, Comm> make_device_mesh(const Layout& l, std::shared_ptr<root_state<Comm>> s);
}  // namespace detail

/// The derivations of Mesh (a device_mesh, which derives from this): slice, operator[],
/// flatten, unflatten, concatenate; and subgroup, communicators over chosen members of a dim's
/// groups.
template <class Mesh, class Layout, communicator Comm>
class derivations_of {
 public:
  /// `mesh.slice<"dp", "tp">()`: the submesh of dims Ns... (any order, aliases too). Never
  /// creates a communicator.
  template <fixed_string... Ns>
  auto slice() const {
    return derive(self().layout_.template slice<Ns...>(), "slice");
  }
  /// `mesh["tp"_dim]`: one dim as a 1-D device mesh. Never creates a communicator.
  template <class Tag>
    requires requires { typename Tag::devmesh_dim_name_tag; }
  auto operator[](Tag) const {
    return this->template slice<Tag::value>();
  }
  /// `mesh.flatten<"dp_cp", "dp", "cp">()`: this mesh plus alias Alias flattening Ns... (or,
  /// with no Ns, the whole mesh as one dim named Alias; with no Alias either, PyTorch's
  /// default name, the dims' names joined by '_'). Creates the alias's communicator unless an
  /// equal one is cached. Eager mode: collective over the world (every world rank calls it,
  /// members or not), which checks that all ranks flatten alike; lazy mode: local.
  template <fixed_string Alias = detail::default_flatten_name<typename Layout::names_type, Layout::ndim>,
            fixed_string... Ns>
  auto flatten() const {
    return derive(self().layout_.template flatten<Alias, Ns...>(), "flatten", true);
  }
  /// flatten() with backend options for the new dim's communicator (PyTorch's
  /// backend_override on _flatten), as options.per_dim[Alias] at init would give. The ranks
  /// must pass equal options (part of the step's consistency check); a dim that has other
  /// options already throws mesh_error.
  template <fixed_string Alias = detail::default_flatten_name<typename Layout::names_type, Layout::ndim>,
            fixed_string... Ns>
  auto flatten(const typename Comm::options_type& backend_options) const {
    const std::string_view names[] = {Alias.view()};
    return derive(self().layout_.template flatten<Alias, Ns...>(), "flatten", true, names, &backend_options);
  }
  /// `mesh.unflatten<"dp", dm::dim<"rep", 2>, dm::dim<"shard">>()`: dim N split into New...
  /// (PyTorch _unflatten). Creates communicators only for new
  /// groups; collective as flatten.
  template <fixed_string N, dim_spec... New>
  auto unflatten() const {
    return derive(self().layout_.template unflatten<N, New...>(), "unflatten", true);
  }
  /// unflatten<N, New...>() with the new sizes given at run time (PyTorch's
  /// `_unflatten(dim, sizes, names)`; Megatron's tp, cp, pp from the command line): one size
  /// per dynamic new dim, or one per new dim, one of them possibly dm::dynamic_size (inferred),
  /// as the core's basic_mesh::unflatten(sizes...) takes them. Collective as unflatten<...>():
  /// a rank whose sizes the core refuses (not positive, a product that is not N's size, a cut
  /// PyTorch refuses) does not throw alone: the ranks agree first, and every rank throws that
  /// mesh_error, naming the ranks; ranks that pass different sizes get the mismatch, on every
  /// rank. In lazy mode the step is local, and so is the error.
  template <fixed_string N, dim_spec... New, class... I>
    requires(sizeof...(I) > 0 && (std::is_integral_v<I> && ...))
  auto unflatten(I... sizes) const {
    using derived = decltype(self().layout_.template unflatten<N, New...>(sizes...));
    auto& s = self().state("unflatten");
    std::optional<derived> l;
    std::string refused;
    try {
      l.emplace(self().layout_.template unflatten<N, New...>(sizes...));
    } catch (const mesh_error& e) {
      refused = e.what();
    }
    if (l)
      detail::mesh_runtime<Comm>::derive(s, detail::gathered_layout<derived>(*l).ref(), "unflatten", {}, nullptr);
    else  // the agreement carries this rank's refusal to every rank, which all throw it
      detail::mesh_runtime<Comm>::derive(s, detail::gathered_layout<Layout>(self().layout_).ref(), "unflatten", {},
                                         nullptr, refused);
    if (!l) throw mesh_error(refused);  // not reached: derive threw it on every rank
    return detail::make_device_mesh(*l, self().state_);
  }
  /// unflatten() with backend options for every new dim's communicator (PyTorch's
  /// backend_override on _unflatten); as flatten(backend_options).
  template <fixed_string N, dim_spec... New>
  auto unflatten(const typename Comm::options_type& backend_options) const {
    const std::string_view names[] = {New::name.view()...};
    return derive(self().layout_.template unflatten<N, New...>(), "unflatten", true, names, &backend_options);
  }
  /// This mesh's dims, then b's (PyTorch's _concatenate([a, b])): both derived from one
  /// init_device_mesh or from_comms (else mesh_error), their layouts as
  /// basic_mesh::concatenate checks them. Never creates a communicator: every dim has one.
  template <class L2>
  auto concatenate(const device_mesh<L2, Comm>& b) const {
    if (&self().state("concatenate") != &b.state("concatenate"))
      throw mesh_error("devmesh: concatenate: " + to_string(self().layout_) + " and " + to_string(b.layout_) +
                       " come from different roots (two init_device_mesh or from_comms calls)");
    return derive(self().layout_.concatenate(b.layout_), "concatenate");
  }

  /// Groups that are not a dim (PyTorch's new_subgroups_by_enumeration; Megatron's embedding
  /// groups: `mesh.subgroup<"pp">({0, -1})`, the first and last stage of each pipeline group):
  /// in every group of dim N, the members at these local ranks (negative: from the end), in
  /// that order, one communicator per group. Returns this rank's: valid where it is chosen,
  /// invalid elsewhere (non-members of the mesh too). Collective over every world rank, eager
  /// or lazy; the ranks agree on the choice first (a rank that chose otherwise, or out of
  /// range, makes every rank throw mesh_error). The caller owns the communicator; nothing is
  /// cached.
  template <fixed_string N = "">
  Comm subgroup(std::initializer_list<int> local_ranks) const {
    return subgroup(Mesh::template dim<N>, std::span<const int>(local_ranks.begin(), local_ranks.size()));
  }
  /// subgroup<N>(...) of a dim chosen at run time, with the local ranks in a span.
  Comm subgroup(dim_ref d, std::span<const int> local_ranks) const {
    const int i = self().select(d, "subgroup");
    return detail::mesh_runtime<Comm>::subgroup(*self().state_, detail::gathered_layout<Layout>(self().layout_).ref(),
                                                i, local_ranks, "subgroup");
  }
 private:
  const Mesh& self() const { return static_cast<const Mesh&>(*this); }

  /// The mesh of layout l over this mesh's state; `creating`: l's missing communicators are
  /// made first (collective), the step recorded in the flight record.
  template <class L>
  device_mesh<L, Comm> derive(const L& l, const char* what, bool creating = false,
                              std::span<const std::string_view> new_dims = {},
                              const typename Comm::options_type* backend_options = nullptr) const {
    auto& s = self().state(what);
    if (creating)
      detail::mesh_runtime<Comm>::derive(s, detail::gathered_layout<L>(l).ref(), what, new_dims, backend_options);
    return detail::make_device_mesh(l, self().state_);
  }
};

}  // namespace devmesh
