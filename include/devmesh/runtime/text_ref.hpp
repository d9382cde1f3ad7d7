// devmesh/runtime/text_ref.hpp: a callable passed by reference without its type (C++26's
// std::function_ref, for callables of no arguments). Code such a callable passes through
// (tracked_call, the watchdogs, the polling of devmesh's own steps) is then written once,
// compiled once per backend or once in all, rather than once per lambda type.
#pragma once
#include <string>
#include <type_traits>

namespace devmesh::detail {

/// A reference to a callable returning R, taking nothing. It must outlive the call it is
/// passed to, as a lambda argument of that call does.
template <class R>
class call_ref {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, call_ref> && std::is_invocable_r_v<R, F&>)
  call_ref(F&& f) noexcept  // NOLINT: implicit, as a function_ref
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o) -> R { return (*static_cast<std::remove_reference_t<F>*>(o))(); }) {}
  /// `make(obj)`, for an object that answers through a plain function.
  call_ref(const void* obj, R (*make)(const void*)) noexcept
      : obj_(const_cast<void*>(obj)), plain_(make) {}
  /// The call.
  R operator()() const { return plain_ ? plain_(obj_) : call_(obj_); }

 private:
  void* obj_;
  R (*call_)(void*) = nullptr;
  R (*plain_)(const void*) = nullptr;
};

/// A message made only when it is needed (a dim's description for an error).
using text_ref = call_ref<std::string>;

}  // namespace devmesh::detail
