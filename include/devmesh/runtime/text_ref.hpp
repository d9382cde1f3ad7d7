// devmesh/runtime/text_ref.hpp: a callable passed by reference without its type (C++26's
// std::function_ref). Code such a callable passes through (tracked_call, the watchdogs, the
// polling of devmesh's own steps, the compiled runtime's entry points) is then written once and
// compiled once per backend, or once in all, rather than once per lambda type.
#pragma once
#include <string>
#include <type_traits>

namespace devmesh::detail {

template <class Signature>
class function_ref;

/// A reference to a callable of R(A...). It must outlive the call it is passed to, as a lambda
/// argument of that call does.
template <class R, class... A>
class function_ref<R(A...)> {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, function_ref> && std::is_invocable_r_v<R, F&, A...>)
  function_ref(F&& f) noexcept  // NOLINT: implicit, as std::function_ref
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, A... a) -> R { return (*static_cast<std::remove_reference_t<F>*>(o))(static_cast<A>(a)...); }) {}
  /// `fn(obj, a...)`, for an object that answers through a plain function.
  function_ref(const void* obj, R (*fn)(const void*, A...)) noexcept : obj_(const_cast<void*>(obj)), plain_(fn) {}
  /// The call.
  R operator()(A... a) const { return plain_ ? plain_(obj_, static_cast<A>(a)...) : call_(obj_, static_cast<A>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, A...) = nullptr;
  R (*plain_)(const void*, A...) = nullptr;
};

/// A callable of no arguments returning R.
template <class R>
using call_ref = function_ref<R()>;

/// A message made only when it is needed (a dim's description for an error).
using text_ref = call_ref<std::string>;

}  // namespace devmesh::detail
