// devmesh/runtime/algorithm.hpp: the algorithms the runtime and its backends use over its
// small vectors (groups, ranks, node ids, flight dumps): detail::find, find_if, any_of,
// unique, min_element, max_element, lower_bound, clamp, and one sort, stable and
// O(n log n). The rest (std::min, std::max, std::copy, std::fill_n, std::equal, std::swap)
// is the standard's, on libstdc++ from <bits/stl_algobase.h>, which every standard container
// includes anyway. Why not <bits/stl_algo.h> (std::sort and the rest): its 6,000 lines cost
// every TU that includes the runtime 0.28 G of nvcc's instructions (0.09 G of g++), for the
// handful of loops below (docs/benchmarks.md, issue 21's include cost). Other standard
// libraries: <algorithm> for the part taken from the standard.
#pragma once
#include <cstddef>  // defines __GLIBCXX__ on libstdc++
#if defined(__GLIBCXX__) && __has_include(<bits/stl_algobase.h>)
#include <bits/stl_algobase.h>
#else
#include <algorithm>
#include <iterator>  // std::make_move_iterator
#endif
#include <type_traits>
#include <utility>
#include <vector>

namespace devmesh::detail {

struct less_than {
  template <class A, class B>
  constexpr bool operator()(const A& a, const B& b) const { return a < b; }
};

template <class It, class Pred>
constexpr It find_if(It first, It last, Pred pred) {
  for (; first != last; ++first)
    if (pred(*first)) break;
  return first;
}

template <class It, class T>
constexpr It find(It first, It last, const T& value) {
  return detail::find_if(first, last, [&](const auto& x) { return x == value; });
}

template <class It, class Pred>
constexpr bool any_of(It first, It last, Pred pred) { return detail::find_if(first, last, pred) != last; }

/// std::unique: keeps the first of each run of equal elements, returns the new end.
template <class It>
constexpr It unique(It first, It last) {
  if (first == last) return last;
  It out = first;
  for (It it = first; ++it != last;)
    if (!(*out == *it)) *++out = std::move(*it);
  return ++out;
}

/// The first smallest (Better = less_than) or, with the arguments swapped, the first largest.
template <class It, class Better>
constexpr It best_element(It first, It last, Better better) {
  It best = first;
  if (first != last)
    for (It it = first; ++it != last;)
      if (better(*it, *best)) best = it;
  return best;
}

template <class It>
constexpr It min_element(It first, It last) { return detail::best_element(first, last, less_than{}); }

template <class It>
constexpr It max_element(It first, It last) {
  return detail::best_element(first, last, [](const auto& a, const auto& b) { return b < a; });
}

/// The first element of the sorted range not less than value (std::lower_bound's comparator
/// form, which libstdc++ defines in <bits/stl_algo.h>); random-access iterators.
template <class It, class T, class Less = less_than>
constexpr It lower_bound(It first, It last, const T& value, Less less = {}) {
  for (auto n = last - first; n > 0;) {
    const auto half = n / 2;
    if (less(*(first + half), value)) {
      first += half + 1;
      n -= half + 1;
    } else {
      n = half;
    }
  }
  return first;
}

template <class T>
constexpr const T& clamp(const T& v, const T& lo, const T& hi) { return v < lo ? lo : hi < v ? hi : v; }

/// Insertion sort by adjacent swaps: stable (an element passes only strictly greater ones).
template <class It, class Less>
constexpr void insertion_sort(It first, It last, Less& less) {
  if (first == last) return;
  for (It i = first; ++i != last;)
    for (It j = i; j != first && less(*j, *(j - 1)); --j) std::iter_swap(j, j - 1);
}

/// One bottom-up merge pass: runs of `width` in `in` merged pairwise into `out`, ties from the left.
template <class T, class Less>
void merge_pass(T* in, T* out, std::ptrdiff_t n, std::ptrdiff_t width, Less& less) {
  for (std::ptrdiff_t lo = 0; lo < n; lo += 2 * width) {
    const std::ptrdiff_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
    std::ptrdiff_t i = lo, j = mid, k = lo;
    while (i < mid && j < hi) out[k++] = std::move(less(in[j], in[i]) ? in[j++] : in[i++]);
    while (i < mid) out[k++] = std::move(in[i++]);
    while (j < hi) out[k++] = std::move(in[j++]);
  }
}

/// Stable sort of a random-access range: insertion sort of runs of 16, then merge passes
/// through a buffer (O(n log n) comparisons; n elements of extra memory when n > 16).
template <class It, class Less = less_than>
void sort(It first, It last, Less less = {}) {
  using T = std::remove_cvref_t<decltype(*first)>;
  constexpr std::ptrdiff_t run = 16;
  const std::ptrdiff_t n = last - first;
  for (std::ptrdiff_t lo = 0; lo < n; lo += run)
    detail::insertion_sort(first + lo, first + std::min(lo + run, n), less);
  if (n <= run) return;
  std::vector<T> a(std::make_move_iterator(first), std::make_move_iterator(last)), b(a.size());
  for (std::ptrdiff_t width = run; width < n; width *= 2) {
    detail::merge_pass(a.data(), b.data(), n, width, less);
    a.swap(b);
  }
  std::move(a.begin(), a.end(), first);
}

}  // namespace devmesh::detail
