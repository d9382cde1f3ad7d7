// devmesh/runtime/algorithm.hpp: the standard algorithms the runtime and its backends use
// (std::sort, std::find, std::copy_n, std::min, std::max, std::equal, ...). On libstdc++ from
// the headers that define them, <bits/stl_algobase.h> and <bits/stl_algo.h>: C++20's
// <algorithm> adds the std::ranges algorithms (<bits/ranges_algo.h>) and the parallel
// overloads' declarations, which devmesh does not call, for 0.16 G more instructions of g++
// in every TU that includes the runtime (docs/benchmarks.md, issue 21's include cost). Other
// standard libraries: <algorithm>.
#pragma once
#include <cstddef>  // defines __GLIBCXX__ on libstdc++
#if defined(__GLIBCXX__) && __has_include(<bits/stl_algo.h>)
#include <bits/stl_algobase.h>
#include <bits/stl_algo.h>
#else
#include <algorithm>
#endif
