// devmesh/runtime/range_access.hpp: std::ranges::begin/end/data/size and the iterator concepts
// (std::input_iterator, std::contiguous_iterator, std::iter_reference_t...), which the typed
// collectives and topology's dim-name ranges are written with. On libstdc++ from
// <bits/ranges_base.h>, which defines them: <iterator> adds the stream iterators and, through
// them, <streambuf> and the locale's base, 0.19 G of nvcc's instructions (0.07 G of g++) in
// every TU that includes the runtime (docs/benchmarks.md, issue 21's include cost). Other
// standard libraries: <iterator>.
#pragma once
#include <cstddef>  // defines __GLIBCXX__ on libstdc++
#if defined(__GLIBCXX__) && __has_include(<bits/ranges_base.h>)
#include <initializer_list>
#include <bits/stl_iterator.h>  // what <bits/ranges_base.h> needs first, as <span> includes it
#include <bits/ranges_base.h>
#else
#include <iterator>
#endif
