// devmesh/runtime/init.hpp: init_device_mesh, the device mesh of a layout over a world
// communicator (PyTorch's init_device_mesh): one bounded, agreed step after another, so a
// rank that fails or disagrees makes every rank throw instead of hanging. The steps are the
// compiled runtime's (mesh_runtime<Comm>::init); this header builds the layout and its
// description, the typed part.
//
//   auto mesh = dm::init_device_mesh<mesh3d>(world);   // collective over world
#pragma once
#include <exception>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "backend.hpp"
#include "device_mesh.hpp"
#include "mesh_runtime.hpp"
#include "options.hpp"

namespace devmesh {

namespace detail {

/// `world` as a new root takes it: borrowed (an lvalue: the caller keeps it alive) or handed
/// over (an rvalue).
template <class W, communicator C = std::remove_cvref_t<W>>
world_arg<C> world_of(W&& world) {
  if constexpr (std::is_lvalue_reference_v<W>) return {&world, nullptr};
  else return {nullptr, &world};
}

/// The layout `make()` builds, gathered for the runtime; where building it throws, no layout
/// and why (every rank then throws, once the ranks agree).
template <class Layout>
struct built_layout {
  std::optional<Layout> layout;
  std::optional<gathered_layout<Layout>> values;
  std::string error;

  template <class Make>
  explicit built_layout(Make&& make) {
    try {
      values.emplace(layout.emplace(make()));
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  /// The layout as the runtime takes it (null when it could not be built).
  std::optional<layout_ref> ref() const {
    if (values) return values->ref();
    return std::nullopt;
  }
};

template <class Layout, class W, class C, class Make>
device_mesh<Layout, C> init_impl(W&& world, const Make& make, device_mesh_options<C> options) {
  const built_layout<Layout> built(make);
  const std::optional<layout_ref> ref = built.ref();
  auto st = mesh_runtime<C>::init(world_of(std::forward<W>(world)), std::move(options), ref ? &*ref : nullptr,
                                  built.error);
  return make_device_mesh(*built.layout, std::move(st));  // the runtime threw everywhere unless every rank built it
}

}  // namespace detail

/// Collective over `world`: the device mesh of `layout`, one communicator per dim (eager)
/// created with one split per dim per rank. Pass world as an lvalue to borrow it (it must
/// outlive every handle) or as an rvalue to hand it over. Throws mesh_error on every rank
/// if the ranks disagree on the mesh, or if it does not fit in the world.
template <class Layout, class W, communicator C = std::remove_cvref_t<W>>
device_mesh<Layout, C> init_device_mesh(W&& world, Layout layout, device_mesh_options<C> options = {}) {
  return detail::init_impl<Layout>(std::forward<W>(world), [&] { return layout; }, std::move(options));
}

/// As above for a mesh type: static (it may be smaller than the world, as in PyTorch: the
/// ranks past its size are not members), or with one dynamic dim inferred from the world size.
template <class Layout, class W, communicator C = std::remove_cvref_t<W>>
device_mesh<Layout, C> init_device_mesh(W&& world, device_mesh_options<C> options = {}) {
  const int n = world.size();
  return detail::init_impl<Layout>(
      std::forward<W>(world),
      [n]() -> Layout {
        (void)n;  // unused for static layouts (clang's -Wunused-lambda-capture)
        if constexpr (Layout::is_static)
          return Layout{};
        else if constexpr (requires { Layout::for_world(n); })
          return Layout::for_world(n);
        else
          return Layout{};
      },
      std::move(options));
}

}  // namespace devmesh
