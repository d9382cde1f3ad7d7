// devmesh/runtime/owned.hpp: the runtime's owning handles, the part of std::unique_ptr and
// std::shared_ptr it uses, without <memory>: C++20's <bits/unique_ptr.h> brings <ostream>,
// and the two cost +0.40 G of g++ instructions in every TU that includes devmesh.hpp
// (docs/benchmarks.md, issue 21 item 5). One object or array with one owner (owned<T>,
// owned<T[]>), one object shared by its copies (shared: an atomic count, so copies may die
// on any thread), and anything kept alive behind a type-erased handle (kept). No custom
// deleters, no weak handles, no aliasing: the runtime needs none.
#pragma once
#include <cstddef>
#include <type_traits>
#include <utility>

#include "sync.hpp"

namespace devmesh::detail {

/// One T, or n Ts when T is an array type U[], on the heap with one owner (unique_ptr's part
/// the runtime uses, for objects and for arrays).
template <class T>
class owned {
  using element = std::remove_extent_t<T>;
  static constexpr bool array = std::is_unbounded_array_v<T>;
  element* p_ = nullptr;
  explicit owned(element* p) noexcept : p_(p) {}

 public:
  /// A value-initialized T, or one made from args (make_unique).
  template <class... Args>
    requires(!array)
  static owned make(Args&&... args) {
    return owned(new T(std::forward<Args>(args)...));
  }
  /// n value-initialized elements, zeros for scalars (make_unique<U[]>).
  static owned zeroed(std::size_t n)
    requires array
  {
    return owned(new element[n]());
  }
  /// n default-initialized elements, to be overwritten (make_unique_for_overwrite<U[]>).
  static owned for_overwrite(std::size_t n)
    requires array
  {
    return owned(new element[n]);
  }
  owned() noexcept = default;
  owned(std::nullptr_t) noexcept {}
  owned(owned&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  owned& operator=(owned o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~owned() {
    if constexpr (array)
      delete[] p_;
    else
      delete p_;
  }
  element* get() const noexcept { return p_; }
  element& operator*() const noexcept
    requires(!array)
  {
    return *p_;
  }
  element* operator->() const noexcept
    requires(!array)
  {
    return p_;
  }
  element& operator[](std::size_t i) const noexcept
    requires array
  {
    return p_[i];
  }
  explicit operator bool() const noexcept { return p_ != nullptr; }
};

/// One T on the heap, owned by all its copies (shared_ptr<T>'s part the runtime uses): the
/// last copy to die, on whatever thread, destroys it. Copies compare equal when they share.
template <class T>
class shared {
  struct node {
    atomic_word<long> copies{1};
    T value;
    template <class... Args>
    explicit node(Args&&... args) : value(std::forward<Args>(args)...) {}
  };
  node* n_ = nullptr;
  explicit shared(node* n) noexcept : n_(n) {}

 public:
  /// A value-initialized T, or one made from args (make_shared).
  template <class... Args>
  static shared make(Args&&... args) {
    return shared(new node(std::forward<Args>(args)...));
  }
  shared() noexcept = default;
  shared(const shared& o) noexcept : n_(o.n_) {
    if (n_) n_->copies.fetch_add(1, word_order::relaxed);
  }
  shared(shared&& o) noexcept : n_(std::exchange(o.n_, nullptr)) {}
  shared& operator=(shared o) noexcept {
    std::swap(n_, o.n_);
    return *this;
  }
  ~shared() {
    // acq_rel: the last copy sees every other copy's writes before it destroys the value.
    if (n_ && n_->copies.fetch_sub(1, word_order::acq_rel) == 1) delete n_;
  }
  T* get() const noexcept { return n_ ? &n_->value : nullptr; }
  T& operator*() const noexcept { return n_->value; }
  T* operator->() const noexcept { return &n_->value; }
  explicit operator bool() const noexcept { return n_ != nullptr; }
  friend bool operator==(const shared& a, const shared& b) noexcept { return a.n_ == b.n_; }
};

/// Any value moved to the heap and kept alive until this handle dies (shared_ptr<void>'s use
/// in the runtime: what MPI may still read or write after a call that timed out).
class kept {
  void* p_ = nullptr;
  void (*drop_)(void*) noexcept = nullptr;

 public:
  template <class V>
  static kept of(V&& v) {
    using value = std::remove_cvref_t<V>;
    kept k;
    k.p_ = new value(std::forward<V>(v));
    k.drop_ = [](void* p) noexcept { delete static_cast<value*>(p); };
    return k;
  }
  kept() noexcept = default;
  kept(kept&& o) noexcept : p_(std::exchange(o.p_, nullptr)), drop_(o.drop_) {}
  kept& operator=(kept o) noexcept {
    std::swap(p_, o.p_);
    std::swap(drop_, o.drop_);
    return *this;
  }
  ~kept() {
    if (p_) drop_(p_);
  }
};

}  // namespace devmesh::detail
