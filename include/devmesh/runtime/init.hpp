// devmesh/runtime/init.hpp: init_device_mesh, the device mesh of a layout over a world
// communicator (PyTorch's init_device_mesh): one bounded, agreed step after another, so a
// rank that fails or disagrees makes every rank throw instead of hanging.
//
//   auto mesh = dm::init_device_mesh<mesh3d>(world);   // collective over world
#pragma once
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "backend.hpp"
#include "consensus.hpp"
#include "create_comms.hpp"
#include "device_mesh.hpp"
#include "init_steps.hpp"
#include "mesh_state.hpp"
#include "options.hpp"
#include "topology_step.hpp"

namespace devmesh {

namespace detail {

template <class Layout, class W, class C, class Make>
device_mesh<Layout, C> init_impl(W&& world, const Make& make, device_mesh_options<C> options) {
  constexpr std::string_view step = "init_device_mesh";
  local_checks<Layout> local;  // made while the control communicator is being created
  auto st = new_state<C>(std::forward<W>(world), std::move(options), step,
                         [&](const mesh_state<C>& s) { local = check_locally<Layout>(s, make, step); });
  const deadline dl = st->start_step();
  check_layout(*st, local, step, dl);
  const std::optional<Layout>& layout = local.layout;
  st->place(layout->root_size(), settle_placement(*st, *layout, step, dl));
  st->keep_root(*layout);
  if (st->options.lazy) {
    // The parent of the lazy splits: the mesh's members, ranked by position (numbering::position).
    std::string failed;
    try {
      st->lazy_root.emplace(st->control->split(st->is_member() ? 0 : no_color, st->position, {}));
    } catch (const std::exception& e) {
      failed = e.what();
    }
    agree(*st->control, failed, "init_device_mesh: creating the lazy mesh's communicator", dl);
    ++st->created;
  }
  ensure_all(*st, *layout, step, true);  // checked above
  return make_device_mesh(*layout, std::move(st));
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
