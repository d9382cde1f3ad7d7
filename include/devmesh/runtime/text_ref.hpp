// devmesh/runtime/text_ref.hpp: a message made only when it is needed (a dim's description for
// an error), passed by reference without its type. The code such a message passes through
// (tracked_call, the watchdogs) is then compiled once per backend rather than once per call
// site: each lambda type would otherwise instantiate all of it again.
#pragma once
#include <string>
#include <type_traits>

namespace devmesh::detail {

/// A reference to a callable returning std::string, called only on failure (cold). It must
/// outlive the call it is passed to, as a lambda argument of that call does.
class text_ref {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, text_ref> && std::is_invocable_r_v<std::string, const F&>)
  text_ref(const F& f) noexcept  // NOLINT: implicit, as a function_ref
      : obj_(&f), make_([](const void* o) -> std::string { return (*static_cast<const F*>(o))(); }) {}
  /// `make(obj)`, for an object that describes itself through a plain function.
  text_ref(const void* obj, std::string (*make)(const void*)) noexcept : obj_(obj), make_(make) {}
  /// The message.
  std::string operator()() const { return make_(obj_); }

 private:
  const void* obj_;
  std::string (*make_)(const void*);
};

}  // namespace devmesh::detail
