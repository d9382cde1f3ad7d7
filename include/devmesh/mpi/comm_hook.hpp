// devmesh/mpi/comm_hook.hpp: the type of comm_options::on_create, a copyable callable of
// void(MPI_Comm) or empty. It was std::function<void(MPI_Comm)>, which it replaces wherever a
// hook is assigned, tested or called; it is its own type because <functional> cost every TU
// that includes the MPI runtime +0.24 G instructions of g++ (docs/benchmarks.md).
#pragma once
#include <cstddef>
#include <type_traits>
#include <utility>

#include "native.hpp"

#include "../core/diagnostics.hpp"

namespace devmesh::mpi {

/// A copy of a callable of void(MPI_Comm) (a lambda, a function, a std::function), or empty:
/// default-constructed, from nullptr, or from an empty std::function or null function pointer
/// (as std::function would be). Calling an empty hook throws comm_error.
class comm_hook {
 public:
  /// Empty.
  comm_hook() noexcept = default;
  /// Empty (on_create = nullptr).
  comm_hook(std::nullptr_t) noexcept {}  // NOLINT: implicit, as std::function's
  /// Holds a copy of f.
  template <class F, class D = std::decay_t<F>>
    requires(!std::is_same_v<D, comm_hook> && std::is_invocable_v<D&, MPI_Comm> && std::is_copy_constructible_v<D>)
  comm_hook(F&& f) {  // NOLINT: implicit, as std::function's
    if constexpr (std::is_constructible_v<bool, const D&>)
      if (!static_cast<bool>(f)) return;  // an empty std::function, a null function pointer
    fn_ = new D(std::forward<F>(f));
    ops_ = &ops_of<D>;
  }
  /// A copy of o's callable (empty if o is).
  comm_hook(const comm_hook& o) : fn_(o.fn_ ? o.ops_->copy(o.fn_) : nullptr), ops_(o.ops_) {}
  /// Takes o's callable; o becomes empty.
  comm_hook(comm_hook&& o) noexcept : fn_(std::exchange(o.fn_, nullptr)), ops_(std::exchange(o.ops_, nullptr)) {}
  /// Holds o's callable (copy-and-swap: a lambda, nullptr, another hook).
  comm_hook& operator=(comm_hook o) noexcept {
    std::swap(fn_, o.fn_);
    std::swap(ops_, o.ops_);
    return *this;
  }
  /// Destroys the callable.
  ~comm_hook() {
    if (fn_) ops_->destroy(fn_);
  }

  /// True when it holds a callable.
  explicit operator bool() const noexcept { return fn_ != nullptr; }
  /// Calls the callable with c; comm_error when empty.
  void operator()(MPI_Comm c) const {
    if (!fn_) throw comm_error("devmesh: mpi: an empty comm_hook was called");
    ops_->call(fn_, c);
  }

 private:
  struct ops {
    void (*call)(void*, MPI_Comm);
    void* (*copy)(const void*);
    void (*destroy)(void*) noexcept;
  };
  template <class D>
  static constexpr ops ops_of = {[](void* f, MPI_Comm c) { (*static_cast<D*>(f))(c); },
                                 [](const void* f) -> void* { return new D(*static_cast<const D*>(f)); },
                                 [](void* f) noexcept { delete static_cast<D*>(f); }};

  void* fn_ = nullptr;
  const ops* ops_ = nullptr;
};

}  // namespace devmesh::mpi
